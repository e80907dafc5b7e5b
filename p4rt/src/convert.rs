//! Values between P4Runtime's byte strings and the engine's `u128` words,
//! and field matches between P4Runtime's `FieldMatch` and the engine's
//! [`KeyMatch`], with the checks the specification asks for (widths,
//! masked LPM and ternary values, empty ranges). Errors are messages that
//! name the field; the caller wraps them in INVALID_ARGUMENT.

use netsparse_externs::artifact::KeyMatch;

use crate::proto::{cfg, v1};

/// Widest value the engine holds.
pub const MAX_WIDTH: i32 = 128;

/// `value` as a big-endian byte string of the canonical (shortest, at
/// least one byte) form P4Runtime v1.3 servers return.
pub fn to_bytes(value: u128) -> Vec<u8> {
    let b = value.to_be_bytes();
    let first = b.iter().position(|x| *x != 0).unwrap_or(b.len() - 1);
    b[first..].to_vec()
}

/// `value` padded to the full width of a `width`-bit field (what clients
/// that predate canonical byte strings send).
pub fn to_bytes_padded(value: u128, width: i32) -> Vec<u8> {
    let n = ((width.max(1) + 7) / 8) as usize;
    let b = value.to_be_bytes();
    b[16 - n.min(16)..].to_vec()
}

/// A big-endian byte string as a value of a `width`-bit field. `what`
/// names the field in the error.
pub fn from_bytes(bytes: &[u8], width: i32, what: &str) -> Result<u128, String> {
    if bytes.is_empty() {
        return Err(format!("{what}: empty byte string"));
    }
    if width > MAX_WIDTH {
        return Err(format!(
            "{what}: {width}-bit values are not supported (at most {MAX_WIDTH})"
        ));
    }
    let significant = bytes.iter().skip_while(|b| **b == 0).count();
    if significant > 16 {
        return Err(format!(
            "{what}: {} bytes do not fit a {width}-bit field",
            bytes.len()
        ));
    }
    let mut v: u128 = 0;
    for b in &bytes[bytes.len() - significant..] {
        v = (v << 8) | u128::from(*b);
    }
    if width < 128 && v >> width != 0 {
        return Err(format!("{what}: value {v:#x} does not fit {width} bits"));
    }
    Ok(v)
}

fn mask(width: i32) -> u128 {
    if width >= 128 {
        u128::MAX
    } else {
        (1u128 << width) - 1
    }
}

/// The match kind a P4Info match field declares.
fn kind_of(m: &cfg::MatchField) -> Option<cfg::match_field::MatchType> {
    match &m.r#match {
        Some(cfg::match_field::Match::MatchType(k)) => {
            cfg::match_field::MatchType::try_from(*k).ok()
        }
        _ => None,
    }
}

/// Whether entries of `table` need a priority (ternary, range or optional
/// keys).
pub fn needs_priority(table: &cfg::Table) -> bool {
    use cfg::match_field::MatchType as M;
    table
        .match_fields
        .iter()
        .any(|m| matches!(kind_of(m), Some(M::Ternary | M::Range | M::Optional)))
}

