//! Digests: what the program's `digest` calls send, delivered to the
//! primary controller as `DigestList`s on its StreamChannel.
//!
//! A controller turns a digest on with a `DigestEntry` Write (INSERT, then
//! MODIFY or DELETE) carrying `max_timeout_ns`, `max_list_size` and
//! `ack_timeout_ns`. While at least one digest is on, the server collects
//! the datapath's digests once a millisecond (one mailbox job, between two
//! packets) and batches them per digest: a list goes out when it holds
//! `max_list_size` digests (0: no limit) or its oldest digest has waited
//! `max_timeout_ns` (0: at the next collection). A digest whose data
//! equals one in a list not yet acknowledged (`DigestListAck`), or one
//! already waiting, is suppressed until the ack arrives or
//! `ack_timeout_ns` passes (0: nothing is suppressed), as the P4Runtime
//! specification asks. Every role's primary receives the lists. Digests
//! of a type no controller turned on, and lists with no primary to go to,
//! are dropped and counted; the counters
//! are in the statistics document under `"digests"`. Loading a new
//! pipeline turns every digest off.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use netsparse_engine::DigestMsg;
use serde::Serialize;
use tonic::Status;

use super::Shared;
use crate::convert;
use crate::p4info::{Entity, Schema};
use crate::proto::v1;
use crate::target::Target;

/// How often the server collects digests while one is on.
pub const COLLECT_EVERY: Duration = Duration::from_millis(1);

/// One digest's configuration, as the controller wrote it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Config {
    max_timeout: Duration,
    max_list_size: usize,
    ack_timeout: Duration,
}

impl Config {
    /// Check a `DigestEntry.Config`.
    pub fn of(c: &v1::digest_entry::Config, what: &str) -> Result<Config, Status> {
        let ns = |v: i64, field: &str| {
            u64::try_from(v)
                .map(Duration::from_nanos)
                .map_err(|_| Status::invalid_argument(format!("{what}: {field} {v} is negative")))
        };
        let size = usize::try_from(c.max_list_size).map_err(|_| {
            Status::invalid_argument(format!(
                "{what}: max_list_size {} is negative",
                c.max_list_size
            ))
        })?;
        Ok(Config {
            max_timeout: ns(c.max_timeout_ns, "max_timeout_ns")?,
            max_list_size: size,
            ack_timeout: ns(c.ack_timeout_ns, "ack_timeout_ns")?,
        })
    }

    fn to_proto(self) -> v1::digest_entry::Config {
        let ns = |d: Duration| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX);
        v1::digest_entry::Config {
            max_timeout_ns: ns(self.max_timeout),
            max_list_size: i32::try_from(self.max_list_size).unwrap_or(i32::MAX),
            ack_timeout_ns: ns(self.ack_timeout),
        }
    }
}

/// Counters of digest delivery (the `"digests"` part of the statistics
/// document).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct DigestCounters {
    /// Digests collected from the datapath.
    pub collected: u64,
    /// Digests sent to the controller in a list.
    pub delivered: u64,
    /// Lists sent.
    pub lists: u64,
    /// Digests dropped: their type was not turned on (no DigestEntry, or
    /// sent before the DigestEntry that turned it on), or the program's
    /// digest type is not in the P4Info.
    pub not_configured: u64,
    /// Digests dropped: the same data is in a list not yet acknowledged
    /// or already waiting.
    pub suppressed: u64,
    /// Digests dropped: no primary controller when their list was due.
    pub no_controller: u64,
    /// Digests dropped: the primary's stream was full.
    pub stream_full: u64,
    /// Acknowledgements received for lists in flight.
    pub acks: u64,
    /// Acknowledgements for lists not in flight (unknown or timed out).
    pub unknown_acks: u64,
    /// Lists whose ack did not come within `ack_timeout_ns`.
    pub ack_timeouts: u64,
}

struct Pending {
    since: Instant,
    /// Each digest's data, with its suppression key (its encoding) when
    /// duplicates are suppressed.
    data: Vec<(Option<Vec<u8>>, v1::P4Data)>,
}

/// The server's digest state.
#[derive(Default)]
pub(crate) struct Digests {
    configs: BTreeMap<u32, Config>,
    pending: BTreeMap<u32, Pending>,
    /// Lists sent and not acknowledged: (digest, list) → deadline.
    in_flight: BTreeMap<(u32, u64), Instant>,
    /// Data of pending and in-flight digests → the list it went in (0:
    /// still pending), for suppression.
    seen: BTreeMap<(u32, Vec<u8>), u64>,
    next_list: u64,
    pub counters: DigestCounters,
}

