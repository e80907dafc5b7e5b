//! The way out of the NetSparse switch: the Concatenator's flushed queues
//! become frames (`build`), wait out the cache latency in their pipe's FIFO,
//! cross crossbar 2 (`release`, `service`, `flush_all`) and run the egress
//! pipe of their port (`egress`), the same pipe that passthrough packets run.

use netsparse_externs::concat::Flushed;
use netsparse_externs::framer::Framer;
use netsparse_externs::{Outputs, Time};

use netsparse_engine::exec::ParseEnd;
use netsparse_engine::ControlPlane;

use super::{BuildCounters, Built, NsSwitch, Origin, Pipe, ORIGINATED_PORT};
use std::collections::VecDeque;

/// Build the packet of a flushed Concatenation Queue into a pooled buffer
/// and queue it (due at the flush time plus the cache latency).
pub(super) fn build(
    f: Flushed<'_>,
    o: &Origin,
    framer: &mut Framer,
    bc: &mut BuildCounters,
    pool: &mut Vec<Vec<u8>>,
    built: &mut VecDeque<Built>,
) {
    let mut frame = pool.pop().unwrap_or_default();
    frame.clear();
    match framer.frame(&f, &mut frame) {
        Ok(_) => {
            bc.prs_out += u64::from(f.num_prs);
            bc.packets += 1;
            if o.trace {
                tracing::info!(
                    "queue ({:?}, dst {}, port {}) left ({:?}) with {} PRs",
                    f.key.pr_type,
                    f.key.dst,
                    f.key.port,
                    f.reason,
                    f.num_prs
                );
            }
            built.push_back(Built {
                due: f.at + o.latency,
                port: f.key.port,
                prs: f.num_prs,
                frame,
            });
        }
        Err(e) => {
            // Unreachable: destinations are checked per PR and every PR fits.
            bc.unbuildable_prs += u64::from(f.num_prs);
            tracing::warn!("cannot build the packet of queue {:?}: {e}", f.key);
            pool.push(frame);
        }
    }
}

impl NsSwitch {
    /// Flush every Concatenation Queue now (reason `forced`) and send every
    /// waiting packet to `out` at `now`, e.g. at the end of a simulation.
    pub fn flush_all(&mut self, now: Time, out: &mut Outputs) {
        let o = self.origin;
        for m in 0..self.pipes.len() {
            let Pipe {
                concat,
                built,
                pool,
                framer,
                bc,
                ..
            } = &mut self.pipes[m];
            concat.flush_all(|f| build(f, &o, framer, bc, pool, built));
            self.release(m, Time::MAX, now, out);
        }
    }

    /// Send the built packets of pipe `m` due by `due` through crossbar 2
    /// and their egress pipes, at `now`.
    ///
    /// Inlined down to the check of the pipe's first packet: most calls
    /// (every pipe, on every packet and timer) find nothing due, and a
    /// call of the loop costs more than that check.
    #[inline]
    pub(super) fn release(&mut self, m: usize, due: Time, now: Time, out: &mut Outputs) {
        if self.pipes[m].built.front().is_some_and(|b| b.due <= due) {
            self.release_due(m, due, now, out);
        }
    }

    /// The loop of [`NsSwitch::release`], once a packet is due.
    #[inline(never)]
    fn release_due(&mut self, m: usize, due: Time, now: Time, out: &mut Outputs) {
        while self.pipes[m].built.front().is_some_and(|b| b.due <= due) {
            let Some(mut b) = self.pipes[m].built.pop_front() else {
                break;
            };
            if self.cfg.trace {
                tracing::info!(
                    "crossbar 2: built packet ({} bytes) to port {}",
                    b.frame.len(),
                    b.port
                );
            }
            std::mem::swap(&mut self.est.frame, &mut b.frame);
            self.egress(now, b.port, ORIGINATED_PORT, out);
            std::mem::swap(&mut self.est.frame, &mut b.frame);
            self.pipes[m].pool.push(b.frame);
        }
    }

    /// Service every pipe's timers at `now`.
    pub(super) fn service(&mut self, now: Time, out: &mut Outputs) {
        let o = self.origin;
        let shifted = now.saturating_sub(o.latency);
        for m in 0..self.pipes.len() {
            let Pipe {
                concat,
                built,
                pool,
                framer,
                bc,
                ..
            } = &mut self.pipes[m];
            if now >= o.latency && concat.next_deadline().is_some_and(|d| d <= shifted) {
                concat.on_timer(shifted, |f| build(f, &o, framer, bc, pool, built));
            }
            self.release(m, now, now, out);
        }
    }

    /// Run the egress pipe of `port` over `self.est.frame`.
    pub(super) fn egress(&mut self, now: Time, port: u32, in_port: u32, out: &mut Outputs) {
        let g = self.cfg.pipe_of(port) as usize;
        let eg = self.eg;
        let b = self.b;
        let st = &mut self.est;
        st.reset();
        let len = st.frame.len() as u128;
        st.set(eg.ingress_port, u128::from(in_port));
        st.set(eg.egress_spec, u128::from(port));
        st.set(eg.egress_port, u128::from(port));
        st.set(eg.packet_length, len);
        self.prog.set_now(now);
        let engine = self.prog.engine_mut();
        if let ParseEnd::Reject(e) = engine.parse(st, b.egress_parser) {
            if let Some(e) = e {
                st.set(eg.parser_error, u128::from(e));
            }
            self.pipes[g].c.egress_parser_errors += 1;
        }
        engine.control(st, b.egress);
        if st.get(eg.drop) != 0 {
            if self.cfg.trace {
                tracing::info!("dropped by egress (port {port})");
            }
            self.pipes[g].c.egress_drops += 1;
            return;
        }
        let n = out.push_with(port, |buf| {
            let start = buf.len();
            engine.deparse(st, b.egress_deparser, buf);
            buf.len() - start
        });
        if n == 0 {
            self.pipes[g].c.egress_drops += 1;
            return;
        }
        let c = &mut self.pipes[g].c;
        c.packets_out += 1;
        c.bytes_out += n as u64;
        if self.cfg.trace {
            tracing::info!("sent on port {port} ({n} bytes)");
        }
        if self.cfg.dump_bytes > 0 {
            if let Some((_, bytes)) = out.iter().last() {
                self.dump("out", port, bytes);
            }
        }
    }
}
