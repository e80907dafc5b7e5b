//! Loading: what this target rejects, with which message, and no panic on
//! arbitrarily corrupted artifacts.

mod common;

use netsparse_bmv2::testing::{ex, ipv4_forward, ipv4_forward_parts};
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
        ExternKind::Register {
            width: 8,
            size: 4,
            initial: 0,
        },
    );
    p.builder.artifact_mut().controls[1]
        .body
        .push(Stmt::Prim(Prim::CacheLookup {
            cache: c2,
            dst: LValue::Field { field: hit },
        }));
    let e = err(&p.builder.build());
    assert!(
        e.contains("(MyIngress.register) is used as a Property Cache but is Register"),
        "{e}"
    );
    assert!(e.contains("(in /controls/1/body/1 (MyIngress))"), "{e}");
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
        "invalid artifact: assignment of 16 bits to 8 bits (in /controls/1/body/1 (MyIngress))"
    );
    // Field id out of range.
    let mut a = ipv4_forward();
    a.controls[1].body.push(ex::set(FieldId(9999), ex::c(1, 8)));
    let e = err(&a);
    assert!(e.contains("field id 9999 out of range"), "{e}");
    assert!(e.contains("/controls/1/body/"), "{e}");
    // A constant wider than its width.
    let mut a = ipv4_forward();
    a.controls[3]
        .body
        .push(ex::if_(ex::c(2, 1), vec![], vec![]));
    let e = err(&a);
    assert!(e.contains("constant 0x2 does not fit 1 bits"), "{e}");
    assert!(e.contains("(in /controls/3/body/"), "{e}");
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
    let e = err(&a);
    assert!(e.contains("must start with P4's core errors"), "{e}");
    assert!(e.contains("(in /errors (errors))"), "{e}");
    // A header that is not whole bytes (consistent, but not for this target).
    let mut p = ipv4_forward_parts();
    p.builder.header("hdr.x", "x_t", &[("a", 3)]);
    let e = err(&p.builder.build());
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
            initial: 0,
        },
    );
    assert!(err(&p.builder.build())
        .starts_with("unsupported by this target: 4294967295 register cells"));
    // Default action not in the table's list.
    let mut a = ipv4_forward();
    let d = a.tables[0].default_action.action;
    a.tables[0].actions.retain(|x| x.action != d);
    let e = err(&a);
    assert!(
        e.contains("the default action is not in the table's action list"),
        "{e}"
    );
    assert!(e.contains("(in /tables/0 (MyIngress.ipv4_lpm))"), "{e}");
    // Wrong format / version.
    let mut a = ipv4_forward();
    a.version = 99;
    assert!(err(&a).contains("version 99"));
}

/// An artifact edited by hand as JSON is refused by the one validator, with
/// the JSON pointer of the bad value, before anything is loaded.
#[test]
fn hand_edited_json_is_refused_with_its_json_pointer() {
    let mut v = serde_json::to_value(ipv4_forward()).unwrap();
    // The table's default action now names an action it does not list.
    let actions = v["actions"].as_array().unwrap().len() as u64;
    v["tables"][0]["default_action"]["action"] = serde_json::Value::from(actions + 7);
    let a: Artifact = serde_json::from_value(v).unwrap();
    let e = err(&a);
    assert!(e.starts_with("invalid artifact: "), "{e}");
    assert!(e.contains("(in /tables/0 (MyIngress.ipv4_lpm))"), "{e}");
    // Every problem is reported by the validator, each at its pointer.
    let problems = validate(&a);
    assert!(
        problems.iter().all(|p| p.path == "/tables/0"),
        "{problems:?}"
    );
    // A nested statement: the pointer goes down to it.
    let mut v = serde_json::to_value(ipv4_forward()).unwrap();
    let body = v["controls"][1]["body"].as_array_mut().unwrap();
    body.push(serde_json::json!({
        "stmt": "apply_table",
        "table": 42
    }));
    let n = body.len() - 1;
    let a: Artifact = serde_json::from_value(v).unwrap();
    let e = err(&a);
    assert!(e.contains("table out of range"), "{e}");
    assert!(
        e.contains(&format!("(in /controls/1/body/{n} (MyIngress))")),
        "{e}"
    );
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