impl Digests {
    /// Whether any digest is on.
    pub fn active(&self) -> bool {
        !self.configs.is_empty()
    }

    /// Turn every digest off and forget what is waiting (a new pipeline).
    pub fn reset(&mut self) {
        self.configs.clear();
        self.pending.clear();
        self.in_flight.clear();
        self.seen.clear();
    }

    /// Check DigestEntry updates in order without applying them (an atomic
    /// batch's check).
    #[allow(clippy::type_complexity)]
    pub fn dry_run(
        &self,
        ops: &[Option<(v1::update::Type, u32, Option<Config>)>],
    ) -> Vec<Option<Result<(), Status>>> {
        let mut configs = self.configs.clone();
        ops.iter()
            .map(|o| o.map(|(ty, id, config)| Self::check(&mut configs, ty, id, config)))
            .collect()
    }

    /// Apply a DigestEntry update.
    pub fn write(
        &mut self,
        ty: v1::update::Type,
        id: u32,
        config: Option<Config>,
    ) -> Result<(), Status> {
        Self::check(&mut self.configs, ty, id, config)?;
        if ty == v1::update::Type::Delete {
            self.pending.remove(&id);
            self.seen.retain(|(d, _), _| *d != id);
            self.in_flight.retain(|(d, _), _| *d != id);
        }
        Ok(())
    }

    /// The configuration change of one update, on `configs`.
    fn check(
        configs: &mut BTreeMap<u32, Config>,
        ty: v1::update::Type,
        id: u32,
        config: Option<Config>,
    ) -> Result<(), Status> {
        use v1::update::Type;
        let exists = configs.contains_key(&id);
        match (ty, exists, config) {
            (Type::Insert, true, _) => Err(Status::already_exists(format!(
                "digest {id:#x} is already configured"
            ))),
            (Type::Modify | Type::Delete, false, _) => Err(Status::not_found(format!(
                "digest {id:#x} is not configured"
            ))),
            (Type::Delete, true, _) => {
                configs.remove(&id);
                Ok(())
            }
            (_, _, Some(c)) => {
                configs.insert(id, c);
                Ok(())
            }
            (_, _, None) => Err(Status::invalid_argument(format!(
                "digest {id:#x}: config missing"
            ))),
        }
    }

    /// The configured digests (all with `id` 0).
    pub fn read(&self, id: u32) -> Vec<v1::DigestEntry> {
        self.configs
            .iter()
            .filter(|(d, _)| id == 0 || **d == id)
            .map(|(d, c)| v1::DigestEntry {
                digest_id: *d,
                config: Some(c.to_proto()),
            })
            .collect()
    }

    /// Count `n` digests sent before their type was turned on (dropped).
    pub fn drop_stale(&mut self, n: u64) {
        self.counters.collected += n;
        self.counters.not_configured += n;
    }

    /// A `DigestListAck`: the list's data may be sent again.
    pub fn ack(&mut self, a: &v1::DigestListAck) {
        if self.in_flight.remove(&(a.digest_id, a.list_id)).is_some() {
            self.counters.acks += 1;
            self.seen
                .retain(|(d, _), l| !(*d == a.digest_id && *l == a.list_id));
        } else {
            self.counters.unknown_acks += 1;
        }
    }

    /// Take in digests collected at `now`.
    pub fn add(&mut self, schema: &Schema, msgs: Vec<DigestMsg>, now: Instant) {
        self.expire(now);
        for m in msgs {
            self.counters.collected += 1;
            let id = schema.find(&m.name, |s, id| match s.entity(id) {
                Some(Entity::Digest(_)) => Some(id),
                _ => None,
            });
            let Some((id, cfg)) = id.and_then(|id| Some((id, *self.configs.get(&id)?))) else {
                self.counters.not_configured += 1;
                continue;
            };
            let data = v1::P4Data {
                data: Some(v1::p4_data::Data::Struct(v1::P4StructLike {
                    members: m
                        .fields
                        .iter()
                        .map(|(_, v)| v1::P4Data {
                            data: Some(v1::p4_data::Data::Bitstring(convert::to_bytes(*v))),
                        })
                        .collect(),
                })),
            };
            let key = if cfg.ack_timeout.is_zero() {
                None
            } else {
                let key = prost::Message::encode_to_vec(&data);
                if self.seen.contains_key(&(id, key.clone())) {
                    self.counters.suppressed += 1;
                    continue;
                }
                self.seen.insert((id, key.clone()), 0);
                Some(key)
            };
            self.pending
                .entry(id)
                .or_insert_with(|| Pending {
                    since: now,
                    data: Vec::new(),
                })
                .data
                .push((key, data));
        }
    }

