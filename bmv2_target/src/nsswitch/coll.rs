//! The collective externs of `<collective.p4>` in the middle pipes (the
//! OmNICCL aggregator "in a switch middle pipe", issue 15): one
//! [`CollUnit`] per switch, shared by every middle pipe (as registers are),
//! configured by the control plane with the workers and the port that
//! reaches each ([`NsCollective`], like a multicast group).
//!
//! A middle pipe's per-PR part calls the externs on the current PR (its
//! payload is the block `BlockAccumulate` adds); the broadcasts that
//! `SendIndices` and `SendSums` request leave through the Concatenator of
//! the middle pipe whose PR asked for them: per worker `w`, `d` NEXT reads
//! or one SUM response per chosen block, keyed (type, `w`, the port of
//! `w`), with the configured aggregator node as `src`. Every PR the switch
//! originates occupies its middle pipe one PR time (`pr_cycles`), as a PR
//! that entered it would. Without a configured collective, a collective
//! extern is counted as unsupported and returns `COLL_REFUSED`.

use netsparse_externs::coll::{coll_pr, CollConfig, CollCounters, CollUnit, NEXT};
use netsparse_externs::concat::{Concatenator, CqKey, Flushed};
use netsparse_externs::wire::{PrType, MAX_NODE_ID};
use netsparse_externs::Time;

use super::{NsConfigError, NsSwitch, NsSwitchError};

/// What the control plane configures for the collective externs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NsCollective {
    /// The aggregator unit's shape (workers, depth, block, window, streams).
    pub unit: CollConfig,
    /// The node id the switch serves as aggregator: `src` of the PRs it
    /// sends (workers address their votes and blocks to it).
    pub node: u32,
    /// Per worker (node `w` is worker `w`), the egress port towards it.
    pub worker_ports: Vec<u32>,
}

/// The collective's counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct NsCollStats {
    /// The unit's counters (accepted and refused calls, rounds, state).
    pub unit: CollCounters,
    /// PRs the switch originated (indices and sums).
    pub prs_sent: u64,
    /// Originated PRs the Concatenator refused (none expected).
    pub prs_rejected: u64,
}

/// The switch's collective state.
#[derive(Debug)]
pub(super) struct SwitchColl {
    pub(super) unit: CollUnit,
    node: u32,
    ports: Vec<u32>,
    prs_sent: u64,
    prs_rejected: u64,
}

impl SwitchColl {
    /// Send the broadcasts the program asked for into `concat` at `now`;
    /// the number of PRs originated.
    pub(super) fn broadcast(
        &mut self,
        now: Time,
        concat: &mut Concatenator,
        sink: &mut impl FnMut(Flushed<'_>),
    ) -> u64 {
        let SwitchColl {
            unit,
            node,
            ports,
            prs_sent,
            prs_rejected,
        } = self;
        let before = *prs_sent;
        let prop_len = unit.config().block;
        unit.run_actions(|b| {
            let mut push = |ty: PrType, w: usize, idx: u64, body: &[u8]| {
                let key = CqKey {
                    pr_type: ty,
                    dst: w as u32,
                    port: ports[w],
                };
                let pr = coll_pr(*node, b.kind, b.round_id, idx);
                *prs_sent += 1;
                if concat
                    .push(now, key, prop_len, &pr, body, &mut *sink)
                    .is_err()
                {
                    *prs_rejected += 1;
                }
            };
            if b.kind == NEXT {
                for w in 0..ports.len() {
                    for k in 0..b.depth {
                        push(PrType::Read, w, b.index(k), &[]);
                    }
                }
            } else {
                for (k, &idx) in b.chosen.iter().enumerate() {
                    for w in 0..ports.len() {
                        push(PrType::Response, w, idx, b.sum(k));
                    }
                }
            }
        });
        *prs_sent - before
    }
}

impl NsSwitch {
    /// Configure the collective externs (replacing any earlier
    /// configuration and its state): the unit's shape, the node the switch
    /// answers as, and the port towards each worker.
    pub fn configure_collective(&mut self, c: NsCollective) -> Result<(), NsSwitchError> {
        let invalid =
            |key, detail: String| NsSwitchError::Config(NsConfigError::Invalid { key, detail });
        let unit = CollUnit::new(c.unit).map_err(|e| invalid("collective", e.to_string()))?;
        if c.worker_ports.len() != c.unit.workers as usize {
            return Err(invalid(
                "collective.worker_ports",
                format!(
                    "{} ports for {} workers (one per worker)",
                    c.worker_ports.len(),
                    c.unit.workers
                ),
            ));
        }
        if let Some(p) = c.worker_ports.iter().find(|&&p| p >= self.cfg.ports) {
            return Err(invalid(
                "collective.worker_ports",
                format!("port {p} (the switch has ports 0..{})", self.cfg.ports),
            ));
        }
        if c.unit.workers > MAX_NODE_ID + 1 || c.node > MAX_NODE_ID {
            return Err(invalid(
                "collective.node",
                format!(
                    "node {} with {} workers: node ids go up to {MAX_NODE_ID}",
                    c.node, c.unit.workers
                ),
            ));
        }
        self.coll = Some(Box::new(SwitchColl {
            unit,
            node: c.node,
            ports: c.worker_ports,
            prs_sent: 0,
            prs_rejected: 0,
        }));
        Ok(())
    }

    /// The collective's counters, if one is configured.
    pub fn collective_stats(&self) -> Option<NsCollStats> {
        self.coll.as_ref().map(|c| NsCollStats {
            unit: c.unit.counters(),
            prs_sent: c.prs_sent,
            prs_rejected: c.prs_rejected,
        })
    }
}
