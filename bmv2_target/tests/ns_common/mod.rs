//! Shared helpers of the NetSparse switch tests: the compiled ToR program
//! and a small switch shape with routes.
#![allow(dead_code)]

use std::path::Path;
use std::sync::OnceLock;

use netsparse_bmv2::nsswitch::testing::install_tor_routes;
use netsparse_bmv2::nsswitch::{NsConfig, NsSwitch};
use netsparse_compiler::{compile_file, source::SourceMap, CompileOptions};
use netsparse_externs::artifact::Artifact;

/// Compile a program of `programs/`.
pub fn compile(rel: &str) -> Artifact {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(rel);
    let mut sources = SourceMap::default();
    match compile_file(&mut sources, &path, &CompileOptions::default()) {
        Ok(c) => c.artifact,
        Err(d) => panic!(
            "{rel} does not compile:\n{}",
            netsparse_compiler::diag::render_all(&d, &sources)
        ),
    }
}

/// `programs/netsparse_tor.p4`, compiled once.
pub fn tor_artifact() -> &'static Artifact {
    static A: OnceLock<Artifact> = OnceLock::new();
    A.get_or_init(|| compile("programs/netsparse_tor.p4"))
}

/// The test shape: 16 ports in 4 pipes (4 ports each), 1 GHz (whole
/// nanoseconds: cache latency 16 ns, DelayCycles 125 = 125 ns), a 64 KiB
/// 4-way cache (16 KiB per pipe) in 64-byte mode, switch id 3.
pub fn small_config() -> NsConfig {
    NsConfig::from_toml(
        "ports = 16\npipes = 4\nclock_mhz = 1000\n[switch]\nid = 3\n\
         [cache]\nsize = \"64KiB\"\nways = 4\nmode = 64\n",
    )
    .expect("test config")
}

/// Hosts of the rack: node n on port n for n in 0..12; remote racks
/// through uplinks: nodes 16..32 via port 12, nodes 32..48 via port 13.
pub fn rack_routes() -> Vec<(u32, u32)> {
    let mut r: Vec<(u32, u32)> = (0..12).map(|n| (n, n)).collect();
    r.extend((16..32).map(|n| (n, 12)));
    r.extend((32..48).map(|n| (n, 13)));
    r
}

/// The ToR in the test shape with the rack's routes.
pub fn tor() -> NsSwitch {
    tor_with(small_config())
}

/// The ToR with another shape, with the rack's routes.
pub fn tor_with(cfg: NsConfig) -> NsSwitch {
    let mut sw = NsSwitch::new(tor_artifact(), cfg).unwrap_or_else(|e| panic!("load: {e}"));
    install_tor_routes(&mut sw, &rack_routes()).expect("routes");
    sw
}
