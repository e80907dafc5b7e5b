//! The way in: an arriving frame runs the ingress pipe of its port
//! (parser, control, deparser), and crossbar 1 sends the deparsed bytes to a
//! middle pipe (NetSparse reads, responses and malformed NetSparse frames)
//! or straight to the egress pipe (everything else).

use netsparse_externs::wire::frame::addressed_to_rocev2;
use netsparse_externs::wire::{Frame, Layer, PrType, WireError};
use netsparse_externs::{Outputs, Time};

use netsparse_engine::exec::ParseEnd;
use netsparse_engine::ControlPlane;

use super::NsSwitch;

/// Crossbar 1's view of a deparsed ingress packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Class {
    Read,
    Response,
    /// UDP to 4791 but malformed above UDP: the middle pipe drops it.
    Malformed,
    /// Not NetSparse: straight to the egress pipe.
    Other,
}

/// Crossbar 1's decision for the deparsed `bytes`, from their parse.
fn classify(parsed: &Result<Frame<'_>, WireError>, bytes: &[u8]) -> Class {
    match parsed {
        Ok(f) => match f.concat.pr_type {
            PrType::Read => Class::Read,
            PrType::Response => Class::Response,
        },
        Err(e) if e.is_foreign() => Class::Other,
        // Errors found before the UDP destination port was checked: NetSparse
        // only if the bytes say UDP to 4791.
        Err(
            WireError::Truncated {
                layer: Layer::Ethernet | Layer::Ipv4 | Layer::Udp,
                ..
            }
            | WireError::BadIpv4Header { .. }
            | WireError::BadIpv4TotalLength { .. }
            | WireError::Fragmented { .. },
        ) if !addressed_to_rocev2(bytes) => Class::Other,
        Err(_) => Class::Malformed,
    }
}

impl NsSwitch {
    pub(super) fn dump(&self, dir: &str, port: u32, bytes: &[u8]) {
        let n = bytes.len().min(self.cfg.dump_bytes);
        let hex: String = bytes[..n].iter().map(|b| format!("{b:02x}")).collect();
        tracing::info!("{dir} port {port} ({} bytes): {hex}", bytes.len());
    }
    /// Process one arriving frame.
    pub(super) fn process(&mut self, now: Time, port: u32, frame: &[u8], out: &mut Outputs) {
        self.service(now, out);
        self.packet_id += 1;
        let span = self
            .cfg
            .trace
            .then(|| tracing::info_span!("packet", id = self.packet_id, port).entered());
        if self.cfg.dump_bytes > 0 {
            self.dump("in", port, frame);
        }
        if port >= self.cfg.ports {
            self.bad_port += 1;
            return;
        }
        let g = self.cfg.pipe_of(port) as usize;
        {
            let c = &mut self.pipes[g].c;
            c.packets_in += 1;
            c.bytes_in += frame.len() as u64;
            if frame.len() < 14 || frame.len() > self.cfg.max_frame {
                c.rx_malformed += 1;
                if self.cfg.trace {
                    tracing::info!("dropped: a {}-byte frame", frame.len());
                }
                return;
            }
        }
        // Ingress pipe.
        let ig = self.ig;
        let b = self.b;
        self.prog.set_now(now);
        let st = &mut self.ist;
        st.reset();
        st.frame.clear();
        st.frame.extend_from_slice(frame);
        st.set(ig.ingress_port, u128::from(port));
        st.set(ig.packet_length, frame.len() as u128);
        let engine = self.prog.engine_mut();
        if let ParseEnd::Reject(e) = engine.parse(st, b.ingress_parser) {
            if let Some(e) = e {
                st.set(ig.parser_error, u128::from(e));
            }
            self.pipes[g].c.ingress_parser_errors += 1;
        }
        engine.control(st, b.ingress);
        if st.get(ig.drop) != 0 {
            if self.cfg.trace {
                tracing::info!("dropped by ingress");
            }
            self.pipes[g].c.ingress_drops += 1;
            return;
        }
        let spec = st.get(ig.egress_spec);
        if spec >= u128::from(self.cfg.ports) {
            if self.cfg.trace {
                tracing::info!("dropped: egress_spec {spec} is not a port");
            }
            self.pipes[g].c.bad_egress_spec += 1;
            return;
        }
        let spec = spec as u32;
        self.ibuf.clear();
        engine.deparse(st, b.ingress_deparser, &mut self.ibuf);
        if self.ibuf.is_empty() {
            self.pipes[g].c.ingress_drops += 1;
            return;
        }
        // Crossbar 1. The frame is parsed once here; the middle pipe's
        // Deconcatenator validates that parse (the buffer is taken out of
        // the switch meanwhile: no copy, no allocation).
        let e = self.cfg.pipe_of(spec) as usize;
        let mut buf = std::mem::take(&mut self.ibuf);
        let parsed = Frame::parse(&buf);
        let class = classify(&parsed, &buf);
        if self.cfg.trace {
            tracing::info!("crossbar 1: {class:?}, egress port {spec}");
        }
        let m = match class {
            Class::Other => {
                drop(parsed);
                self.pipes[e].c.passthrough_packets += 1;
                std::mem::swap(&mut self.est.frame, &mut buf);
                self.egress(now, spec, port, out);
                std::mem::swap(&mut self.est.frame, &mut buf);
                self.ibuf = buf;
                return;
            }
            Class::Response => g,
            Class::Read | Class::Malformed => e,
        };
        self.middle(m, now, port, spec, parsed);
        self.ibuf = buf;
        // Packets due now (no cache latency).
        self.release(m, now, now, out);
        drop(span);
    }
}
