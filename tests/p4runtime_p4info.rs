//! P4Info goldens: `netsparse compile --p4runtime-files` for a v1model
//! program (the P4Runtime test program, with counters, a register and
//! ternary/range/optional keys) and the NetSparse ToR program (Property
//! Cache as an extern). The text is snapshotted; the binary form must
//! decode to the same message; unknown extensions are refused.

use std::path::Path;
use std::process::Command;

use netsparse_p4rt::proto::cfg;
use netsparse_p4rt::textfmt;
use prost::Message as _;

fn compile_p4info(program: &str, out: &Path) -> std::process::Output {
    let dir = out.parent().unwrap();
    Command::new(env!("CARGO_BIN_EXE_netsparse"))
        .current_dir(dir)
        .arg("compile")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join(program))
        .arg("-o")
        .arg(dir.join("artifact.json"))
        .arg("--p4runtime-files")
        .arg(out)
        .output()
        .expect("netsparse runs")
}

fn golden(program: &str, name: &str) {
    let dir = tempfile::tempdir().unwrap();
    let txt = dir.path().join("x.p4info.txt");
    let o = compile_p4info(program, &txt);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(&txt).unwrap();
    insta::assert_snapshot!(name, text);

    let bin = dir.path().join("x.p4info.bin");
    let o = compile_p4info(program, &bin);
    assert!(o.status.success());
    let info =
        cfg::P4Info::decode(std::fs::read(&bin).unwrap().as_slice()).expect("binary decodes");
    assert_eq!(textfmt::to_text(&info), text, "binary and text agree");
    // Every id carries its kind's prefix and is unique.
    let mut ids = std::collections::BTreeSet::new();
    for t in &info.tables {
        let id = t.preamble.as_ref().unwrap().id;
        assert_eq!(id >> 24, 0x02);
        assert!(ids.insert(id));
    }
    for a in &info.actions {
        let id = a.preamble.as_ref().unwrap().id;
        assert_eq!(id >> 24, 0x01);
        assert!(ids.insert(id));
    }
}

#[test]
fn p4info_v1model() {
    golden("tests/data/p4rt_features.p4", "p4rt_features");
    // `@id(0x77)` on port_map and `@id(0x01000042)` on drop are honoured.
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("x.pb");
    assert!(compile_p4info("tests/data/p4rt_features.p4", &bin)
        .status
        .success());
    let info = cfg::P4Info::decode(std::fs::read(&bin).unwrap().as_slice()).unwrap();
    let id = |name: &str| {
        info.tables
            .iter()
            .map(|t| t.preamble.as_ref().unwrap())
            .chain(info.actions.iter().map(|a| a.preamble.as_ref().unwrap()))
            .find(|p| p.name == name)
            .map(|p| p.id)
    };
    assert_eq!(id("MyIngress.port_map"), Some(0x0200_0077));
    assert_eq!(id("MyIngress.drop"), Some(0x0100_0042));
}

#[test]
fn p4info_netsparse_tor() {
    golden("programs/netsparse_tor.p4", "netsparse_tor");
}

#[test]
fn p4info_controller_headers() {
    // `@controller_header` types become controller_packet_metadata, with
    // their fields in wire order as metadata 1, 2, ...
    golden("programs/ipv4_cpu.p4", "ipv4_cpu");
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("x.pb");
    assert!(compile_p4info("programs/ipv4_cpu.p4", &bin)
        .status
        .success());
    let info = cfg::P4Info::decode(std::fs::read(&bin).unwrap().as_slice()).unwrap();
    type Meta = Vec<(u32, String, i32)>;
    let got: Vec<(String, u8, Meta)> = info
        .controller_packet_metadata
        .iter()
        .map(|c| {
            let p = c.preamble.as_ref().unwrap();
            (
                p.name.clone(),
                (p.id >> 24) as u8,
                c.metadata
                    .iter()
                    .map(|m| (m.id, m.name.clone(), m.bitwidth))
                    .collect(),
            )
        })
        .collect();
    let fields = |first: &str| vec![(1, first.to_owned(), 9), (2, "_pad".to_owned(), 7)];
    assert_eq!(
        got,
        vec![
            ("packet_in".to_owned(), 0x04, fields("ingress_port")),
            ("packet_out".to_owned(), 0x04, fields("egress_port")),
        ]
    );
}

#[test]
fn p4info_bad_extension_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["x.p4info.yaml", "x.p4info.json"] {
        let o = compile_p4info("programs/ipv4_forward.p4", &dir.path().join(name));
        assert_eq!(o.status.code(), Some(2));
        let e = String::from_utf8_lossy(&o.stderr);
        assert!(e.contains("--p4runtime-files") && e.contains(name), "{e}");
        assert!(!dir.path().join(name).exists());
    }
}
