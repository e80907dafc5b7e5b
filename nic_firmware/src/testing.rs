//! Test support, used only by tests and benchmarks (of this crate and the
//! root package): [`Gather`], which drives RIG commands on a set of NICs
//! over any [`GatherNetwork`] (the tests use the `netsparse-netsim` engine
//! with fixed-delay links), and [`nics`] / [`check_destination`], which set
//! up and check a gather's NICs. The workloads themselves live in
//! [`crate::workload`] and are re-exported here for the tests' convenience.
//! No production path uses this module.

use netsparse_externs::Time;

use crate::memory::{DenseMemory, HostMemory};
use crate::nic::Nic;
use crate::verbs::{Completion, PostError, RigCommand};
pub use crate::workload::*;

/// The network a [`Gather`] runs on: it owns the NICs (NIC `n` is the
/// gather's node `n`) and the rest of the devices, and moves time forward
/// one event at a time.
pub trait GatherNetwork<M: HostMemory> {
    /// The current time.
    fn now(&self) -> Time;
    /// NIC `n`, to post commands and poll completions (the network must
    /// re-read its deadline before the next event).
    fn nic_mut(&mut self, n: usize) -> Option<&mut Nic<M>>;
    /// Process one event at or before `until`; false if there is none.
    fn step(&mut self, until: Time) -> bool;
}

// ----- gathers --------------------------------------------------------------------------

/// Drives one gather per NIC: each NIC posts its commands all at once, or
/// one after another (`serial`: the next is posted when the previous one
/// completes), and collects the completions.
#[derive(Clone, Debug)]
pub struct Gather {
    /// Commands per NIC.
    pub commands: Vec<Vec<RigCommand>>,
    /// Post each NIC's commands one after another.
    pub serial: bool,
    /// Completions per NIC, in arrival order.
    pub completions: Vec<Vec<Completion>>,
    /// `post_rig` errors per NIC.
    pub rejected: Vec<Vec<PostError>>,
    next: Vec<usize>,
}

impl Gather {
    /// A gather of `commands[n]` on NIC `n`.
    pub fn new(commands: Vec<Vec<RigCommand>>, serial: bool) -> Gather {
        let n = commands.len();
        Gather {
            commands,
            serial,
            completions: vec![Vec::new(); n],
            rejected: vec![Vec::new(); n],
            next: vec![0; n],
        }
    }

    fn post<M: HostMemory>(&mut self, n: usize, nic: &mut Nic<M>, now: Time) {
        while let Some(c) = self.commands[n].get(self.next[n]).copied() {
            self.next[n] += 1;
            match nic.post_rig(now, c) {
                Ok(_) => {
                    if self.serial {
                        return;
                    }
                }
                Err(e) => self.rejected[n].push(e),
            }
        }
    }

    /// Whether every posted command has completed.
    pub fn done(&self) -> bool {
        (0..self.commands.len()).all(|n| {
            self.next[n] == self.commands[n].len()
                && self.completions[n].len() + self.rejected[n].len() == self.commands[n].len()
        })
    }

    /// Run the gather on the first `commands.len()` NICs of `net` until
    /// every command completed (true) or `limit` is reached / nothing is
    /// left to do (false). After every event the NICs' completion queues
    /// are drained (and, serially, the next command posted).
    pub fn run<M: HostMemory>(&mut self, net: &mut impl GatherNetwork<M>, limit: Time) -> bool {
        let now = net.now();
        for n in 0..self.commands.len() {
            if self.next[n] == 0 {
                if let Some(nic) = net.nic_mut(n) {
                    self.post(n, nic, now);
                }
            }
        }
        loop {
            if self.done() {
                return true;
            }
            let progressed = net.step(limit);
            let now = net.now();
            for n in 0..self.commands.len() {
                let Some(nic) = net.nic_mut(n) else {
                    continue;
                };
                while let Some(c) = nic.poll_cq() {
                    self.completions[n].push(c);
                    if self.serial {
                        self.post(n, nic, now);
                    }
                }
            }
            if !progressed {
                return self.done();
            }
        }
    }
}

