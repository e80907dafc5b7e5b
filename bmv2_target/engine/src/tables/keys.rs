//! A table's keys on the control-plane side: a match as a user gives it
//! (exact, LPM, ternary, range, optional, wildcard) checked against the
//! key's kind and width and normalised, then cut into what each index
//! stores — packed exact values, an LPM prefix left-aligned, a priority
//! list's (value, mask) or range.

use netsparse_externs::artifact::{KeyMatch, MatchKind};

use super::KeySpec;
use crate::error::ControlPlaneError;
use crate::word::mask128;

/// Pack exact key values into a u64 (total width ≤ 64).
#[inline]
pub(super) fn pack64(keys: &[KeySpec], vals: &[u128]) -> u64 {
    let mut acc = 0u64;
    for (k, v) in keys.iter().zip(vals) {
        acc = if k.width >= 64 {
            *v as u64
        } else {
            (acc << k.width) | (*v as u64)
        };
    }
    acc
}

/// Pack exact key values into a u128 (total width ≤ 128).
#[inline]
pub(super) fn pack128(keys: &[KeySpec], vals: &[u128]) -> u128 {
    let mut acc = 0u128;
    for (k, v) in keys.iter().zip(vals) {
        acc = if k.width >= 128 {
            *v
        } else {
            (acc << k.width) | *v
        };
    }
    acc
}

pub(super) fn match_value(m: &KeyMatch) -> u128 {
    match m {
        KeyMatch::Exact { value } | KeyMatch::Lpm { value, .. } => *value,
        KeyMatch::Ternary { value, .. } => *value,
        KeyMatch::Range { lo, .. } => *lo,
        KeyMatch::Any => 0,
    }
}

fn kind_name(m: &KeyMatch) -> &'static str {
    match m {
        KeyMatch::Exact { .. } => "exact",
        KeyMatch::Lpm { .. } => "lpm",
        KeyMatch::Ternary { .. } => "ternary",
        KeyMatch::Range { .. } => "range",
        KeyMatch::Any => "wildcard",
    }
}

/// If `mask` is a prefix mask of `width` bits, its length.
fn prefix_len_of(mask: u128, width: u16) -> Option<u16> {
    let full = mask128(width);
    let ones = mask.count_ones() as u16;
    let expect = if ones == 0 {
        0
    } else {
        full & !mask128(width - ones)
    };
    (mask == expect).then_some(ones)
}

