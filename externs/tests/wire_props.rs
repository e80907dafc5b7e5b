//! Property tests of the NetSparse wire format: emit → parse is the identity,
//! and parsing never panics on arbitrary bytes or mutated valid frames.

use netsparse_externs::deconcat::Deconcatenator;
use netsparse_externs::wire::{
    bth::{BthPacket, BthRepr},
    ConcatPacket, ConcatRepr, DeviceAddr, Frame, FrameBuilder, FrameHeader, PrPacket, PrRepr,
    PrType, MAX_NODE_ID,
};
use proptest::prelude::*;

fn pr_type() -> impl Strategy<Value = PrType> {
    prop_oneof![Just(PrType::Read), Just(PrType::Response)]
}

fn pr_repr() -> impl Strategy<Value = PrRepr> {
    (any::<u32>(), any::<u16>(), any::<u64>(), any::<u32>()).prop_map(|(src, tid, idx, req_id)| {
        PrRepr {
            src,
            tid,
            idx,
            req_id,
        }
    })
}

fn bth_repr() -> impl Strategy<Value = BthRepr> {
    (
        any::<u8>(),
        any::<bool>(),
        any::<bool>(),
        0u8..4,
        0u8..16,
        any::<u16>(),
        0u32..1 << 24,
        any::<bool>(),
        0u32..1 << 24,
    )
        .prop_map(
            |(opcode, solicited, mig_req, pad_count, tver, pkey, dst_qp, ack_req, psn)| BthRepr {
                opcode,
                solicited,
                mig_req,
                pad_count,
                tver,
                pkey,
                dst_qp,
                ack_req,
                psn,
            },
        )
}

fn device() -> impl Strategy<Value = DeviceAddr> {
    prop_oneof![
        (0..=MAX_NODE_ID).prop_map(DeviceAddr::Node),
        (0..=MAX_NODE_ID).prop_map(DeviceAddr::Switch)
    ]
}

/// A packet description: header fields and PRs with payloads.
#[derive(Debug, Clone)]
struct Pkt {
    src: DeviceAddr,
    dst: u32,
    psn: u32,
    pr_type: PrType,
    prop_len: u32,
    prs: Vec<(PrRepr, Vec<u8>)>,
}

fn packet() -> impl Strategy<Value = Pkt> {
    (device(), 0..=MAX_NODE_ID, any::<u32>(), pr_type(), 0u32..80).prop_flat_map(
        |(src, dst, psn, t, prop_len)| {
            let plen = if t == PrType::Response {
                prop_len as usize
            } else {
                0
            };
            let max = netsparse_externs::wire::max_prs(t, prop_len, 1500) as usize;
            prop::collection::vec(
                (pr_repr(), prop::collection::vec(any::<u8>(), plen)),
                0..=max.min(24),
            )
            .prop_map(move |prs| Pkt {
                src,
                dst,
                psn,
                pr_type: t,
                prop_len,
                prs,
            })
        },
    )
}

