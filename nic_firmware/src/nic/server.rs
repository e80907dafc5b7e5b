//! The server RIG units: a read PR handed to a unit round-robin (the Q
//! Control) waits for the DMA read of its property, then its response joins
//! the Concatenator; each unit issues one read per cycle.

use std::collections::VecDeque;

use netsparse_externs::concat::CqKey;
use netsparse_externs::wire::{PrRepr, PrType};
use netsparse_externs::Time;

use super::tx::push_pr;
use super::Nic;
use crate::memory::HostMemory;

/// A response waiting for its property's DMA read.
#[derive(Clone, Copy, Debug)]
pub(super) struct PendingResponse {
    pub(super) ready: Time,
    pub(super) pr: PrRepr,
    pub(super) dst: u32,
    pub(super) prop_len: u32,
}

/// A server RIG unit.
#[derive(Clone, Debug, Default)]
pub(super) struct ServerUnit {
    pub(super) free_at: Time,
    pub(super) queue: VecDeque<PendingResponse>,
    pub(super) payloads: VecDeque<u8>,
}

impl<M: HostMemory> Nic<M> {
    /// Responses of server unit `s` whose property has been read by `e`
    /// join the Concatenator (each at its own ready time).
    pub(super) fn server_step(&mut self, s: usize, e: Time) {
        while let Some(r) = self.servers[s].queue.front().copied() {
            if r.ready > e {
                break;
            }
            let su = &mut self.servers[s];
            su.queue.pop_front();
            self.core.payload.clear();
            let n = (r.prop_len as usize).min(su.payloads.len());
            self.core.payload.extend(su.payloads.drain(..n));
            let key = CqKey {
                pr_type: PrType::Response,
                dst: r.dst,
                port: 0,
            };
            push_pr(
                &mut self.concat,
                &mut self.tx,
                &mut self.frame,
                &mut self.psn,
                &mut self.core.stats,
                &self.cfg,
                r.ready,
                key,
                r.prop_len,
                &r.pr,
                &self.core.payload,
            );
        }
    }
}
