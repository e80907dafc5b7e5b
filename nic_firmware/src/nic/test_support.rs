//! Shared set-up of the NIC's unit tests: the compiled bundled NIC program,
//! one NIC of a two-node partition (node 0 owns columns 0..64, node 1 owns
//! 64..128), a driver that runs a NIC alone and collects what it sends, and
//! frames from the peer.

use std::sync::OnceLock;

use netsparse_externs::artifact::Artifact;
use netsparse_externs::wire::{DeviceAddr, FrameBuilder, FrameHeader, PrRepr, PrType};
use netsparse_externs::{Datapath, Outputs, Time};

use crate::memory::{property_bytes, DenseMemory};
use crate::testing::nics;
use crate::{Nic, NicConfig};

/// Property length of every test.
pub(super) const PROP: u32 = 16;
/// The partition: node 0 owns 0..64, node 1 owns 64..128.
pub(super) const BOUNDS: [u64; 3] = [0, 64, 128];

/// `programs/netsparse_nic.p4`, compiled once.
pub(super) fn artifact() -> &'static Artifact {
    static ART: OnceLock<Artifact> = OnceLock::new();
    ART.get_or_init(|| {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../programs/netsparse_nic.p4");
        let mut sources = netsparse_compiler::source::SourceMap::new();
        netsparse_compiler::compile_file(
            &mut sources,
            &path,
            &netsparse_compiler::CompileOptions::default(),
        )
        .expect("netsparse_nic.p4 compiles")
        .artifact
    })
}

/// Node 0 of the partition with `idxs` in host memory, configured by
/// `tweak`.
pub(super) fn node0(idxs: &[u64], tweak: impl Fn(&mut NicConfig)) -> Nic<DenseMemory> {
    let lists = vec![idxs.to_vec(), Vec::new()];
    nics(artifact(), &lists, &BOUNDS, PROP, tweak)
        .into_iter()
        .next()
        .expect("two NICs")
}

/// Run `nic`'s timers up to `until`; returns every frame it sent, with
/// the time it left.
pub(super) fn run(nic: &mut Nic<DenseMemory>, until: Time) -> Vec<(Time, Vec<u8>)> {
    let mut out = Outputs::new();
    let mut sent = Vec::new();
    while let Some(t) = nic.next_deadline().filter(|&t| t <= until) {
        out.clear();
        nic.on_timer(t, &mut out);
        sent.extend(out.iter().map(|(_, f)| (t, f.to_vec())));
    }
    sent
}

/// Deliver `frame` to `nic` at `now`; returns what it sent at once.
pub(super) fn deliver(nic: &mut Nic<DenseMemory>, now: Time, frame: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Outputs::new();
    nic.on_packet(now, 0, frame, &mut out);
    out.iter().map(|(_, f)| f.to_vec()).collect()
}

/// Read PRs of node 1 for `idxs` (request id = idx).
pub(super) fn peer_reads(idxs: std::ops::Range<u64>) -> Vec<PrRepr> {
    idxs.map(|idx| PrRepr {
        src: 1,
        tid: 0,
        idx,
        req_id: idx as u32,
    })
    .collect()
}

/// A frame from node 1 to node 0 carrying `prs` (payloads: the property of
/// each idx for responses).
pub(super) fn from_peer(pr_type: PrType, prs: &[PrRepr]) -> Vec<u8> {
    let header = FrameHeader::netsparse(DeviceAddr::Node(1), 0, 0).expect("header");
    let mut buf = Vec::new();
    let mut b = FrameBuilder::begin(&mut buf, &header, pr_type, 0, PROP, 1500).expect("builder");
    let mut payload = vec![0u8; PROP as usize];
    for pr in prs {
        let p: &[u8] = match pr_type {
            PrType::Read => &[],
            PrType::Response => {
                property_bytes(pr.idx, &mut payload);
                &payload
            }
        };
        b.push_pr(pr, p).expect("fits");
    }
    b.finish();
    buf
}
