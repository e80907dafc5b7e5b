//! Parsing of control-plane values and key matches, shared by the runtime
//! JSON loader, the BMv2 command-file loader and (later) the STF runner.
//!
//! Value syntax (`parse_value`): decimal (`42`, `-1` = two's complement in
//! the target width), hexadecimal `0x2a`, binary `0b101010`, octal `0o52`,
//! an IPv4 address `10.0.1.1`, a MAC address `00:11:22:33:44:55`, an IPv6
//! address `fe80::1`; `_` separators are allowed in numbers.
//!
//! Match syntax (`parse_match`): `value` (exact), `value/len` (LPM),
//! `value&&&mask` (ternary), `lo->hi` (range), `*` or `_` (wildcard).

use std::net::{Ipv4Addr, Ipv6Addr};

use netsparse_externs::artifact::KeyMatch;

use crate::word::mask128;

/// Why a value did not parse or fit.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ValueError {
    /// Not a number, address or other known syntax.
    #[error("`{0}` is not a number, IPv4/IPv6 or MAC address")]
    Syntax(String),
    /// A value wider than the field.
    #[error("`{text}` does not fit in {width} bits")]
    TooWide {
        /// The text.
        text: String,
        /// The width.
        width: u16,
    },
    /// A prefix length that is not a number or too long.
    #[error("bad prefix length in `{text}` (the key is {width} bits)")]
    Prefix {
        /// The text.
        text: String,
        /// The width.
        width: u16,
    },
}

fn digits(s: &str, radix: u32) -> Option<u128> {
    let s: String = s.chars().filter(|c| *c != '_').collect();
    if s.is_empty() {
        return None;
    }
    u128::from_str_radix(&s, radix).ok()
}

fn parse_mac(s: &str) -> Option<u128> {
    let parts: Vec<&str> = s.split(':').collect();
    if parts.len() != 6 {
        return None;
    }
    let mut v = 0u128;
    for p in parts {
        if p.is_empty() || p.len() > 2 {
            return None;
        }
        v = (v << 8) | u128::from(u8::from_str_radix(p, 16).ok()?);
    }
    Some(v)
}

/// Parse `text` as an unsigned value of any width (no width check).
pub fn parse_raw(text: &str) -> Result<u128, ValueError> {
    let t = text.trim();
    let err = || ValueError::Syntax(t.to_owned());
    let lower = t.to_ascii_lowercase();
    if let Some(h) = lower.strip_prefix("0x") {
        return digits(h, 16).ok_or_else(err);
    }
    if let Some(b) = lower.strip_prefix("0b") {
        return digits(b, 2).ok_or_else(err);
    }
    if let Some(o) = lower.strip_prefix("0o") {
        return digits(o, 8).ok_or_else(err);
    }
    if t.contains(':') {
        if let Some(m) = parse_mac(t) {
            return Ok(m);
        }
        return t.parse::<Ipv6Addr>().map(u128::from).map_err(|_| err());
    }
    if t.contains('.') {
        return t
            .parse::<Ipv4Addr>()
            .map(|a| u128::from(u32::from(a)))
            .map_err(|_| err());
    }
    digits(t, 10).ok_or_else(err)
}

/// Parse `text` as a value of `width` bits (`-N` is two's complement).
pub fn parse_value(text: &str, width: u16) -> Result<u128, ValueError> {
    let t = text.trim();
    let m = mask128(width);
    if let Some(neg) = t.strip_prefix('-') {
        let v = parse_raw(neg)?;
        // -v must be representable as int<width>: v <= 2^(width-1).
        let limit = if width == 0 {
            0
        } else {
            1u128 << (width - 1).min(127)
        };
        if v > limit {
            return Err(ValueError::TooWide {
                text: t.to_owned(),
                width,
            });
        }
        return Ok(0u128.wrapping_sub(v) & m);
    }
    let v = parse_raw(t)?;
    if v & !m != 0 {
        return Err(ValueError::TooWide {
            text: t.to_owned(),
            width,
        });
    }
    Ok(v)
}

/// Parse a key match for a key of `width` bits. The match kind comes from
/// the syntax; the table checks it against the key's kind.
pub fn parse_match(text: &str, width: u16) -> Result<KeyMatch, ValueError> {
    let t = text.trim();
    if t == "*" || t == "_" {
        return Ok(KeyMatch::Any);
    }
    if let Some((v, m)) = t.split_once("&&&") {
        return Ok(KeyMatch::Ternary {
            value: parse_value(v, width)?,
            mask: parse_value(m, width)?,
        });
    }
    if let Some((lo, hi)) = t.split_once("->") {
        return Ok(KeyMatch::Range {
            lo: parse_value(lo, width)?,
            hi: parse_value(hi, width)?,
        });
    }
    if let Some((v, len)) = t.rsplit_once('/') {
        let len: u16 = len.trim().parse().map_err(|_| ValueError::Prefix {
            text: t.to_owned(),
            width,
        })?;
        if len > width {
            return Err(ValueError::Prefix {
                text: t.to_owned(),
                width,
            });
        }
        return Ok(KeyMatch::Lpm {
            value: parse_value(v, width)?,
            prefix_len: len,
        });
    }
    Ok(KeyMatch::Exact {
        value: parse_value(t, width)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_addresses() {
        assert_eq!(parse_value("42", 8), Ok(42));
        assert_eq!(parse_value("0x2A", 8), Ok(42));
        assert_eq!(parse_value("0b101010", 8), Ok(42));
        assert_eq!(parse_value("1_000", 16), Ok(1000));
        assert_eq!(parse_value("10.0.1.1", 32), Ok(0x0a00_0101));
        assert_eq!(parse_value("00:11:22:33:44:55", 48), Ok(0x0011_2233_4455));
        assert_eq!(parse_value("fe80::1", 128), Ok(0xfe80_u128 << 112 | 1));
        assert_eq!(parse_value("-1", 8), Ok(0xff));
        assert_eq!(parse_value("-128", 8), Ok(0x80));
        assert!(parse_value("-129", 8).is_err());
        assert_eq!(
            parse_value("256", 8),
            Err(ValueError::TooWide {
                text: "256".into(),
                width: 8
            })
        );
        assert!(parse_value("10.0.1", 32).is_err());
        assert!(parse_value("zz", 32).is_err());
        assert!(parse_value("", 32).is_err());
    }

    #[test]
    fn matches() {
        assert_eq!(
            parse_match("10.0.0.0/8", 32),
            Ok(KeyMatch::Lpm {
                value: 0x0a00_0000,
                prefix_len: 8
            })
        );
        assert_eq!(
            parse_match("0x0a&&&0xff", 8),
            Ok(KeyMatch::Ternary {
                value: 10,
                mask: 255
            })
        );
        assert_eq!(parse_match("1->5", 8), Ok(KeyMatch::Range { lo: 1, hi: 5 }));
        assert_eq!(parse_match("*", 8), Ok(KeyMatch::Any));
        assert_eq!(parse_match("7", 8), Ok(KeyMatch::Exact { value: 7 }));
        assert!(parse_match("10.0.0.0/33", 32).is_err());
    }
}
