//! ROLLBACK_ON_ERROR and DATAPLANE_ATOMIC Writes: the batch runs as one
//! datapath job (so packets see it whole, as every batch here); before
//! each update is applied, the job records the updates that undo it, read
//! from the current state (the old entry, default action, cells, meter
//! rates, replicas). When an update fails, the updates already applied
//! are undone in reverse order, still inside the same job, so no packet
//! sees a partial batch and the state is what it was before the Write
//! (a deleted entry comes back with its action, direct counter and direct
//! meter rates; the meter's token buckets start full, as after any
//! configuration). A Property Cache invalidation is not undone: it only
//! empties a cache that refills from misses.

use netsparse_engine::control::ControlPlane;
use netsparse_engine::ControlPlaneError;
use tonic::Status;

use super::write::{apply, status_of, Op};
use crate::proto::v1;

/// The updates that undo `op` on `t` as it is now (empty when `op` will
/// fail or needs no undo).
fn undo_of<T: ControlPlane + ?Sized>(t: &T, op: &Op) -> Result<Vec<Op>, ControlPlaneError> {
    use v1::update::Type;
    Ok(match op {
        Op::Insert {
            table,
            matches,
            priority,
            ..
        } => vec![Op::Delete {
            table: table.clone(),
            matches: matches.clone(),
            priority: *priority,
        }],
        Op::Modify {
            table,
            matches,
            priority,
            ..
        } => match t.find_entry(table, matches, *priority)? {
            Some(h) => {
                let e = t.entry(table, h)?;
                vec![Op::Modify {
                    table: table.clone(),
                    matches: matches.clone(),
                    priority: *priority,
                    action: e.action,
                    args: e.args,
                }]
            }
            None => Vec::new(),
        },
        Op::Delete {
            table,
            matches,
            priority,
        } => match t.find_entry(table, matches, *priority)? {
            Some(h) => {
                let e = t.entry(table, h)?;
                let mut undo = vec![Op::Insert {
                    table: table.clone(),
                    matches: matches.clone(),
                    action: e.action,
                    args: e.args,
                    priority: *priority,
                }];
                // The re-inserted entry gets its counter and meter back (a
                // table without a direct counter reads zero).
                if e.counter != Default::default() {
                    undo.push(Op::DirectCounterWrite {
                        table: table.clone(),
                        matches: matches.clone(),
                        priority: *priority,
                        cell: e.counter,
                    });
                }
                if let Some(meter) = t.direct_meter_of(table)? {
                    let rates = t.meter_get_rates(&meter, u64::from(h.0))?;
                    let marked = t.meter_marked(&meter, u64::from(h.0))?;
                    if rates.is_some() {
                        undo.push(Op::DirectMeter {
                            table: table.clone(),
                            matches: matches.clone(),
                            priority: *priority,
                            meter: meter.clone(),
                            rates,
                        });
                    }
                    if marked != <[netsparse_externs::stateful::CounterCell; 3]>::default() {
                        undo.push(Op::DirectMeterMarked {
                            table: table.clone(),
                            matches: matches.clone(),
                            priority: *priority,
                            meter,
                            marked,
                        });
                    }
                }
                undo
            }
            None => Vec::new(),
        },
        Op::SetDefault { table, .. } => {
            let d = t.default_entry(table)?;
            vec![Op::SetDefault {
                table: table.clone(),
                action: d.action,
                args: d.args,
            }]
        }
        Op::RegisterWrite {
            name, index, size, ..
        } => cells(*index, *size)
            .map(|i| {
                Ok(Op::RegisterWrite {
                    name: name.clone(),
                    index: Some(i),
                    size: *size,
                    value: t.register_read(name, i)?,
                })
            })
            .collect::<Result<_, ControlPlaneError>>()?,
        // An indexed counter (the only kind P4Runtime resets): every cell.
        Op::CounterReset { name } => {
            let mut undo = Vec::new();
            let mut i = 0;
            while let Ok(cell) = t.counter_read(name, i) {
                undo.push(Op::CounterWrite {
                    name: name.clone(),
                    index: Some(i),
                    size: 0,
                    cell,
                });
                i += 1;
            }
            undo
        }
        Op::CounterWrite {
            name, index, size, ..
        } => cells(*index, *size)
            .map(|i| {
                Ok(Op::CounterWrite {
                    name: name.clone(),
                    index: Some(i),
                    size: *size,
                    cell: t.counter_read(name, i)?,
                })
            })
            .collect::<Result<_, ControlPlaneError>>()?,
        Op::DirectCounterWrite {
            table,
            matches,
            priority,
            ..
        } => match t.find_entry(table, matches, *priority)? {
            Some(h) => vec![Op::DirectCounterWrite {
                table: table.clone(),
                matches: matches.clone(),
                priority: *priority,
                cell: t.direct_counter_read(table, h)?,
            }],
            None => Vec::new(),
        },
        Op::Meter { name, index, .. } => {
            let cells: Vec<u64> = match index {
                Some(i) => vec![*i],
                None => {
                    let mut all = Vec::new();
                    let mut i = 0;
                    while t.meter_get_rates(name, i).is_ok() {
                        all.push(i);
                        i += 1;
                    }
                    all
                }
            };
            let mut undo = Vec::with_capacity(cells.len());
            for i in cells {
                undo.push(Op::Meter {
                    name: name.clone(),
                    index: Some(i),
                    rates: t.meter_get_rates(name, i)?,
                });
            }
            undo
        }
        Op::DirectMeter {
            table,
            matches,
            priority,
            meter,
            ..
        } => match t.find_entry(table, matches, *priority)? {
            Some(h) => vec![Op::DirectMeter {
                table: table.clone(),
                matches: matches.clone(),
                priority: *priority,
                meter: meter.clone(),
                rates: t.meter_get_rates(meter, u64::from(h.0))?,
            }],
            None => Vec::new(),
        },
        // Undo-only: never itself undone.
        Op::DirectMeterMarked { .. } => Vec::new(),
        Op::McGroup { group, .. } => {
            let old = t.mc_groups().into_iter().find(|(g, _)| g == group);
            vec![match old {
                Some((_, replicas)) => Op::McGroup {
                    ty: Type::Modify,
                    group: *group,
                    replicas,
                },
                None => Op::McGroup {
                    ty: Type::Delete,
                    group: *group,
                    replicas: Vec::new(),
                },
            }]
        }
        Op::CloneSession { session, .. } => {
            let old = t
                .mirroring_sessions()
                .into_iter()
                .find(|(s, _)| s == session);
            vec![match old {
                Some((_, replicas)) => Op::CloneSession {
                    ty: Type::Modify,
                    session: *session,
                    replicas,
                },
                None => Op::CloneSession {
                    ty: Type::Delete,
                    session: *session,
                    replicas: Vec::new(),
                },
            }]
        }
        // Forgetting cannot be undone: a rolled-back batch leaves the cache
        // or filter empty (it refills from traffic).
        Op::CacheInvalidate | Op::FilterClear | Op::Digest { .. } => Vec::new(),
    })
}

