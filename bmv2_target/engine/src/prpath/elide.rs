//! Copy-in/copy-out elision for a per-PR block.
//!
//! When the per-PR part applies a control with `inout ns_pr_h pr, inout
//! ns_pr_md_t md` parameters, the compiler lowers them by copy-in/copy-out:
//! the block starts by copying the package's `pr` header and `md` fields
//! (and any target metadata passed along, such as the NIC's `ns_rig_md_t`)
//! into the control's locals and ends by copying them back. The runner
//! writes the package slots before every PR and reads them after, so for
//! every PR those statements only move values between two sets of slots.
//! When the block has exactly that shape, and nothing else can observe the
//! copied package slots (the body, the actions and the tables never mention
//! them, and nothing can leave the block before its copy-out: no `exit`, no
//! top-level `return`), the runner runs only the body and reads and writes
//! the locals directly: the same results, about a third less interpretation
//! per PR. Anything else keeps the block as compiled. The analysis looks
//! only at the artifact, so it applies to every program of that shape.

use std::collections::BTreeSet;

use netsparse_externs::artifact::{
    Artifact, Expr, FieldId, HeaderId, HeaderRef, LValue, PrPath, Stmt,
};
use serde_json::Value;

/// The per-PR block without its copy-in/copy-out.
#[derive(Debug)]
pub(crate) struct Elided<'a> {
    /// The statements between the copy-in and the copy-out.
    pub body: &'a [Stmt],
    /// The local that replaces each package slot: `(package, local)`.
    pub map: Vec<(FieldId, FieldId)>,
    /// The local header that replaces the package's `pr` header.
    pub header: HeaderId,
}

impl Elided<'_> {
    /// The slot the body uses for package slot `f`.
    pub fn local(&self, f: FieldId) -> FieldId {
        self.map
            .iter()
            .find(|(p, _)| *p == f)
            .map_or(f, |(_, l)| *l)
    }
}

/// One copy statement between the package slots and the locals.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Copy {
    Header { dst: HeaderId, src: HeaderId },
    Field { dst: FieldId, src: FieldId },
}

fn as_copy(s: &Stmt) -> Option<Copy> {
    match s {
        Stmt::CopyHeader {
            dst: HeaderRef::Static { header: dst },
            src: HeaderRef::Static { header: src },
        } => Some(Copy::Header {
            dst: *dst,
            src: *src,
        }),
        Stmt::Assign {
            dst: LValue::Field { field: dst },
            src: Expr::Field { field: src },
        } => Some(Copy::Field {
            dst: *dst,
            src: *src,
        }),
        _ => None,
    }
}

/// The per-PR block of `m` without its copy-in/copy-out, if it has that
/// shape and eliding it cannot change any result; `pr_header` is the
/// package's `pr` header; `extras` are target metadata slots the runner
/// also writes before and reads after every PR (they may be copied along
/// with `md`, or used in place).
pub(crate) fn elide<'a>(
    a: &Artifact,
    m: &'a PrPath,
    pr_header: HeaderId,
    extras: &[FieldId],
) -> Option<Elided<'a>> {
    let md = [
        m.pr_meta.pr_type,
        m.pr_meta.dst,
        m.pr_meta.prop_len,
        m.pr_meta.ingress_port,
        m.pr_meta.egress_port,
        m.pr_meta.drop,
    ];
    let hp = a.headers.get(pr_header.index())?;
    // The switch writes every field of `pr` for every PR (so a local it
    // does not write cannot keep a value from the previous PR).
    let pr_fields = [m.pr.src, m.pr.tid, m.pr.idx, m.pr.req_id];
    if hp.fields.len() != pr_fields.len() || hp.fields.iter().any(|f| !pr_fields.contains(&f.field))
    {
        return None;
    }
    let mut params: BTreeSet<FieldId> = md.iter().copied().collect();
    params.extend(hp.fields.iter().map(|f| f.field));
    let width = |f: FieldId| a.fields.get(f.index()).map(|x| x.width);

    // Copy-in: the package header into one local header, every md field
    // into a local, in any order.
    let stmts = &m.per_pr;
    let mut header: Option<HeaderId> = None;
    let mut map: Vec<(FieldId, FieldId)> = Vec::new();
    let mut k = 0;
    for s in stmts {
        match as_copy(s) {
            Some(Copy::Header { dst, src }) if src == pr_header && header.is_none() => {
                let hl = a.headers.get(dst.index())?;
                if dst == pr_header || hl.fields.len() != hp.fields.len() {
                    return None;
                }
                for (l, p) in hl.fields.iter().zip(&hp.fields) {
                    if l.width != p.width {
                        return None;
                    }
                    map.push((p.field, l.field));
                }
                header = Some(dst);
            }
            Some(Copy::Field { dst, src })
                if (md.contains(&src) || extras.contains(&src))
                    && !map.iter().any(|(p, _)| *p == src) =>
            {
                if width(dst)? != width(src)? {
                    return None;
                }
                map.push((src, dst));
            }
            _ => break,
        }
        k += 1;
    }
    let header = header?;
    // Every `pr` and `md` slot is copied; extras that are copied join them.
    if !params.iter().all(|p| map.iter().any(|(q, _)| q == p)) || stmts.len() < 2 * k {
        return None;
    }
    params.extend(map.iter().map(|(p, _)| *p));
    // The fields (not the header) copied in: each must be copied out once.
    let copied: BTreeSet<FieldId> = map
        .iter()
        .map(|(p, _)| *p)
        .filter(|p| md.contains(p) || extras.contains(p))
        .collect();
    // Locals are distinct and are not package slots.
    let locals: BTreeSet<FieldId> = map.iter().map(|(_, l)| *l).collect();
    if locals.len() != map.len()
        || locals
            .iter()
            .any(|l| params.contains(l) || extras.contains(l))
    {
        return None;
    }
    // Copy-out: the mirror image, every pair exactly once.
    let mut out_header = false;
    let mut out: BTreeSet<FieldId> = BTreeSet::new();
    for s in &stmts[stmts.len() - k..] {
        match as_copy(s)? {
            Copy::Header { dst, src } if dst == pr_header && src == header && !out_header => {
                out_header = true;
            }
            Copy::Field { dst, src } if copied.contains(&dst) && map.contains(&(dst, src)) => {
                if !out.insert(dst) {
                    return None;
                }
            }
            _ => return None,
        }
    }
    if !out_header || out != copied {
        return None;
    }
    let body = &stmts[k..stmts.len() - k];
    if body.iter().any(leaves_block) {
        return None;
    }
    // The package's `pr` header must not be reachable through a stack.
    if a.stacks.iter().any(|s| s.elements.contains(&pr_header)) {
        return None;
    }
    // Nothing the body can run mentions a package slot or exits.
    let scope = [
        serde_json::to_value(body).ok()?,
        serde_json::to_value(&a.actions).ok()?,
        serde_json::to_value(&a.tables).ok()?,
    ];
    let ids: BTreeSet<u64> = params.iter().map(|f| f.index() as u64).collect();
    if scope
        .iter()
        .any(|v| mentions(v, &ids, pr_header.index() as u64))
    {
        return None;
    }
    Some(Elided { body, map, header })
}

