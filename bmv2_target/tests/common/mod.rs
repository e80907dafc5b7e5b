//! Shared helpers for the switch integration tests.
#![allow(dead_code)]

use etherparse::PacketBuilder;
use netsparse_bmv2::{Switch, SwitchConfig};
use netsparse_externs::artifact::Artifact;
use netsparse_externs::{Datapath, Outputs, Time};

/// Load an artifact with the default config, panicking with the error.
pub fn switch(a: &Artifact) -> Switch {
    match Switch::new(a, SwitchConfig::default()) {
        Ok(s) => s,
        Err(e) => panic!("load failed: {e}"),
    }
}

/// Send one frame and collect (port, bytes) outputs.
pub fn send(sw: &mut Switch, port: u32, frame: &[u8]) -> Vec<(u32, Vec<u8>)> {
    let mut out = Outputs::new();
    sw.on_packet(Time::ZERO, port, frame, &mut out);
    out.iter().map(|(p, b)| (p, b.to_vec())).collect()
}

/// An Ethernet/IPv4/UDP frame.
pub fn ipv4_udp(dst: [u8; 4], ttl: u8, payload: &[u8]) -> Vec<u8> {
    let b = PacketBuilder::ethernet2([0, 0, 0, 0, 0, 1], [0, 0, 0, 0, 0, 2])
        .ipv4([10, 0, 0, 1], dst, ttl)
        .udp(1234, 5678);
    let mut v = Vec::with_capacity(b.size(payload.len()));
    b.write(&mut v, payload).expect("build packet");
    v
}

/// The IPv4 header checksum of a frame's IPv4 header (at offset 14).
pub fn ipv4_checksum_ok(frame: &[u8]) -> bool {
    let ihl = usize::from(frame[14] & 0xf) * 4;
    let h = &frame[14..14 + ihl];
    let mut sum = 0u32;
    for w in h.chunks(2) {
        sum += u32::from(u16::from_be_bytes([w[0], w[1]]));
    }
    while sum >> 16 != 0 {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    sum == 0xffff
}

/// Compile P4 source text (the bundled `core.p4`/`v1model.p4` are available).
pub fn p4(src: &str) -> Artifact {
    let mut sources = netsparse_compiler::source::SourceMap::default();
    match netsparse_compiler::compile_source(
        &mut sources,
        "test.p4",
        src,
        &netsparse_compiler::CompileOptions::default(),
    ) {
        Ok(c) => c.artifact,
        Err(d) => panic!(
            "test program does not compile:\n{}",
            netsparse_compiler::diag::render_all(&d, &sources)
        ),
    }
}

/// Load P4 source text into a switch.
pub fn p4_switch(src: &str) -> Switch {
    switch(&p4(src))
}

/// A frame of `bytes` (padded with zeros to at least 14 bytes).
pub fn raw(bytes: &[u8]) -> Vec<u8> {
    let mut v = bytes.to_vec();
    if v.len() < 14 {
        v.resize(14, 0);
    }
    v
}