// ----- benchmark workload -----------------------------------------------------------------

/// One NIC per node of a 1D partition (`bounds`), each with its
/// [`gather_memory`] (idxs `idxs[n]`), the partition installed and its
/// property slice served; `tweak` adjusts every node's configuration.
/// Test support: panics if the set-up is invalid.
pub fn nics(
    artifact: &netsparse_externs::artifact::Artifact,
    idxs: &[Vec<u64>],
    bounds: &[u64],
    prop_len: u32,
    tweak: impl Fn(&mut crate::NicConfig),
) -> Vec<Nic<DenseMemory>> {
    (0..idxs.len())
        .map(|n| {
            let (mem, slice) = gather_memory(bounds, n, prop_len, &idxs[n]).expect("gather memory");
            let mut cfg = crate::NicConfig {
                node: n as u32,
                filter_columns: bounds.last().copied().unwrap_or(0),
                ..crate::NicConfig::default()
            };
            tweak(&mut cfg);
            let mut nic = Nic::new(artifact, cfg, mem).expect("NIC");
            nic.install_partition(bounds).expect("partition");
            nic.serve_properties(slice).expect("property slice");
            nic
        })
        .collect()
}

/// Check a NIC's destination array after a gather: the property of every
/// idx in `needed` in its slot, zeros in every other slot of the `columns`.
/// Returns the number of properties checked. Test support: panics (naming
/// the node and slot) on the first wrong slot.
pub fn check_destination(
    nic: &Nic<DenseMemory>,
    needed: &std::collections::BTreeSet<u64>,
    columns: u64,
    prop_len: u32,
) -> u64 {
    let data = nic
        .memory()
        .data(DEST_BASE)
        .expect("destination registered");
    let p = prop_len as usize;
    for c in 0..columns {
        let slot = &data[c as usize * p..(c as usize + 1) * p];
        if needed.contains(&c) {
            assert!(
                crate::is_property(c, slot),
                "node {}: wrong property in slot {c}",
                nic.config().node
            );
        } else {
            assert!(
                slot.iter().all(|b| *b == 0),
                "node {}: slot {c} written but not needed",
                nic.config().node
            );
        }
    }
    needed.len() as u64
}

/// The OmNICCL aggregator goldens' stimulus and result, shared by the NIC
/// aggregator's (`nic_firmware/tests/coll_pcap.rs`) and the switch
/// aggregator's (`tests/ns_switch_coll_pcap.rs`) golden tests so both
/// placements are checked against the same frames.
pub mod coll {
    use netsparse_externs::wire::PrType;
    use netsparse_externs::{Outputs, Time};

    use crate::coll::{coll_pr, round_id, PrSender, BLOCK, DONE, NEXT, NONE, SUM, VOTE};

    /// Block bytes.
    pub const BLOCK_BYTES: u32 = 16;

    /// A PR as (kind, round id, idx, first payload word).
    pub type Pr = (u16, u32, u64, Option<u32>);

    /// What each of the two workers receives, in order: the indices and
    /// sums of rounds 0 ({1, 2}: 10 + 20 and 30) and 1 ({4, 6}: 40 and
    /// 60), then round 2's empty vote result (the end).
    pub const RESULT: [Pr; 10] = [
        (NEXT, 0, 1, None),
        (NEXT, 0, 2, None),
        (SUM, 0, 1, Some(30)),
        (SUM, 0, 2, Some(30)),
        (NEXT, 1, 4, None),
        (NEXT, 1, 6, None),
        (SUM, 1, 4, Some(40)),
        (SUM, 1, 6, Some(60)),
        (NEXT, 2, NONE, None),
        (NEXT, 2, NONE, None),
    ];

    /// Block `v`: the words `v, v + 1, …` (little-endian).
    pub fn block(v: u32) -> Vec<u8> {
        (0..BLOCK_BYTES / 4)
            .flat_map(|k| (v + k).to_le_bytes())
            .collect()
    }