/// The cells an update touches: `index`, or all `size` of them.
fn cells(index: Option<u64>, size: u64) -> std::ops::Range<u64> {
    match index {
        Some(i) => i..i + 1,
        None => 0..size,
    }
}

/// An undo of a McGroup/CloneSession whose original was a DELETE must
/// re-create it (the MODIFY recorded would find nothing).
fn fix_pre_undo(op: &Op, undo: &mut [Op]) {
    use v1::update::Type;
    let deleted = matches!(
        op,
        Op::McGroup {
            ty: Type::Delete,
            ..
        } | Op::CloneSession {
            ty: Type::Delete,
            ..
        }
    );
    if deleted {
        for u in undo {
            if let Op::McGroup { ty, .. } | Op::CloneSession { ty, .. } = u {
                *ty = Type::Insert;
            }
        }
    }
}

/// Apply `ops` all or nothing. `Ok(results)` has every update's result
/// (`None` where there was no op); on a failure the updates applied before
/// it are undone and the others report ABORTED. `Err` only if an undo
/// itself failed (the state may then be partial; the message says which).
pub(crate) fn apply_all<T: ControlPlane + ?Sized>(
    t: &mut T,
    ops: &[Option<Op>],
) -> Result<Vec<Option<Result<(), Status>>>, Status> {
    let mut undos: Vec<Vec<Op>> = Vec::new();
    let mut failed: Option<(usize, Status)> = None;
    for (i, op) in ops.iter().enumerate() {
        let Some(op) = op else { continue };
        let mut undo = match undo_of(&*t, op) {
            Ok(u) => u,
            Err(e) => {
                failed = Some((i, status_of(&e)));
                break;
            }
        };
        fix_pre_undo(op, &mut undo);
        if let Err(s) = apply(t, op) {
            failed = Some((i, s));
            break;
        }
        undos.push(undo);
    }
    let Some((at, status)) = failed else {
        return Ok(ops.iter().map(|o| o.as_ref().map(|_| Ok(()))).collect());
    };
    for (k, u) in undos.iter().rev().flatten().enumerate() {
        if let Err(s) = apply(t, u) {
            return Err(Status::internal(format!(
                "rolling back after update {at} failed ({}): undo step {k} failed: {}",
                status.message(),
                s.message()
            )));
        }
    }
    Ok(ops
        .iter()
        .enumerate()
        .map(|(i, o)| {
            o.as_ref().map(|_| {
                if i == at {
                    Err(status.clone())
                } else {
                    Err(Status::aborted(format!(
                        "not applied: update {at} of this atomic batch failed"
                    )))
                }
            })
        })
        .collect())
}