fn build(p: &Pkt) -> Vec<u8> {
    let h = FrameHeader::netsparse(p.src, p.dst, p.psn).expect("ids in range");
    let mut buf = Vec::new();
    let mut b =
        FrameBuilder::begin(&mut buf, &h, p.pr_type, p.dst, p.prop_len, 1500).expect("fits");
    for (pr, payload) in &p.prs {
        b.push_pr(pr, payload).expect("within MTU");
    }
    b.finish();
    buf
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1024, ..ProptestConfig::default() })]

    #[test]
    fn bth_emit_parse_identity(r in bth_repr()) {
        let mut buf = [0u8; 12];
        r.emit(&mut BthPacket::new_unchecked(&mut buf[..]));
        prop_assert_eq!(BthRepr::parse(&BthPacket::new_checked(&buf[..]).unwrap()), Ok(r));
    }

    #[test]
    fn pr_emit_parse_identity(r in pr_repr(), payload in prop::collection::vec(any::<u8>(), 0..40)) {
        let mut buf = r.to_bytes().to_vec();
        buf.extend_from_slice(&payload);
        let p = PrPacket::new_checked(&buf[..]).unwrap();
        prop_assert_eq!(PrRepr::parse(&p), Ok(r));
        prop_assert_eq!(p.payload(), &payload[..]);
    }

    #[test]
    fn frame_emit_parse_identity(p in packet()) {
        let bytes = build(&p);
        prop_assert!(bytes.len() - 14 <= 1500);
        let f = Frame::parse(&bytes).unwrap();
        prop_assert_eq!(f.concat, ConcatRepr {
            pr_type: p.pr_type, dst: p.dst, prop_len: p.prop_len, num_prs: p.prs.len() as u32,
        });
        prop_assert_eq!(f.src_device(), Some(p.src));
        prop_assert_eq!(DeviceAddr::from_ipv4(f.ip_dst), Some(DeviceAddr::Node(p.dst)));
        prop_assert_eq!(DeviceAddr::from_mac(f.eth_src), Some(p.src));
        prop_assert_eq!(f.bth, BthRepr::netsparse(p.psn));
        prop_assert!(f.verify_ipv4_checksum().is_ok());
        let got: Vec<(PrRepr, Vec<u8>)> = f.prs().map(|v| (v.repr(), v.payload.to_vec())).collect();
        prop_assert_eq!(&got, &p.prs);
        // The concatenation layer alone parses to the same thing.
        let layer = ConcatPacket::new_checked(f.concat_bytes).unwrap();
        prop_assert_eq!(ConcatRepr::parse(&layer), Ok(f.concat));
        prop_assert_eq!(layer.prs().count(), p.prs.len());
        // And the fixed-slice emitter writes the same headers.
        let h = FrameHeader::netsparse(p.src, p.dst, p.psn).unwrap();
        let mut fixed = vec![0u8; bytes.len()];
        prop_assert_eq!(h.emit(&mut fixed, &f.concat), Ok(bytes.len()));
        prop_assert_eq!(&fixed[..68], &bytes[..68]);
    }

    #[test]
    fn parse_never_panics_on_arbitrary_bytes(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
        let _ = Frame::parse(&bytes);
        let p = ConcatPacket::new_unchecked(&bytes[..]);
        let _ = ConcatRepr::parse(&p);
        let n = p.prs().count();
        prop_assert!(n * 18 <= bytes.len());
        let _ = BthPacket::new_checked(&bytes[..]).map(|b| BthRepr::parse(&b));
        let _ = PrPacket::new_checked(&bytes[..]).map(|b| PrRepr::parse(&b));
        let mut d = Deconcatenator::default();
        let r1 = d.frame(&bytes).is_ok();
        let r2 = d.layer(&bytes).is_ok();
        let s = d.stats();
        // Every packet is counted exactly once.
        prop_assert_eq!(s.packets + s.foreign + s.malformed(), 2);
        prop_assert_eq!(s.packets, u64::from(r1) + u64::from(r2));
    }

    #[test]
    fn parse_never_panics_on_mutated_frames(
        p in packet(),
        flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..6),
        cut in any::<prop::sample::Index>(),
        extra in prop::collection::vec(any::<u8>(), 0..40),
        mode in 0u8..3,
    ) {
        let mut bytes = build(&p);
        for (i, v) in &flips {
            let at = i.index(bytes.len());
            bytes[at] = *v;
        }
        match mode {
            0 => bytes.truncate(cut.index(bytes.len() + 1)),
            1 => bytes.extend_from_slice(&extra),
            _ => {}
        }
        if let Ok(f) = Frame::parse(&bytes) {
            // A frame that parses is self-consistent.
            let n = f.prs().count();
            prop_assert_eq!(n as u32, f.concat.num_prs);
            prop_assert_eq!(f.concat_bytes.len(), f.concat.buffer_len());
            prop_assert!(f.concat_offset + f.concat_bytes.len() <= bytes.len());
        }
        let mut d = Deconcatenator::default();
        if let Ok(out) = d.frame(&bytes) {
            prop_assert_eq!(out.prs.count() as u32, out.concat.num_prs);
        }
        prop_assert_eq!(d.stats().packets + d.stats().foreign + d.stats().malformed(), 1);
    }
}
