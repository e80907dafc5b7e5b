//! The receive side: a NetSparse frame is validated by the Deconcatenator,
//! net_to_host runs (through the engine's per-PR path runner) once for the
//! packet and once per PR; reads go to the
//! server units, responses retire their pending entry and are written to
//! host memory by DMA.

use netsparse_engine::prpath::{PrMeta, PrOutcome};
use netsparse_externs::concat::CqKey;
use netsparse_externs::wire::{PrType, MAX_NODE_ID};
use netsparse_externs::Time;

use super::server::PendingResponse;
use super::tx::push_pr;
use super::Nic;
use crate::core::PrCtx;
use crate::memory::HostMemory;
use crate::program::{NicProgram, RIG_COMMAND, RIG_NODE, RIG_OUTCOME, RIG_UNIT};

/// Responses ahead of the current one whose retirement state is
/// prefetched.
const PREFETCH_PRS: usize = 6;

impl<M: HostMemory> Nic<M> {
    pub(super) fn rx(&mut self, now: Time, port: u32, frame: &[u8]) {
        let d = match self.deconcat.frame(frame) {
            Ok(d) => d,
            Err(e) => {
                tracing::debug!(node = self.cfg.node, "dropped a received frame: {e}");
                return;
            }
        };
        let concat = d.concat;
        let stats = &mut self.core.stats;
        stats.rx_packets += 1;
        stats.rx_prs += u64::from(concat.num_prs);
        stats.rx_bytes += frame.len() as u64;
        if concat.pr_type == PrType::Response {
            stats.rx_payload_bytes += u64::from(concat.num_prs) * u64::from(concat.prop_len);
        }
        let node = self.cfg.node;
        self.core.ctx = PrCtx {
            now,
            ..PrCtx::default()
        };
        let md = PrMeta {
            pr_type: u64::from(concat.pr_type.as_u16()),
            dst: u64::from(concat.dst),
            prop_len: u64::from(concat.prop_len),
            ingress_port: u64::from(port),
            egress_port: 0,
        };
        let NicProgram { program, n2h, .. } = &mut self.prog;
        let set_node = |n: &mut [u64], x: &[usize]| n[x[RIG_NODE]] = u64::from(node);
        if !n2h.begin(program, &mut self.st, md, set_node, &mut self.core) {
            self.core.stats.packets_dropped += 1;
            return;
        }
        let clients = self.cfg.client_units;
        // A response retires state spread over the client units' tables:
        // ask for the state of the responses ahead while this one runs.
        let responses = concat.pr_type == PrType::Response;
        let all = d.prs.clone();
        if responses {
            for a in (0..PREFETCH_PRS).filter_map(|i| all.get(i)) {
                self.core.prefetch_response(a.tid, a.req_id, a.idx);
            }
        }
        for (i, v) in d.prs.enumerate() {
            if let Some(a) = all.get(i + PREFETCH_PRS).filter(|_| responses) {
                self.core.prefetch_response(a.tid, a.req_id, a.idx);
            }
            let server = if concat.pr_type == PrType::Read {
                let sv = self.next_server;
                self.next_server = (self.next_server + 1) % self.servers.len().max(1);
                Some(sv)
            } else {
                None
            };
            let unit = match server {
                Some(sv) => clients as usize + sv,
                None => usize::from(v.tid),
            };
            self.core.payload.clear();
            self.core.payload.extend_from_slice(v.payload);
            self.core.ctx = PrCtx {
                now,
                unit: if server.is_some() { u16::MAX } else { v.tid },
                ..PrCtx::default()
            };
            let rig = |n: &mut [u64], x: &[usize]| {
                n[x[RIG_NODE]] = u64::from(node);
                n[x[RIG_UNIT]] = unit as u64 & 0xFFFF;
                n[x[RIG_COMMAND]] = 0;
                n[x[RIG_OUTCOME]] = 0;
            };
            let NicProgram { program, n2h, .. } = &mut self.prog;
            let out = n2h.run_pr(program, &mut self.st, &v.repr(), rig, &mut self.core);
            self.after_n2h(now, out, server);
            self.apply_effects(now);
        }
    }

