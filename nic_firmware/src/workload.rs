//! Host-side workloads for NICs, used by the CLI (`netsparse nic`, `topo
//! gather`), benchmarks and tests: the host memory layout of a gather
//! ([`gather_memory`]: idx array, destination array, property slice at
//! fixed addresses), RIG commands in batches over it, and the client-unit
//! benchmark ([`bench_idxs`], [`ClientUnitBench`]).

use netsparse_externs::{Datapath, Outputs, Time};

use crate::memory::{DenseMemory, MemError};
use crate::nic::Nic;
use crate::verbs::RigCommand;
use crate::PropertySlice;

/// Host address of the idx array in [`gather_memory`]'s layout.
pub const IDX_BASE: u64 = 0x0001_0000_0000;
/// Host address of the destination array (one property slot per column).
pub const DEST_BASE: u64 = 0x0002_0000_0000;
/// Host address of the node's slice of the property array.
pub const PROP_BASE: u64 = 0x0003_0000_0000;

/// Host memory of node `node` for a gather over a 1D partition (`bounds`:
/// N + 1 values, node n owns columns `bounds[n]..bounds[n + 1]`): its idx
/// array `idxs` at [`IDX_BASE`], a destination array of one `prop_len`
/// slot per column at [`DEST_BASE`], and its slice of the property array
/// (values from [`crate::property_bytes`]) at [`PROP_BASE`].
pub fn gather_memory(
    bounds: &[u64],
    node: usize,
    prop_len: u32,
    idxs: &[u64],
) -> Result<(DenseMemory, PropertySlice), MemError> {
    let columns = bounds.last().copied().unwrap_or(0);
    let first = bounds.get(node).copied().unwrap_or(0);
    let count = bounds.get(node + 1).copied().unwrap_or(first) - first;
    let mut m = DenseMemory::new();
    if !idxs.is_empty() {
        m.register_idxs(IDX_BASE, idxs)?;
    }
    m.register_destination(DEST_BASE, columns.max(1) * u64::from(prop_len))?;
    if count > 0 {
        m.register_properties(PROP_BASE, first, count, prop_len)?;
    }
    Ok((
        m,
        PropertySlice {
            base_addr: PROP_BASE,
            first_idx: first,
            count,
            prop_len,
        },
    ))
}

/// RIG commands over the `count` idxs at [`IDX_BASE`], `batch` idxs each
/// (the last one shorter), all writing into [`DEST_BASE`].
pub fn batch_commands(count: u64, batch: u64, prop_len: u32) -> Vec<RigCommand> {
    let batch = batch.max(1);
    (0..count.div_ceil(batch))
        .map(|i| RigCommand {
            idx_addr: IDX_BASE + i * batch * 8,
            dest_addr: DEST_BASE,
            count: batch.min(count - i * batch),
            property_size: prop_len,
        })
        .collect()
}

/// The idx stream of the client-unit benchmark: `count` idxs over
/// `columns` columns, drawn (xorshift, `seed`) so that about 7/8 repeat an
/// idx of a 16K hot set (coalesced after their first PR) and 1/8 are
/// spread over all columns (mostly distinct: issued).
pub fn bench_idxs(count: usize, columns: u64, seed: u64) -> Vec<u64> {
    let mut x = seed | 1;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let hot = 16_384.min(columns.max(1));
    (0..count)
        .map(|_| {
            let r = next();
            if r & 7 != 0 {
                (r >> 3) % hot * (columns / hot).max(1)
            } else {
                (r >> 3) % columns.max(1)
            }
        })
        .collect()
}

/// One client RIG unit processing one RIG command, in-process: idx DMA,
/// host_to_net per idx (Idx Filter, Pending PR Table, destination solver,
/// PendingInsert), concatenation, framing and TX pacing, with Table 5's
/// 256-entry Pending PR Table. No responder runs: after every timer event
/// the outstanding PRs are retired as if answered at once whenever 192 are
/// outstanding ([`Nic::answer_all_pending`]: entry retired, Idx Filter bit
/// set), so the unit never stalls and repeated idxs are filtered or
/// coalesced.
#[derive(Debug)]
pub struct ClientUnitBench {
    nic: Nic<DenseMemory>,
    out: Outputs,
    count: u64,
    answered: u64,
}

impl ClientUnitBench {
    /// A NIC (node 0 of `nodes`, equal partition of `columns`) with one
    /// client unit and the command over `idxs` posted.
    pub fn new(
        artifact: &netsparse_externs::artifact::Artifact,
        idxs: &[u64],
        columns: u64,
        nodes: u64,
    ) -> Result<ClientUnitBench, String> {
        let bounds: Vec<u64> = (0..=nodes).map(|n| n * columns / nodes.max(1)).collect();
        let (mem, slice) = gather_memory(&bounds, 0, 64, idxs).map_err(|e| e.to_string())?;
        let cfg = crate::NicConfig {
            node: 0,
            rig_units: 2,
            client_units: 1,
            filter_columns: columns,
            ..crate::NicConfig::default()
        };
        let mut nic = Nic::new(artifact, cfg, mem).map_err(|e| e.to_string())?;
        nic.install_partition(&bounds).map_err(|e| e.to_string())?;
        nic.serve_properties(slice).map_err(|e| e.to_string())?;
        for c in batch_commands(idxs.len() as u64, u64::MAX, 64) {
            nic.post_rig(Time::ZERO, c).map_err(|e| e.to_string())?;
        }
        Ok(ClientUnitBench {
            nic,
            out: Outputs::new(),
            count: idxs.len() as u64,
            answered: 0,
        })
    }

    /// Drive the NIC until its unit has run host_to_net for every idx (or
    /// stalls); returns the idxs processed.
    pub fn run(&mut self) -> u64 {
        while let Some(t) = self.nic.next_deadline() {
            self.out.clear();
            self.nic.on_timer(t, &mut self.out);
            if self.nic.stats_ref().prs_issued - self.answered >= 192 {
                self.answered += self.nic.answer_all_pending(t);
            }
            if self.nic.stats_ref().idxs_read >= self.count {
                break;
            }
        }
        self.nic.stats_ref().idxs_read
    }

    /// The NIC (statistics).
    pub fn nic(&self) -> &Nic<DenseMemory> {
        &self.nic
    }
}