    /// Lists in flight past their ack timeout: their data may go again.
    fn expire(&mut self, now: Instant) {
        let late: Vec<(u32, u64)> = self
            .in_flight
            .iter()
            .filter(|(_, deadline)| **deadline <= now)
            .map(|(k, _)| *k)
            .collect();
        for (d, l) in late {
            self.in_flight.remove(&(d, l));
            self.counters.ack_timeouts += 1;
            self.seen.retain(|(sd, _), sl| !(*sd == d && *sl == l));
        }
    }

    /// The lists due at `now` (full, or their oldest digest waited long
    /// enough), numbered and marked in flight.
    pub fn due(&mut self, now: Instant) -> Vec<v1::DigestList> {
        let mut out = Vec::new();
        let ids: Vec<u32> = self.pending.keys().copied().collect();
        for id in ids {
            let Some(cfg) = self.configs.get(&id).copied() else {
                continue;
            };
            while let Some(p) = self.pending.get_mut(&id) {
                let full = cfg.max_list_size > 0 && p.data.len() >= cfg.max_list_size;
                let waited = now.saturating_duration_since(p.since) >= cfg.max_timeout;
                if !(full || waited) || p.data.is_empty() {
                    break;
                }
                let take = if cfg.max_list_size > 0 {
                    cfg.max_list_size.min(p.data.len())
                } else {
                    p.data.len()
                };
                let taken: Vec<(Option<Vec<u8>>, v1::P4Data)> = p.data.drain(..take).collect();
                if p.data.is_empty() {
                    self.pending.remove(&id);
                }
                self.next_list += 1;
                let list = self.next_list;
                let mut data = Vec::with_capacity(taken.len());
                let mut tracked = false;
                for (key, d) in taken {
                    if let Some(l) = key.and_then(|k| self.seen.get_mut(&(id, k))) {
                        *l = list;
                        tracked = true;
                    }
                    data.push(d);
                }
                if tracked {
                    self.in_flight.insert((id, list), now + cfg.ack_timeout);
                }
                out.push(v1::DigestList {
                    digest_id: id,
                    list_id: list,
                    data,
                    timestamp: SystemTime::now()
                        .duration_since(SystemTime::UNIX_EPOCH)
                        .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX)),
                });
            }
        }
        out
    }
}

