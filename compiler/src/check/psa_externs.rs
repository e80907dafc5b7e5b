//! PSA's stateless and checksum externs (`<psa.p4>`): what the constructor
//! arguments of `Hash`, `Checksum`, `InternetChecksum`, `Random` and
//! `Digest` make of an instance, and the argument rules of their methods.
//! Misuse the architecture forbids (a `Hash<O>` whose `O` is not `bit<W>`,
//! `Random` bounds out of order, `InternetChecksum` data that is not whole
//! 16-bit words) is E0405.

use netsparse_externs::artifact::HashAlgo;

use super::Checker;
use crate::ast::Span;
use crate::codes;
use crate::diag::Diagnostic;
use crate::ir::{Arg, Builtin, ExternInstKind, Type};

/// The algorithm of a `PSA_HashAlgorithm_t` member, as BMv2's psa_switch
/// maps it (`ONES_COMPLEMENT16` is `csum16`; the `_CUSTOM` CRCs are BMv2's
/// unconfigured defaults, the polynomials of `CRC16`/`CRC32`).
/// `TARGET_DEFAULT`, which BMv2 does not accept, is CRC-32 on this target.
pub(crate) fn psa_hash_algo(member: &str) -> Option<HashAlgo> {
    Some(match member {
        "IDENTITY" => HashAlgo::Identity,
        "CRC32" | "TARGET_DEFAULT" => HashAlgo::Crc32,
        "CRC32_CUSTOM" => HashAlgo::Crc32Custom,
        "CRC16" => HashAlgo::Crc16,
        "CRC16_CUSTOM" => HashAlgo::Crc16Custom,
        "ONES_COMPLEMENT16" => HashAlgo::Csum16,
        _ => return None,
    })
}

/// Widest `Random<T>`: the target's generator draws 64 bits.
const MAX_RANDOM_WIDTH: u16 = 64;

