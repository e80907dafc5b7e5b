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
