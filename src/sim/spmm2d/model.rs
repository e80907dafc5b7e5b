//! The analytic cost model printed beside the simulated breakdown of
//! `netsparse sim --kernel spmm2d`, in the spirit of Brock et al.'s §4
//! (whose text is not in this repository): the standard alpha-beta form
//! for communication — a one-sided transfer costs a latency α (the round
//! trip of a request, from the hops between the two nodes) plus its bytes
//! over the node's link bandwidth β (the payload share of the line rate,
//! after the frame headers of every chunk) — and the roofline of
//! [`Rates`] for computation, the same the simulated CPUs use.
//!
//! Each process runs its algorithm's stage loop with the simulator's
//! one-stage prefetch: the fetch of stage s + 1 starts when the
//! computation of stage s starts, so a stage begins at max(end of the
//! previous computation, end of its fetch).
//!
//! * `s-c`: stage s fetches the remote ones of A(i, k) and B(k, j)
//!   (their bytes share the reader's link) and computes C(i, j) +=
//!   A(i, k)·B(k, j).
//! * `s-a`: stage s fetches B(k, j), computes the partial C(i, j) and, when
//!   C(i, j) is another's, pushes it when the computation ends: a
//!   FETCH_ADD round trip, the tile's bytes and the WRITE_ACK's latency.
//!   The owner accumulates each partial tile (the roofline's add time) at
//!   the first moment its CPU is free once the tile is in; an
//!   accumulation that does not fit in a gap between two computations
//!   delays the later ones.
//! * `ws-rand`, `ws-la` are modelled as `s-c` (their schedule when nobody
//!   steals): the model does not predict steals.
//!
//! What it leaves out, on purpose: contention for a node's link between
//! the processes reading from it or pushing into it, the serving NIC's
//! pacing, and the switches' queueing. The gap between model and
//! simulation is therefore mostly that contention.

use serde::Serialize;

use super::data::Operands;
use super::{Alg, Spmm2dParams, CHUNK};
use crate::sim::compute::Rates;
use crate::sim::topology::Topology;

/// Frame bytes around each chunk: Ethernet 14, IPv4 20, UDP 8, BTH 12,
/// concatenation header 14, PR header 18 (one chunk per frame at the
/// default MTU).
pub const CHUNK_OVERHEAD: u64 = 14 + 20 + 8 + 12 + 14 + 18;

/// The model's figures for one algorithm (means over processes, like the
/// simulated breakdown).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ModelResult {
    /// When the last process finishes, ns.
    pub time_ns: f64,
    /// Mean compute time, ns.
    pub compute_ns: f64,
    /// Mean exposed communication (finish − compute − accumulation), ns.
    pub communication_ns: f64,
    /// Mean accumulation time, ns.
    pub accumulate_ns: f64,
    /// Mean time between a process's finish and the last one's, ns.
    pub imbalance_ns: f64,
    /// α: the READ round trip within a rack, ns.
    pub alpha_ns: f64,
    /// β: payload bytes per ns of a node's link.
    pub beta_bytes_per_ns: f64,
}

struct Net {
    hop_ns: f64,
    switch_ns: f64,
    beta: f64,
    topo: Topology,
}

impl Net {
    /// Round trip between nodes `a` and `b`: 2 links and a ToR each way
    /// in one rack, 4 links, 2 ToRs and a spine across racks.
    fn rtt(&self, a: u32, b: u32) -> f64 {
        let (links, switches) = if self.topo.rack_of(a) == self.topo.rack_of(b) {
            (2.0, 1.0)
        } else {
            (4.0, 3.0)
        };
        2.0 * (links * self.hop_ns + switches * self.switch_ns)
    }

    /// Time of `bytes` of padded chunks on one link.
    fn xfer(&self, bytes: u64) -> f64 {
        bytes as f64 / self.beta
    }
}

fn padded(bytes: u64) -> u64 {
    bytes.div_ceil(u64::from(CHUNK)).max(1) * u64::from(CHUNK)
}

fn ns(t: netsparse_externs::Time) -> f64 {
    t.as_ps() as f64 / 1e3
}