/// Whether `s` can leave the per-PR block before its copy-out (any `exit`
/// or `return`, even in an inlined control: conservative).
fn leaves_block(s: &Stmt) -> bool {
    match s {
        Stmt::Return | Stmt::Exit => true,
        Stmt::If {
            then, otherwise, ..
        } => then.iter().any(leaves_block) || otherwise.iter().any(leaves_block),
        Stmt::Switch { cases, default, .. } => {
            cases.iter().any(|c| c.body.iter().any(leaves_block))
                || default.iter().any(leaves_block)
        }
        Stmt::Inlined { body, .. } => body.iter().any(leaves_block),
        Stmt::Loop { body, updates, .. } => {
            body.iter().any(leaves_block) || updates.iter().any(leaves_block)
        }
        _ => false,
    }
}

/// Whether the serialized artifact part `v` mentions one of the slots
/// `fields` or the header `header`, or exits (conservative: any `field`,
/// `header` or `preserve` value is a mention; `exit` in an action too).
fn mentions(v: &Value, fields: &BTreeSet<u64>, header: u64) -> bool {
    match v {
        Value::Object(o) => o.iter().any(|(k, x)| {
            let hit = match (k.as_str(), x) {
                ("field", Value::Number(n)) => n.as_u64().is_some_and(|n| fields.contains(&n)),
                ("header", Value::Number(n)) => n.as_u64() == Some(header),
                ("preserve", Value::Array(xs)) => xs
                    .iter()
                    .any(|n| n.as_u64().is_some_and(|n| fields.contains(&n))),
                ("stmt", Value::String(s)) => s == "exit",
                _ => false,
            };
            hit || mentions(x, fields, header)
        }),
        Value::Array(xs) => xs.iter().any(|x| mentions(x, fields, header)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn mentions_finds_slots_headers_and_exits_at_any_depth() {
        let fields: BTreeSet<u64> = [45, 46].into_iter().collect();
        let deep = |x: Value| json!([{"stmt": "if", "then": [{"a": [x]}]}]);
        assert!(mentions(&deep(json!({"field": 45})), &fields, 5));
        assert!(mentions(
            &deep(json!({"ref": "static", "header": 5})),
            &fields,
            5
        ));
        assert!(mentions(&deep(json!({"preserve": [1, 46]})), &fields, 5));
        assert!(mentions(&deep(json!({"stmt": "exit"})), &fields, 5));
        assert!(!mentions(
            &deep(json!({"field": 82, "header": 8, "width": 45})),
            &fields,
            5
        ));
    }

    #[test]
    fn return_and_exit_anywhere_leave_the_block() {
        let ret = Stmt::Inlined {
            name: "c".into(),
            body: vec![Stmt::If {
                cond: Expr::Field { field: FieldId(1) },
                then: vec![Stmt::Return],
                otherwise: vec![],
            }],
        };
        assert!(leaves_block(&ret));
        assert!(leaves_block(&Stmt::Exit));
        assert!(!leaves_block(&Stmt::CallAction {
            action: netsparse_externs::artifact::ActionId(0)
        }));
    }
}
