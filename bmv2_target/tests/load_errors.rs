//! Loading: what this target rejects, with which message, and no panic on
//! arbitrarily corrupted artifacts.

mod common;

use netsparse_bmv2::testing::{ex, ipv4_forward, ipv4_forward_parts, ArtifactBuilder};
use netsparse_bmv2::{LoadError, Switch, SwitchConfig};
use netsparse_engine::ControlPlane;
use netsparse_externs::artifact::*;
use proptest::prelude::*;

fn load(a: &Artifact) -> Result<Switch, LoadError> {
    Switch::new(a, SwitchConfig::default())
}

fn err(a: &Artifact) -> String {
    match load(a) {
        Ok(_) => panic!("loaded"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn netsparse_arch_is_unsupported() {
    let mut a = ipv4_forward();
    a.arch = Arch::NetSparseSwitch;
    let e = err(&a);
    assert!(
        e.starts_with("unsupported by this target: architecture netsparse_switch"),
        "{e}"
    );
}

#[test]
fn cache_prims_are_unsupported_in_v1model() {
    let mut p = ipv4_forward_parts();
    p.builder
        .extern_("MyIngress.cache", ExternKind::PropertyCache);
    let a = p.builder.build();
    let e = err(&a);
    assert_eq!(
        e,
        "unsupported by this target: a Property Cache (NetSparse middle pipes) in a v1model program (in extern MyIngress.cache)"
    );
    let mut p = ipv4_forward_parts();
    let (hit, _) = p.builder.table_slots(p.table);
    let c2 = p.builder.extern_(
        "MyIngress.register",
        ExternKind::Register { width: 8, size: 4 },
    );
    p.builder.artifact_mut().controls[1]
        .body
        .push(Stmt::Prim(Prim::CacheLookup {
            cache: c2,
            dst: LValue::Field { field: hit },
        }));
    let e = err(&p.builder.build());
    assert!(e.contains("Property Cache Lookup/Insert"), "{e}");
    assert!(e.contains("(in control MyIngress)"), "{e}");
}

#[test]
fn inconsistent_artifacts_are_invalid_with_a_place() {
    // Assignment width mismatch.
    let mut p = ipv4_forward_parts();
    let ttl = p.ip[7];
    p.builder.artifact_mut().controls[1]
        .body
        .push(ex::set(ttl, ex::c(1, 16)));
    let e = err(&p.builder.build());
    assert_eq!(
        e,
        "invalid artifact: assigned value has width 16 (expected 8) (in control MyIngress)"
    );
    // Field id out of range.
    let mut a = ipv4_forward();
    a.controls[1].body.push(ex::set(FieldId(9999), ex::c(1, 8)));
    assert!(err(&a).contains("field id 9999 out of range"));
    // A constant wider than its width.
    let mut a = ipv4_forward();
    a.controls[3]
        .body
        .push(ex::if_(ex::c(2, 1), vec![], vec![]));
    assert!(err(&a).contains("constant 0x2 does not fit 1 bits"));
    // Extract outside a parser.
    let mut p = ipv4_forward_parts();
    let h = p.ethernet;
    p.builder.artifact_mut().controls[1]
        .body
        .push(ex::extract(h));
    assert!(err(&p.builder.build()).contains("extract outside a parser"));
    // Core errors missing.
    let mut a = ipv4_forward();
    a.errors.truncate(3);
    assert!(err(&a).contains("must start with P4's core errors"));
    // A header that is not whole bytes.
    let mut b = ArtifactBuilder::v1model("odd");
    b.header("hdr.x", "x_t", &[("a", 3)]);
    let e = err(&b.build());
    assert!(
        e.contains("header hdr.x is 3 bits, not a whole number of bytes"),
        "{e}"
    );
    // Huge register.
    let mut p = ipv4_forward_parts();
    p.builder.extern_(
        "MyIngress.big",
        ExternKind::Register {
            width: 32,
            size: u32::MAX,
        },
    );
    assert!(err(&p.builder.build())
        .starts_with("unsupported by this target: 4294967295 register cells"));
    // Default action not in the table's list.
    let mut a = ipv4_forward();
    let d = a.tables[0].default_action.action;
    a.tables[0].actions.retain(|x| x.action != d);
    assert!(err(&a).contains("the default action is not in the table's action list"));
    // Wrong format / version.
    let mut a = ipv4_forward();
    a.version = 99;
    assert!(err(&a).contains("version 99"));
}

/// Replace the `k`-th number in a JSON document by `v`.
fn mutate(v: &mut serde_json::Value, k: &mut usize, with: u64) -> bool {
    match v {
        serde_json::Value::Number(_) => {
            if *k == 0 {
                *v = serde_json::Value::from(with);
                return true;
            }
            *k -= 1;
            false
        }
        serde_json::Value::Array(a) => a.iter_mut().any(|x| mutate(x, k, with)),
        serde_json::Value::Object(o) => o.values_mut().any(|x| mutate(x, k, with)),
        _ => false,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// Corrupt numbers anywhere in the artifact: loading either fails with
    /// an error or succeeds, and then packets never panic the switch.
    #[test]
    fn corrupted_artifacts_never_panic(edits in proptest::collection::vec((0usize..2000, prop_oneof![0u64..4, 0u64..200, Just(u64::from(u32::MAX)), any::<u64>()]), 1..4)) {
        let base = serde_json::to_value(ipv4_forward()).unwrap();
        let mut doc = base.clone();
        for (k, with) in edits {
            let mut k = k;
            mutate(&mut doc, &mut k, with);
        }
        let text = doc.to_string();
        if let Ok(a) = Artifact::from_json(&text) {
            if let Ok(mut sw) = load(&a) {
                let _ = sw.add_entry(
                    "MyIngress.ipv4_lpm",
                    &[KeyMatch::Lpm { value: 0x0a00_0000, prefix_len: 8 }],
                    "MyIngress.ipv4_forward",
                    &[1, 1],
                    None,
                );
                for f in [common::ipv4_udp([10, 0, 0, 1], 64, b"x"), vec![0u8; 20], vec![0xffu8; 60]] {
                    let _ = common::send(&mut sw, 1, &f);
                }
            }
        }
    }
}