/// Normalise one key's match (see [`TableRt::normalize`]).
pub(super) fn normalize_one(
    table: &str,
    k: &KeySpec,
    m: &KeyMatch,
) -> Result<KeyMatch, ControlPlaneError> {
    let full = mask128(k.width);
    let fits = |v: u128| -> Result<u128, ControlPlaneError> {
        if v & !full != 0 {
            Err(ControlPlaneError::KeyTooWide {
                table: table.to_owned(),
                key: k.name.clone(),
                value: v,
                width: k.width,
            })
        } else {
            Ok(v)
        }
    };
    let bad = || ControlPlaneError::KeyKind {
        table: table.to_owned(),
        key: k.name.clone(),
        kind: k.kind,
        got: kind_name(m),
    };
    let prefix_mask = |len: u16| -> Result<u128, ControlPlaneError> {
        if len > k.width {
            return Err(ControlPlaneError::PrefixTooLong {
                table: table.to_owned(),
                key: k.name.clone(),
                len,
                width: k.width,
            });
        }
        Ok(if len == 0 {
            0
        } else {
            full & !mask128(k.width - len)
        })
    };
    Ok(match (k.kind, m.clone()) {
        (MatchKind::Exact, KeyMatch::Exact { value }) => KeyMatch::Exact {
            value: fits(value)?,
        },
        (MatchKind::Exact, _) => return Err(bad()),
        (MatchKind::Lpm, KeyMatch::Lpm { value, prefix_len }) => {
            let pm = prefix_mask(prefix_len)?;
            KeyMatch::Lpm {
                value: fits(value)? & pm,
                prefix_len,
            }
        }
        (MatchKind::Lpm, KeyMatch::Exact { value }) => KeyMatch::Lpm {
            value: fits(value)?,
            prefix_len: k.width,
        },
        (MatchKind::Lpm, KeyMatch::Any) => KeyMatch::Lpm {
            value: 0,
            prefix_len: 0,
        },
        (MatchKind::Lpm, KeyMatch::Ternary { value, mask }) => {
            let len = prefix_len_of(fits(mask)?, k.width).ok_or_else(bad)?;
            KeyMatch::Lpm {
                value: fits(value)? & mask,
                prefix_len: len,
            }
        }
        (MatchKind::Lpm, KeyMatch::Range { .. }) => return Err(bad()),
        (MatchKind::Ternary, KeyMatch::Ternary { value, mask }) => {
            let mask = fits(mask)?;
            KeyMatch::Ternary {
                value: fits(value)? & mask,
                mask,
            }
        }
        (MatchKind::Ternary, KeyMatch::Exact { value }) => KeyMatch::Ternary {
            value: fits(value)?,
            mask: full,
        },
        (MatchKind::Ternary, KeyMatch::Any) => KeyMatch::Ternary { value: 0, mask: 0 },
        (MatchKind::Ternary, KeyMatch::Lpm { value, prefix_len }) => {
            let pm = prefix_mask(prefix_len)?;
            KeyMatch::Ternary {
                value: fits(value)? & pm,
                mask: pm,
            }
        }
        (MatchKind::Ternary, KeyMatch::Range { .. }) => return Err(bad()),
        (MatchKind::Range, KeyMatch::Range { lo, hi }) => {
            let (lo, hi) = (fits(lo)?, fits(hi)?);
            if lo > hi {
                return Err(ControlPlaneError::EmptyRange {
                    table: table.to_owned(),
                    key: k.name.clone(),
                    lo,
                    hi,
                });
            }
            KeyMatch::Range { lo, hi }
        }
        (MatchKind::Range, KeyMatch::Exact { value }) => {
            let v = fits(value)?;
            KeyMatch::Range { lo: v, hi: v }
        }
        (MatchKind::Range, KeyMatch::Any) => KeyMatch::Range { lo: 0, hi: full },
        (MatchKind::Range, _) => return Err(bad()),
        (MatchKind::Optional, KeyMatch::Exact { value }) => KeyMatch::Exact {
            value: fits(value)?,
        },
        (MatchKind::Optional, KeyMatch::Any) => KeyMatch::Any,
        (MatchKind::Optional, KeyMatch::Ternary { value, mask }) if mask == full => {
            KeyMatch::Exact {
                value: fits(value)?,
            }
        }
        (MatchKind::Optional, KeyMatch::Ternary { mask: 0, .. }) => KeyMatch::Any,
        (MatchKind::Optional, _) => return Err(bad()),
    })
}

/// (value, prefix length) of the LPM key's match.
pub(super) fn lpm_part(m: &KeyMatch, width: u16) -> (u128, u16) {
    match *m {
        KeyMatch::Lpm { value, prefix_len } => (value, prefix_len),
        KeyMatch::Exact { value } => (value, width),
        _ => (0, 0),
    }
}

/// The exact-key values of an LPM entry (every key but `pos`).
pub(super) fn exact_part(keys: &[KeyMatch], pos: usize) -> Box<[u128]> {
    keys.iter()
        .enumerate()
        .filter(|(i, _)| *i != pos)
        .map(|(_, m)| match_value(m))
        .collect()
}

/// Left-align a `width`-bit value in a `u128`.
#[inline]
pub(super) fn align(v: u128, width: u16) -> u128 {
    if width >= 128 {
        v
    } else {
        v << (128 - width)
    }
}

/// A priority-table match as (a, b, is_range).
pub(super) fn prio_match(m: &KeyMatch, width: u16) -> (u128, u128, bool) {
    let full = mask128(width);
    match *m {
        KeyMatch::Exact { value } => (value, full, false),
        KeyMatch::Lpm { value, prefix_len } => {
            let pm = if prefix_len == 0 {
                0
            } else {
                full & !mask128(width - prefix_len.min(width))
            };
            (value & pm, pm, false)
        }
        KeyMatch::Ternary { value, mask } => (value & mask, mask, false),
        KeyMatch::Range { lo, hi } => (lo, hi, true),
        KeyMatch::Any => (0, 0, false),
    }
}
