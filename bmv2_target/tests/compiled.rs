//! Programs compiled by netsparse-compiler, run on the switch.

mod common;

use netsparse_engine::ControlPlane;
use std::path::Path;

use common::*;
use netsparse_compiler::{compile_file, source::SourceMap, CompileOptions};
use netsparse_externs::artifact::{Artifact, KeyMatch};

fn compile(rel: &str) -> Artifact {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(rel);
    let mut sources = SourceMap::default();
    match compile_file(&mut sources, &path, &CompileOptions::default()) {
        Ok(c) => c.artifact,
        Err(diags) => panic!("{rel} does not compile: {diags:?}"),
    }
}

#[test]
fn compiled_ipv4_forward_forwards() {
    let a = compile("programs/ipv4_forward.p4");
    let mut sw = switch(&a);
    sw.add_entry(
        "MyIngress.ipv4_lpm",
        &[KeyMatch::Lpm {
            value: 0x0a00_0100,
            prefix_len: 24,
        }],
        "MyIngress.ipv4_forward",
        &[0x0800_0000_0111, 3],
        None,
    )
    .unwrap();
    let pkt = ipv4_udp([10, 0, 1, 7], 64, b"hello");
    let out = send(&mut sw, 1, &pkt);
    assert_eq!(out.len(), 1);
    let (port, f) = &out[0];
    assert_eq!(*port, 3);
    assert_eq!(&f[0..6], &[0x08, 0, 0, 0, 0x01, 0x11]);
    assert_eq!(f[22], 63);
    assert!(ipv4_checksum_ok(f));
}