    /// net_to_host's Concatenate for the PR just processed.
    pub(super) fn after_n2h(&mut self, now: Time, out: PrOutcome, server: Option<usize>) {
        if out.dropped {
            return;
        }
        let pr = out.pr;
        let dst = out.md.dst;
        let prop_len = out.md.prop_len as u32;
        let ty = PrType::from_u16(out.md.pr_type as u16);
        let served = self.core.ctx.served;
        let plen = self.core.payload.len();
        let ok = dst <= u64::from(MAX_NODE_ID)
            && match ty {
                Ok(PrType::Read) => plen == 0 && !served,
                Ok(PrType::Response) => plen == prop_len as usize,
                Err(_) => false,
            };
        if !ok {
            self.core.stats.program_errors += 1;
            return;
        }
        let Ok(ty) = ty else { return };
        if served {
            // The response leaves once its property has been read by DMA.
            let sv = server
                .unwrap_or(0)
                .min(self.servers.len().saturating_sub(1));
            let su = &mut self.servers[sv];
            let start = now.max(su.free_at);
            su.free_at = start + self.clock.cycles(1);
            su.queue.push_back(PendingResponse {
                ready: start + self.cfg.dma_read(u64::from(prop_len)),
                pr,
                dst: dst as u32,
                prop_len,
            });
            su.payloads.extend(self.core.payload.iter());
            self.refresh_server(sv);
            return;
        }
        let key = CqKey {
            pr_type: ty,
            dst: dst as u32,
            port: 0,
        };
        push_pr(
            &mut self.concat,
            &mut self.tx,
            &mut self.frame,
            &mut self.framer,
            &mut self.core.stats,
            &self.cfg,
            now,
            key,
            prop_len,
            &pr,
            &self.core.payload,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{deliver, from_peer, node0, run, PROP};
    use crate::memory::is_property;
    use crate::verbs::CompletionStatus;
    use crate::workload::{batch_commands, DEST_BASE};
    use netsparse_externs::wire::{Frame, PrRepr, PrType};
    use netsparse_externs::Time;

    #[test]
    fn a_response_writes_the_property_and_completes_the_command() {
        let mut nic = node0(&[70], |_| {});
        nic.post_rig(Time::ZERO, batch_commands(1, 1, PROP)[0])
            .expect("accepted");
        let sent = run(&mut nic, Time::from_us(5));
        let f = Frame::parse(&sent[0].1).expect("a read frame");
        let read = f.prs().next().expect("one PR").repr();
        assert_eq!(read.idx, 70);
        deliver(
            &mut nic,
            Time::from_us(6),
            &from_peer(PrType::Response, &[read]),
        );
        run(&mut nic, Time::from_us(50));
        let c = nic.poll_cq().expect("completed");
        assert_eq!(c.status, CompletionStatus::Success);
        let data = nic.memory().data(DEST_BASE).expect("destination");
        let slot = &data[70 * PROP as usize..71 * PROP as usize];
        assert!(is_property(70, slot));
        let s = nic.stats();
        assert_eq!((s.responses_received, s.properties_written), (1, 1));
    }

    #[test]
    fn unknown_duplicate_and_malformed_frames_are_counted_and_dropped() {
        let mut nic = node0(&[], |_| {});
        let stray = PrRepr {
            src: 0,
            tid: 0,
            idx: 77,
            req_id: 9,
        };
        let f = from_peer(PrType::Response, &[stray]);
        deliver(&mut nic, Time::from_us(1), &f);
        deliver(&mut nic, Time::from_us(2), &f[..f.len() - 3]);
        deliver(&mut nic, Time::from_us(3), &[0u8; 10]);
        run(&mut nic, Time::from_us(50));
        let s = nic.stats();
        assert_eq!(s.responses_unknown, 1, "{}", s.summary());
        assert_eq!(s.rx_malformed, 2, "{}", s.summary());
        assert_eq!(s.properties_written, 0);
    }
}