    /// The one frame `tx` sends.
    fn one_frame(mut tx: PrSender) -> Vec<u8> {
        tx.flush(Time::ZERO);
        let mut out = Outputs::new();
        tx.emit(Time::from_us(1), &mut out);
        let mut frames = out.iter().map(|(_, f)| f.to_vec());
        let f = frames.next().unwrap_or_default();
        assert!(frames.next().is_none(), "one frame per call");
        f
    }

    /// One frame from `src` to aggregator node `agg` with `prs`.
    fn frame(src: u32, agg: u32, prs: &[Pr]) -> Vec<u8> {
        let mut tx = PrSender::new(src, 400, 1500).expect("a valid sender");
        for &(kind, round, idx, value) in prs {
            let pr = coll_pr(src, kind, round, idx);
            match value {
                Some(v) => tx.push(
                    Time::ZERO,
                    PrType::Response,
                    agg,
                    BLOCK_BYTES,
                    &pr,
                    &block(v),
                ),
                None => tx.push(Time::ZERO, PrType::Read, agg, BLOCK_BYTES, &pr, &[]),
            }
        }
        one_frame(tx)
    }

    /// Two workers' votes, blocks and DONE markers for two rounds to an
    /// aggregator at node `agg` with depth 2 and [`BLOCK_BYTES`]-byte
    /// blocks, as (ns, sending node, frame). Worker 0 has blocks 1, 4 and
    /// 6 nonzero, worker 1 blocks 1 and 2. Besides: a vote from unknown
    /// node 7, a vote for a stream the aggregator does not run, and a block
    /// of the wrong size (one refusal of each kind).
    pub fn stimulus(agg: u32) -> Vec<(u64, u32, Vec<u8>)> {
        let v = |src, a, b| frame(src, agg, &[(VOTE, 0, a, None), (VOTE, 0, b, None)]);
        let wrong_size = {
            let mut tx = PrSender::new(1, 400, 1500).expect("a valid sender");
            let pr = coll_pr(1, BLOCK, 0, 2);
            tx.push(Time::ZERO, PrType::Response, agg, 8, &pr, &[0; 8]);
            one_frame(tx)
        };
        let end = [(VOTE, 2, NONE, None), (VOTE, 2, NONE, None)];
        let with_end = |first: Pr| {
            let mut prs = vec![first];
            prs.extend(end);
            prs
        };
        vec![
            (100, 0, v(0, 1, 4)),
            (110, 1, v(1, 1, 2)),
            (120, 7, frame(7, agg, &[(VOTE, 0, 3, None)])),
            (130, 0, frame(0, agg, &[(VOTE, round_id(5, 0), 3, None)])),
            // Round 0: worker 0 sends block 1, worker 1 blocks 1 and 2.
            (500, 0, frame(0, agg, &[(BLOCK, 0, 1, Some(10))])),
            (
                505,
                0,
                frame(
                    0,
                    agg,
                    &[(DONE, 0, 1, None), (VOTE, 1, 4, None), (VOTE, 1, 6, None)],
                ),
            ),
            (
                510,
                1,
                frame(1, agg, &[(BLOCK, 0, 1, Some(20)), (BLOCK, 0, 2, Some(30))]),
            ),
            (512, 1, wrong_size),
            (
                515,
                1,
                frame(
                    1,
                    agg,
                    &[
                        (DONE, 0, 2, None),
                        (VOTE, 1, NONE, None),
                        (VOTE, 1, NONE, None),
                    ],
                ),
            ),
            // Round 1: worker 0 sends 4 and 6; worker 1 nothing.
            (
                900,
                0,
                frame(0, agg, &[(BLOCK, 1, 4, Some(40)), (BLOCK, 1, 6, Some(60))]),
            ),
            (905, 0, frame(0, agg, &with_end((DONE, 1, 2, None)))),
            (910, 1, frame(1, agg, &with_end((DONE, 1, 0, None)))),
        ]
    }
}