/// Collect and deliver digests until the datapath stops.
pub(crate) async fn pump<T: Target>(shared: Arc<Shared<T>>) {
    let mut tick = tokio::time::interval(COLLECT_EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    loop {
        tick.tick().await;
        let active = shared.digests.lock().map(|d| d.active()).unwrap_or(false);
        if !active {
            continue;
        }
        let Ok(msgs) = shared.poster.run(|t: &mut T| t.take_digests()).await else {
            return;
        };
        let schema = Arc::clone(&shared.pipeline().schema);
        let now = Instant::now();
        let lists = match shared.digests.lock() {
            Ok(mut d) => {
                d.add(&schema, msgs, now);
                d.due(now)
            }
            Err(_) => return,
        };
        if lists.is_empty() {
            continue;
        }
        // Every role's primary gets the lists (roles have no filters here).
        let txs = shared.primary_txs();
        for l in lists {
            let n = l.data.len() as u64;
            let msg = v1::StreamMessageResponse {
                update: Some(v1::stream_message_response::Update::Digest(l)),
            };
            let sent = txs
                .iter()
                .filter(|tx| tx.try_send(Ok(msg.clone())).is_ok())
                .count();
            if let Ok(mut d) = shared.digests.lock() {
                if sent > 0 {
                    d.counters.lists += 1;
                    d.counters.delivered += n;
                } else if txs.is_empty() {
                    d.counters.no_controller += n;
                } else {
                    d.counters.stream_full += n;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::cfg;

    fn schema() -> Schema {
        Schema::new(cfg::P4Info {
            digests: vec![cfg::Digest {
                preamble: Some(cfg::Preamble {
                    id: 0x1700_0001,
                    name: "learn_t".into(),
                    ..Default::default()
                }),
                type_spec: None,
            }],
            ..Default::default()
        })
    }

    fn msg(mac: u128) -> DigestMsg {
        DigestMsg {
            receiver: 1,
            name: "learn_t".into(),
            fields: vec![("mac".into(), mac), ("port".into(), 2)],
        }
    }

    fn cfg(timeout_ms: u64, size: usize, ack_ms: u64) -> Config {
        Config {
            max_timeout: Duration::from_millis(timeout_ms),
            max_list_size: size,
            ack_timeout: Duration::from_millis(ack_ms),
        }
    }

    #[test]
    fn unconfigured_digests_are_counted_and_dropped() {
        let mut d = Digests::default();
        let t = Instant::now();
        d.add(&schema(), vec![msg(1)], t);
        assert_eq!(d.counters.not_configured, 1);
        assert!(d.due(t + Duration::from_secs(1)).is_empty());
    }

    #[test]
    fn lists_fill_to_max_size_then_wait_for_the_timeout() {
        let mut d = Digests::default();
        d.write(v1::update::Type::Insert, 0x1700_0001, Some(cfg(10, 2, 0)))
            .unwrap();
        let t = Instant::now();
        d.add(&schema(), vec![msg(1), msg(2), msg(3)], t);
        let lists = d.due(t);
        assert_eq!(lists.len(), 1, "one full list at once");
        assert_eq!(lists[0].data.len(), 2);
        assert!(d.due(t + Duration::from_millis(5)).is_empty(), "not yet");
        let rest = d.due(t + Duration::from_millis(10));
        assert_eq!(rest.len(), 1);
        assert_eq!(rest[0].data.len(), 1);
        assert!(rest[0].list_id > lists[0].list_id);
        let Some(v1::p4_data::Data::Struct(s)) = &rest[0].data[0].data else {
            panic!("a struct")
        };
        assert_eq!(
            s.members[0].data,
            Some(v1::p4_data::Data::Bitstring(vec![3]))
        );
    }

    #[test]
    fn same_data_is_suppressed_until_ack_or_timeout() {
        let mut d = Digests::default();
        d.write(v1::update::Type::Insert, 0x1700_0001, Some(cfg(0, 0, 100)))
            .unwrap();
        let s = schema();
        let t = Instant::now();
        d.add(&s, vec![msg(7), msg(7)], t);
        assert_eq!(d.counters.suppressed, 1, "duplicate while waiting");
        let l = d.due(t);
        assert_eq!(l[0].data.len(), 1);
        d.add(&s, vec![msg(7)], t + Duration::from_millis(1));
        assert_eq!(d.counters.suppressed, 2, "duplicate while in flight");
        d.ack(&v1::DigestListAck {
            digest_id: 0x1700_0001,
            list_id: l[0].list_id,
        });
        assert_eq!(d.counters.acks, 1);
        d.add(&s, vec![msg(7)], t + Duration::from_millis(2));
        let again = d.due(t + Duration::from_millis(2));
        assert_eq!(again.len(), 1, "sent again after the ack");
        // No ack this time: the timeout frees the data.
        d.add(&s, vec![msg(7)], t + Duration::from_millis(50));
        assert_eq!(d.counters.suppressed, 3);
        d.add(&s, vec![msg(7)], t + Duration::from_millis(200));
        assert_eq!(d.counters.ack_timeouts, 1);
        assert_eq!(d.due(t + Duration::from_millis(200)).len(), 1);
        d.ack(&v1::DigestListAck {
            digest_id: 0x1700_0001,
            list_id: 999,
        });
        assert_eq!(d.counters.unknown_acks, 1);
    }

    #[test]
    fn writes_follow_insert_modify_delete_rules() {
        use v1::update::Type;
        let mut d = Digests::default();
        let c = Some(cfg(1, 1, 1));
        assert_eq!(
            d.write(Type::Modify, 5, c).unwrap_err().code(),
            tonic::Code::NotFound
        );
        d.write(Type::Insert, 5, c).unwrap();
        assert_eq!(
            d.write(Type::Insert, 5, c).unwrap_err().code(),
            tonic::Code::AlreadyExists
        );
        d.write(Type::Modify, 5, Some(cfg(2, 2, 2))).unwrap();
        assert_eq!(d.read(0).len(), 1);
        assert_eq!(d.read(5)[0].config.unwrap().max_list_size, 2);
        d.write(Type::Delete, 5, None).unwrap();
        assert!(!d.active());
        let neg = v1::digest_entry::Config {
            max_timeout_ns: -1,
            ..Default::default()
        };
        assert!(Config::of(&neg, "digest 5")
            .unwrap_err()
            .message()
            .contains("max_timeout_ns -1"));
    }
}