/// The model of `alg` for the run of `p` over `ops` (validated: a g×g grid).
pub fn predict(ops: &Operands<'_>, p: &Spmm2dParams, alg: Alg) -> Option<ModelResult> {
    let g = ops.grid;
    let topo = Topology::new(p.nodes, p.racks, None).ok()?;
    let ch = u64::from(CHUNK);
    let beta = p.link_gbps as f64 / 8.0 * ch as f64 / (ch + CHUNK_OVERHEAD) as f64;
    let net = Net {
        hop_ns: p.link_latency_ns as f64,
        switch_ns: p.switch_latency_ns as f64,
        beta,
        topo,
    };
    let rates: Rates = p.rates;
    let n = (g * g) as usize;
    let mut compute = vec![0.0; n];
    let mut accum = vec![0.0; n];
    let mut finish = vec![0.0; n];
    // Each process's CPU: busy intervals, in time order.
    let mut cpu: Vec<Vec<(f64, f64)>> = vec![Vec::new(); n];
    // s-a: (arrival time, owner) of every pushed partial tile.
    let mut pushes: Vec<(f64, u32)> = Vec::new();
    for me in 0..g * g {
        let (t, u) = (me / g, me % g);
        let mut end = 0.0f64; // end of the previous computation
        let mut fetch_done = 0.0f64;
        let mut fetch_start = 0.0f64;
        let mut last_push = 0.0f64;
        for s in 0..g {
            // The unit (row block, column block of C, inner block).
            let (ct, cu, k) = match alg {
                Alg::StationaryA => (t, (t + u + s) % g, u),
                _ => (t, u, (t + u + s) % g),
            };
            let mut fetch = 0.0f64;
            let mut bytes = 0u64;
            for (owner, b) in [
                (ct * g + k, ops.a_bytes(ct, k)),
                (k * g + cu, ops.b_bytes(k, cu)),
            ] {
                if owner != me {
                    fetch = fetch.max(net.rtt(me, owner));
                    bytes += padded(b);
                }
            }
            fetch += net.xfer(bytes);
            fetch_done = fetch_done.max(fetch_start + fetch);
            let start = end.max(fetch_done);
            let c = ns(rates.spmm_time(
                ops.a_nnz(ct, k),
                u64::from(ops.tile_rows(ct)),
                ops.tile_k(cu),
            ));
            compute[me as usize] += c;
            end = start + c;
            cpu[me as usize].push((start, end));
            fetch_start = start;
            fetch_done = start;
            if (ct, cu) != (t, u) {
                let owner = ct * g + cu;
                let rtt = net.rtt(me, owner);
                let arrive = end + rtt + net.xfer(padded(ops.c_bytes(ct, cu)));
                pushes.push((arrive, owner));
                last_push = last_push.max(arrive + rtt / 2.0);
            }
        }
        finish[me as usize] = end.max(last_push);
    }
    // Owners accumulate the partial tiles in arrival order, each at the
    // first free moment of their CPU.
    pushes.sort_by(|a, b| a.0.total_cmp(&b.0));
    for &(at, owner) in &pushes {
        let o = owner as usize;
        let (t, u) = (owner / g, owner % g);
        let words = u64::from(ops.tile_rows(t)) * u64::from(ops.tile_k(u));
        let d = ns(rates.add_time(words));
        accum[o] += d;
        place(&mut cpu[o], at, d);
    }
    for (f, busy) in finish.iter_mut().zip(&cpu) {
        if let Some(&(_, e)) = busy.last() {
            *f = f.max(e);
        }
    }
    let last = finish.iter().copied().fold(0.0, f64::max);
    let mean = |v: &[f64]| v.iter().sum::<f64>() / n as f64;
    let exposed: Vec<f64> = (0..n)
        .map(|i| (finish[i] - compute[i] - accum[i]).max(0.0))
        .collect();
    let idle: Vec<f64> = finish.iter().map(|f| last - f).collect();
    Some(ModelResult {
        time_ns: last,
        compute_ns: mean(&compute),
        communication_ns: mean(&exposed),
        accumulate_ns: mean(&accum),
        imbalance_ns: mean(&idle),
        alpha_ns: net.rtt(0, 0),
        beta_bytes_per_ns: beta,
    })
}

/// Put a task of `d` ns into `busy` (sorted, disjoint intervals) at the
/// first free moment from `at`; if it overruns the next interval, every
/// later interval moves by the overrun.
fn place(busy: &mut Vec<(f64, f64)>, at: f64, d: f64) {
    let mut t = at;
    let mut i = 0;
    while i < busy.len() && busy[i].0 <= t {
        t = t.max(busy[i].1);
        i += 1;
    }
    let end = t + d;
    if let Some(&(next, _)) = busy.get(i) {
        let shift = (end - next).max(0.0);
        for b in &mut busy[i..] {
            b.0 += shift;
            b.1 += shift;
        }
    }
    busy.insert(i, (t, end));
}

#[cfg(test)]
mod tests {
    use super::place;

    #[test]
    fn a_task_fills_a_gap_or_pushes_the_later_ones() {
        let mut b = vec![(0.0, 10.0), (20.0, 30.0)];
        place(&mut b, 5.0, 4.0);
        assert_eq!(b, [(0.0, 10.0), (10.0, 14.0), (20.0, 30.0)]);
        place(&mut b, 0.0, 10.0);
        assert_eq!(b, [(0.0, 10.0), (10.0, 14.0), (14.0, 24.0), (24.0, 34.0)]);
        place(&mut b, 40.0, 1.0);
        assert_eq!(b.last(), Some(&(40.0, 41.0)));
    }
}
