//! Control-plane values over 128 bits. The compiler splits a table key or an
//! action parameter over 128 bits into 128-bit parts named `name$0` (most
//! significant) to `name$n`; [`split_wide`] turns one value written for the
//! whole (`0x...`, `0b...`, `0o...`, decimal, `*` digits, `v &&& m`, `*`)
//! into one text per part, which the ordinary parsers then read.

use netsparse_engine::control::values::ValueError;

/// A number of up to 4096 bits: 128-bit limbs, least significant first,
/// and the mask of the digits written that are not `*`.
struct Wide {
    value: Vec<u128>,
    mask: Vec<u128>,
}

const LIMBS: usize = 4096 / 128 + 1;

fn parse_wide(text: &str) -> Result<Wide, ValueError> {
    let t = text.trim().to_ascii_lowercase();
    let syntax = || ValueError::Syntax(text.to_owned());
    let (digits, radix) = if let Some(d) = t.strip_prefix("0x") {
        (d, 16u32)
    } else if let Some(d) = t.strip_prefix("0b") {
        (d, 2)
    } else if let Some(d) = t.strip_prefix("0o") {
        (d, 8)
    } else {
        (t.as_str(), 10)
    };
    let mut value = vec![0u128; LIMBS];
    let mut mask = vec![0u128; LIMBS];
    let mut any = false;
    // value = value * radix + d, limb by limb (64-bit halves keep the carry exact).
    let mul_add = |v: &mut Vec<u128>, d: u128| -> bool {
        let mut carry = d;
        for l in v.iter_mut() {
            let lo = (*l as u64 as u128) * u128::from(radix) + carry;
            let hi = (*l >> 64) * u128::from(radix) + (lo >> 64);
            *l = (lo as u64 as u128) | (hi << 64);
            carry = hi >> 64;
        }
        carry == 0
    };
    for c in digits.chars().filter(|c| *c != '_') {
        any = true;
        let (d, care) = if c == '*' && radix != 10 {
            (0, 0)
        } else {
            (
                u128::from(c.to_digit(radix).ok_or_else(syntax)?),
                u128::from(radix - 1),
            )
        };
        if !mul_add(&mut value, d) || !mul_add(&mut mask, care) {
            return Err(ValueError::TooWide {
                text: text.to_owned(),
                width: 4096,
            });
        }
    }
    if !any {
        return Err(syntax());
    }
    if radix == 10 {
        mask = vec![u128::MAX; LIMBS];
    }
    Ok(Wide { value, mask })
}

/// Bits `lo .. lo + w` (`w <= 128`) of limbs `v`.
fn bits(v: &[u128], lo: usize, w: usize) -> u128 {
    let (k, s) = (lo / 128, lo % 128);
    let mut x = v.get(k).copied().unwrap_or(0) >> s;
    if s > 0 {
        x |= v.get(k + 1).copied().unwrap_or(0) << (128 - s);
    }
    if w < 128 {
        x &= (1u128 << w) - 1;
    }
    x
}

/// Whether `v` has a bit set at or above bit `w`.
fn above(v: &[u128], w: usize) -> bool {
    v.iter().enumerate().any(|(k, x)| {
        let lo = 128 * k;
        if lo >= w {
            *x != 0
        } else {
            lo + 128 > w && x >> (w - lo) != 0
        }
    })
}

/// Split `text`, a value for a key or parameter of `widths` parts (most
/// significant first), into one text per part. `ternary`: the key is
/// ternary (a number's mask is its digits written that are not `*`, as for
/// a narrow key; `v &&& m` and `*` are split part by part).
pub(super) fn split_wide(
    text: &str,
    widths: &[u16],
    ternary: bool,
) -> Result<Vec<String>, ValueError> {
    let t = text.trim();
    if t == "*" || t == "_" {
        return Ok(vec![t.to_owned(); widths.len()]);
    }
    let total: usize = widths.iter().map(|w| usize::from(*w)).sum();
    let fits = |w: &Wide| {
        if above(&w.value, total) {
            Err(ValueError::TooWide {
                text: text.to_owned(),
                width: total as u16,
            })
        } else {
            Ok(())
        }
    };
    let (value, mask) = if let Some((v, m)) = t.split_once("&&&") {
        let (v, m) = (parse_wide(v)?, parse_wide(m)?);
        fits(&v)?;
        fits(&m)?;
        (v.value, Some(m.value))
    } else {
        let w = parse_wide(t)?;
        fits(&w)?;
        (w.value, ternary.then_some(w.mask))
    };
    let mut out = Vec::with_capacity(widths.len());
    let mut lo = total;
    for w in widths {
        lo -= usize::from(*w);
        let v = bits(&value, lo, usize::from(*w));
        out.push(match &mask {
            Some(m) => format!("{v:#x}&&&{:#x}", bits(m, lo, usize::from(*w))),
            None => format!("{v:#x}"),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_a_200_bit_value_into_its_parts() {
        // 2^128 + 5 over parts of 72 and 128 bits.
        let v = "0x1_00000000000000000000000000000005";
        assert_eq!(split_wide(v, &[72, 128], false).unwrap(), ["0x1", "0x5"]);
        let dec = "340282366920938463463374607431768211461"; // 2^128 + 5
        assert_eq!(split_wide(dec, &[72, 128], false).unwrap(), ["0x1", "0x5"]);
    }

    #[test]
    fn ternary_masks_split_with_the_value() {
        let out = split_wide("0x1** 00000000000000000000000000000000", &[72, 128], true);
        assert!(out.is_err(), "a space is not a digit");
        let out = split_wide(
            "0x12_0000000000000000000000000000000f &&& 0xff_000000000000000000000000000000ff",
            &[72, 128],
            true,
        )
        .unwrap();
        assert_eq!(out, ["0x12&&&0xff", "0xf&&&0xff"]);
        let out = split_wide("0x1*_********************************", &[72, 128], true).unwrap();
        assert_eq!(out, ["0x10&&&0xf0", "0x0&&&0x0"]);
        assert_eq!(split_wide("*", &[72, 128], true).unwrap(), ["*", "*"]);
    }

    #[test]
    fn too_wide_and_bad_digits_are_errors() {
        let big = format!("0x1{}", "0".repeat(50)); // 201 bits
        assert!(matches!(
            split_wide(&big, &[72, 128], false),
            Err(ValueError::TooWide { width: 200, .. })
        ));
        assert!(matches!(
            split_wide("0xg", &[72, 128], false),
            Err(ValueError::Syntax(_))
        ));
        let huge = format!("0x{}", "f".repeat(1100));
        assert!(split_wide(&huge, &[72, 128], false).is_err());
    }
}