impl Checker<'_> {
    /// The instance kind of PSA extern `name` with type arguments `targs`
    /// and constant constructor arguments `vals` (value, enum member name
    /// for enum-typed arguments). None (with a diagnostic) when misused.
    pub(super) fn psa_extern_kind(
        &mut self,
        name: &str,
        targs: &[Type],
        vals: &[(u128, Option<String>)],
        span: Span,
    ) -> Option<ExternInstKind> {
        let algo = |me: &mut Self| -> Option<HashAlgo> {
            let member = vals.first().and_then(|v| v.1.clone());
            match member.as_deref().and_then(psa_hash_algo) {
                Some(a) => Some(a),
                None => {
                    me.psa_misuse(
                        format!("`{name}` needs a `PSA_HashAlgorithm_t` member as its algorithm"),
                        span,
                        "e.g. `PSA_HashAlgorithm_t.CRC16`",
                    );
                    None
                }
            }
        };
        match name {
            "Hash" => {
                self.psa_bit_arg(name, "O", targs.first(), u16::MAX, span)?;
                Some(ExternInstKind::Hash { algo: algo(self)? })
            }
            "Checksum" => {
                let width = self.psa_bit_arg(name, "W", targs.first(), u16::MAX, span)?;
                Some(ExternInstKind::Checksum {
                    algo: algo(self)?,
                    width,
                })
            }
            "InternetChecksum" => Some(ExternInstKind::InternetChecksum),
            "Random" => {
                let width = self.psa_bit_arg(name, "T", targs.first(), MAX_RANDOM_WIDTH, span)?;
                let (min, max) = (vals.first()?.0, vals.get(1)?.0);
                if min > max {
                    self.psa_misuse(
                        format!("`Random` bounds out of order: min {min} is above max {max}"),
                        span,
                        "write `Random<T>(min, max)` with min <= max",
                    );
                    return None;
                }
                Some(ExternInstKind::Random { min, max, width })
            }
            "Digest" => {
                let ok = matches!(targs.first(), Some(Type::Struct(_) | Type::Header(_)))
                    || targs
                        .first()
                        .is_some_and(|t| self.m.scalar_width(t).is_some());
                if !ok {
                    let tn = targs
                        .first()
                        .map(|t| self.m.type_name(t))
                        .unwrap_or_else(|| "nothing".into());
                    self.psa_misuse(
                        format!("`Digest<T>` sends a struct, a header or a bit field, not `{tn}`"),
                        span,
                        "declare e.g. `Digest<mac_learn_digest_t>() d;`",
                    );
                    return None;
                }
                Some(ExternInstKind::Digest)
            }
            _ => None,
        }
    }

    /// A type argument of a PSA extern that must be `bit<W>` with `W <= max`.
    fn psa_bit_arg(
        &mut self,
        ext: &str,
        param: &str,
        t: Option<&Type>,
        max: u16,
        span: Span,
    ) -> Option<u16> {
        match t {
            Some(Type::Bit(w)) if *w <= max => Some(*w),
            Some(Type::Bit(w)) => {
                self.psa_misuse(
                    format!("`{ext}<{param}>` is at most `bit<{max}>` here, not `bit<{w}>`"),
                    span,
                    &format!("declare `{ext}<bit<{max}>>` or narrower"),
                );
                None
            }
            other => {
                let tn = other
                    .map(|t| self.m.type_name(t))
                    .unwrap_or_else(|| "nothing".into());
                self.psa_misuse(
                    format!("`{ext}<{param}>` needs `{param}` to be `bit<W>`, not `{tn}`"),
                    span,
                    &format!("declare e.g. `{ext}<bit<16>>`"),
                );
                None
            }
        }
    }

    /// Argument rules of PSA extern methods, after binding: the data of
    /// `InternetChecksum.add`/`subtract` is whole 16-bit words of bits.
    pub(super) fn psa_call_rules(&mut self, ext: &str, op: Builtin, bound: &[Arg]) -> Option<()> {
        if ext == "InternetChecksum"
            && matches!(op, Builtin::ChecksumAdd | Builtin::ChecksumSubtract)
        {
            let Some(Arg::In(data)) = bound.first() else {
                return Some(());
            };
            let Some(bits) = self.flat_width(&data.ty) else {
                let tn = self.m.type_name(&data.ty);
                self.psa_misuse(
                    format!("`InternetChecksum` sums bit fields, not `{tn}`"),
                    data.span,
                    "pass a list of `bit<W>` fields: `ck.add({ hdr.a, hdr.b })`",
                );
                return None;
            };
            if bits % 16 != 0 {
                self.psa_misuse(
                    format!(
                        "`InternetChecksum` data is {bits} bits, not a whole number of 16-bit words"
                    ),
                    data.span,
                    "list fields that together make whole 16-bit words (pad with a `bit<N>` 0)",
                );
                return None;
            }
        }
        if matches!(
            op,
            Builtin::HashGet | Builtin::ChecksumAdd | Builtin::DigestPack
        ) {
            let data = match (op, bound) {
                (Builtin::HashGet, [_, Arg::In(d), _]) => d,
                (_, [Arg::In(d), ..]) => d,
                _ => return Some(()),
            };
            if self.flat_width(&data.ty).is_none() {
                let tn = self.m.type_name(&data.ty);
                self.psa_misuse(
                    format!("`{ext}` takes bit fields (or a list/struct of them), not `{tn}`"),
                    data.span,
                    "pass a field or a list of fields: `{ hdr.a, hdr.b }`",
                );
                return None;
            }
        }
        Some(())
    }

    /// The total width of a value made of scalars (a list, struct or header
    /// of them), or None if it holds anything else.
    fn flat_width(&self, t: &Type) -> Option<u32> {
        match t {
            Type::List(ts) => ts.iter().map(|t| self.flat_width(t)).sum(),
            Type::Struct(s) | Type::Header(s) => self.m.structs[*s]
                .fields
                .iter()
                .map(|f| self.flat_width(&f.ty))
                .sum(),
            Type::InfInt | Type::Str => None,
            t => self.m.scalar_width(t).map(u32::from),
        }
    }

    fn psa_misuse(&mut self, msg: String, span: Span, hint: &str) {
        let d = Diagnostic::error(codes::PSA_EXTERN_ARG, msg, span).with_hint(hint.to_string());
        self.emit(d);
    }
}