/// Convert an entry's matches into one [`KeyMatch`] per key of `table`, in
/// key order; keys left out are don't-care (an error for exact and LPM...
/// LPM left out means /0, which is allowed).
pub fn key_matches(table: &cfg::Table, fms: &[v1::FieldMatch]) -> Result<Vec<KeyMatch>, String> {
    use cfg::match_field::MatchType as M;
    use v1::field_match::FieldMatchType as F;
    let tname = crate::p4info::name_of(&table.preamble);
    let mut out: Vec<Option<KeyMatch>> = vec![None; table.match_fields.len()];
    for fm in fms {
        let Some(i) = table.match_fields.iter().position(|m| m.id == fm.field_id) else {
            return Err(format!(
                "table {tname}: no match field with id {} (fields: {})",
                fm.field_id,
                table
                    .match_fields
                    .iter()
                    .map(|m| format!("{} = {}", m.id, m.name))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        };
        if out[i].is_some() {
            return Err(format!(
                "table {tname}: match field {} ({}) given twice",
                fm.field_id, table.match_fields[i].name
            ));
        }
        let mf = &table.match_fields[i];
        let w = mf.bitwidth;
        let what = format!("table {tname}, match field {} ({})", mf.id, mf.name);
        let kind = kind_of(mf);
        let m = match (&fm.field_match_type, kind) {
            (Some(F::Exact(e)), Some(M::Exact)) => KeyMatch::Exact {
                value: from_bytes(&e.value, w, &what)?,
            },
            (Some(F::Optional(o)), Some(M::Optional)) => KeyMatch::Exact {
                value: from_bytes(&o.value, w, &what)?,
            },
            (Some(F::Lpm(l)), Some(M::Lpm)) => {
                let v = from_bytes(&l.value, w, &what)?;
                if l.prefix_len < 0 || l.prefix_len > w {
                    return Err(format!(
                        "{what}: prefix length {} outside 0..={w}",
                        l.prefix_len
                    ));
                }
                if l.prefix_len == 0 {
                    return Err(format!(
                        "{what}: a /0 prefix must be left out of the entry (don't care)"
                    ));
                }
                let keep = mask(w) & !mask(w - l.prefix_len);
                if v & !keep != 0 {
                    return Err(format!(
                        "{what}: value {v:#x} has bits set past the /{} prefix",
                        l.prefix_len
                    ));
                }
                KeyMatch::Lpm {
                    value: v,
                    prefix_len: l.prefix_len as u16,
                }
            }
            (Some(F::Ternary(t)), Some(M::Ternary)) => {
                let v = from_bytes(&t.value, w, &what)?;
                let m = from_bytes(&t.mask, w, &format!("{what} mask"))?;
                if m == 0 {
                    return Err(format!(
                        "{what}: an all-zero mask must be left out of the entry (don't care)"
                    ));
                }
                if v & !m != 0 {
                    return Err(format!(
                        "{what}: value {v:#x} has bits outside the mask {m:#x}"
                    ));
                }
                KeyMatch::Ternary { value: v, mask: m }
            }
            (Some(F::Range(r)), Some(M::Range)) => {
                let lo = from_bytes(&r.low, w, &format!("{what} low"))?;
                let hi = from_bytes(&r.high, w, &format!("{what} high"))?;
                if lo > hi {
                    return Err(format!("{what}: empty range {lo:#x}..={hi:#x}"));
                }
                if lo == 0 && hi == mask(w) {
                    return Err(format!(
                        "{what}: the full range must be left out of the entry (don't care)"
                    ));
                }
                KeyMatch::Range { lo, hi }
            }
            (None, _) => return Err(format!("{what}: no match value")),
            (Some(_), k) => {
                return Err(format!(
                    "{what}: the field is matched {}, the entry gives another kind",
                    k.map_or("UNSPECIFIED", |k| k.as_str_name())
                ))
            }
        };
        out[i] = Some(m);
    }
    let mut full = Vec::with_capacity(out.len());
    for (m, mf) in out.into_iter().zip(&table.match_fields) {
        match m {
            Some(m) => full.push(m),
            None if kind_of(mf) == Some(M::Exact) => {
                return Err(format!(
                    "table {tname}: exact match field {} ({}) missing",
                    mf.id, mf.name
                ))
            }
            None => full.push(KeyMatch::Any),
        }
    }
    Ok(full)
}

/// The engine's matches of an entry as P4Runtime field matches
/// (don't-care keys left out).
pub fn field_matches(table: &cfg::Table, keys: &[KeyMatch]) -> Vec<v1::FieldMatch> {
    use cfg::match_field::MatchType as M;
    use v1::field_match as fm;
    let mut out = Vec::new();
    for (k, mf) in keys.iter().zip(&table.match_fields) {
        let t = match (k, kind_of(mf)) {
            (KeyMatch::Any, _) => continue,
            (KeyMatch::Exact { value }, Some(M::Optional)) => {
                fm::FieldMatchType::Optional(fm::Optional {
                    value: to_bytes(*value),
                })
            }
            (KeyMatch::Exact { value }, _) => fm::FieldMatchType::Exact(fm::Exact {
                value: to_bytes(*value),
            }),
            (KeyMatch::Lpm { prefix_len: 0, .. }, _) => continue,
            (KeyMatch::Lpm { value, prefix_len }, _) => fm::FieldMatchType::Lpm(fm::Lpm {
                value: to_bytes(*value),
                prefix_len: i32::from(*prefix_len),
            }),
            (KeyMatch::Ternary { mask: 0, .. }, _) => continue,
            (KeyMatch::Ternary { value, mask }, _) => fm::FieldMatchType::Ternary(fm::Ternary {
                value: to_bytes(*value),
                mask: to_bytes(*mask),
            }),
            (KeyMatch::Range { lo, hi }, _) => fm::FieldMatchType::Range(fm::Range {
                low: to_bytes(*lo),
                high: to_bytes(*hi),
            }),
        };
        out.push(v1::FieldMatch {
            field_id: mf.id,
            field_match_type: Some(t),
        });
    }
    out
}

/// An action's parameters, by id, as values in declaration order.
pub fn action_args(
    action: &cfg::Action,
    params: &[v1::action::Param],
) -> Result<Vec<u128>, String> {
    let aname = crate::p4info::name_of(&action.preamble);
    let mut args: Vec<Option<u128>> = vec![None; action.params.len()];
    for p in params {
        let Some(i) = action.params.iter().position(|d| d.id == p.param_id) else {
            return Err(format!(
                "action {aname}: no parameter with id {} (parameters: {})",
                p.param_id,
                action
                    .params
                    .iter()
                    .map(|d| format!("{} = {}", d.id, d.name))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        };
        let d = &action.params[i];
        if args[i].is_some() {
            return Err(format!(
                "action {aname}: parameter {} ({}) given twice",
                d.id, d.name
            ));
        }
        let what = format!("action {aname}, parameter {} ({})", d.id, d.name);
        args[i] = Some(from_bytes(&p.value, d.bitwidth, &what)?);
    }
    args.into_iter()
        .zip(&action.params)
        .map(|(a, d)| {
            a.ok_or_else(|| format!("action {aname}: parameter {} ({}) missing", d.id, d.name))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_round_trip_and_width_checks() {
        assert_eq!(to_bytes(0), vec![0]);
        assert_eq!(to_bytes(0x0a00_0001), vec![10, 0, 0, 1]);
        assert_eq!(to_bytes_padded(1, 9), vec![0, 1]);
        assert_eq!(from_bytes(&[0, 0, 1], 9, "p").unwrap(), 1);
        assert_eq!(from_bytes(&[1, 0xff], 9, "p").unwrap(), 0x1ff);
        let e = from_bytes(&[2, 0], 9, "port").unwrap_err();
        assert!(e.contains("port") && e.contains("9 bits"), "{e}");
        assert!(from_bytes(&[1, 0, 0], 9, "p").is_err());
        assert!(from_bytes(&[1; 17], 128, "p").is_err());
        assert!(from_bytes(&[], 9, "p").is_err());
    }
}
