//! The receive side: a NetSparse frame is validated by the Deconcatenator,
//! net_to_host runs once for the packet and once per PR; reads go to the
//! server units, responses retire their pending entry and are written to
//! host memory by DMA.

use netsparse_engine::program::RunEnd;
use netsparse_externs::concat::CqKey;
use netsparse_externs::wire::{PrRepr, PrType, MAX_NODE_ID};
use netsparse_externs::Time;

use super::server::PendingResponse;
use super::tx::push_pr;
use super::Nic;
use crate::core::PrCtx;
use crate::memory::HostMemory;

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
        let s = self.prog.n2h_slots;
        let node = u128::from(self.cfg.node);
        let st = &mut self.st;
        self.prog.program.reset(st);
        let md = [
            (s.pr_type, u128::from(concat.pr_type.as_u16())),
            (s.dst, u128::from(concat.dst)),
            (s.prop_len, u128::from(concat.prop_len)),
            (s.ingress_port, u128::from(port)),
            (s.egress_port, 0),
            (s.drop, 0),
        ];
        for (slot, v) in md {
            st.set(slot, v);
        }
        st.set(s.node, node);
        self.core.ctx = PrCtx {
            now,
            ..PrCtx::default()
        };
        if !self.prog.n2h_packet_empty {
            let end = self
                .prog
                .program
                .run(&mut self.st, self.prog.n2h_packet, &mut self.core);
            if end == RunEnd::Exited || self.st.get(s.drop) != 0 {
                self.core.stats.packets_dropped += 1;
                return;
            }
        }
        // The per-PR metadata starts from the packet's, as the per-packet part left it.
        let md = [
            (s.pr_type, self.st.get(s.pr_type)),
            (s.dst, self.st.get(s.dst)),
            (s.prop_len, self.st.get(s.prop_len)),
            (s.ingress_port, self.st.get(s.ingress_port)),
            (s.egress_port, self.st.get(s.egress_port)),
            (s.drop, 0),
        ];
        let clients = self.cfg.client_units;
        if let Some(h) = s.pr_header {
            self.prog.program.set_header_valid(&mut self.st, h, true);
        }
        for v in d.prs {
            let st = &mut self.st;
            for (slot, x) in md {
                st.set(slot, x);
            }
            st.set(s.src, u128::from(v.src));
            st.set(s.tid, u128::from(v.tid));
            st.set(s.idx, u128::from(v.idx));
            st.set(s.req_id, u128::from(v.req_id));
            st.set(s.node, node);
            st.set(s.command, 0);
            st.set(s.outcome, 0);
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
            st.set(s.unit, unit as u128);
            self.core.payload.clear();
            self.core.payload.extend_from_slice(v.payload);
            self.core.ctx = PrCtx {
                now,
                unit: if server.is_some() { u16::MAX } else { v.tid },
                ..PrCtx::default()
            };
            let end = self
                .prog
                .program
                .run(&mut self.st, self.prog.n2h_pr, &mut self.core);
            self.after_n2h(now, end, server);
            self.apply_effects(now);
        }
    }

    /// net_to_host's Concatenate for the PR just processed.
    pub(super) fn after_n2h(&mut self, now: Time, end: RunEnd, server: Option<usize>) {
        let s = self.prog.n2h_slots;
        let st = &self.st;
        if end == RunEnd::Exited || st.get(s.drop) != 0 {
            return;
        }
        let pr = PrRepr {
            src: st.get(s.src) as u32,
            tid: st.get(s.tid) as u16,
            idx: st.get(s.idx) as u64,
            req_id: st.get(s.req_id) as u32,
        };
        let dst = st.get(s.dst) as u64;
        let prop_len = st.get(s.prop_len) as u32;
        let ty = PrType::from_u16(st.get(s.pr_type) as u16);
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
            &mut self.psn,
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
