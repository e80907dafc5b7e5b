//! `netsparse nic PROGRAM` for a `SpinNic` program: the sPIN NIC
//! (`netsparse_nic::spin::SpinNicDev`) on pcap files or a live interface,
//! its match tables filled from `--entries`, its configuration from
//! `--config` (TOML, keys of `SpinConfig`). At the end it prints the
//! counters and every message completion, and writes host memory
//! (`--host-out`, `--host-range`) and the counters (`--stats-json`).

use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use anyhow::{bail, Context as _};
use netsparse_bmv2::drivers::{self, PortSpec};
use netsparse_externs::artifact::Artifact;
use netsparse_nic::spin::{MessageDone, SpinConfig, SpinNicDev};

use super::nic::Args;

/// Parse `START..END` (decimal or `0x` hex) within `size` bytes.
fn host_range(s: &str, size: usize) -> anyhow::Result<std::ops::Range<usize>> {
    let num = |t: &str| -> anyhow::Result<usize> {
        let t = t.trim();
        let v = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
            Some(h) => usize::from_str_radix(h, 16),
            None => t.parse(),
        };
        v.with_context(|| format!("--host-range {s}: `{t}` is not a number"))
    };
    let Some((a, b)) = s.split_once("..") else {
        bail!("--host-range {s}: expected START..END");
    };
    let (a, b) = (num(a)?, num(b)?);
    if a > b || b > size {
        bail!("--host-range {s}: must satisfy START <= END <= {size} (the host memory's size)");
    }
    Ok(a..b)
}

/// Run a sPIN NIC program (see the module documentation).
pub fn run(args: &Args, artifact: &Artifact) -> anyhow::Result<ExitCode> {
    for (given, flag) in [
        (args.partition.is_some(), "--partition"),
        (args.gather.is_some(), "--gather"),
        (args.grpc_server_addr.is_some(), "--grpc-server-addr"),
    ] {
        if given {
            bail!("{flag}: not for a sPIN NIC program (it runs message handlers, not a gather)");
        }
    }
    let mut cfg = match &args.config {
        Some(f) => {
            let text = std::fs::read_to_string(f)
                .with_context(|| format!("cannot read {}", f.display()))?;
            toml::from_str::<SpinConfig>(&text)
                .with_context(|| format!("{}: bad sPIN NIC config", f.display()))?
        }
        None => SpinConfig::default(),
    };
    cfg.node = args.node.unwrap_or(cfg.node);
    let node = cfg.node;
    let range = match &args.host_range {
        Some(r) => Some(host_range(
            r,
            usize::try_from(cfg.host_mem_bytes).unwrap_or(usize::MAX),
        )?),
        None => None,
    };
    let mut nic = match SpinNicDev::new(artifact, cfg) {
        Ok(n) => n,
        Err(e) => {
            eprintln!("error: {e}");
            return Ok(ExitCode::from(1));
        }
    };
    if !super::switch::apply_entries(nic.control(), args.entries.as_deref())? {
        return Ok(ExitCode::from(1));
    }
    let specs: Vec<PortSpec> = if args.interfaces.is_empty() {
        if args.use_files.is_none() {
            bail!("give -i 0@IFACE (live) or --use-files DIR");
        }
        vec![format!("0@node{node}")
            .parse::<PortSpec>()
            .map_err(|e| anyhow::anyhow!("{e}"))?]
    } else {
        args.interfaces.clone()
    };
    drivers::check_unique(&specs)?;
    if specs.iter().any(|s| s.port != 0) {
        bail!("the NIC has one port, 0");
    }
    eprintln!(
        "sPIN NIC {node}: {} HPUs at {} MHz, {} bytes of host memory",
        nic.config().hpus,
        nic.config().hpu_clock_mhz,
        nic.config().host_mem_bytes
    );
    let stop = Arc::new(AtomicBool::new(false));
    let failed = match super::nic::drive(&mut nic, &specs, args, stop, None, &mut |_, _, _| {})? {
        Ok(failed) => failed,
        Err(code) => return Ok(code),
    };
    let done: Vec<MessageDone> = nic.poll_completions().collect();
    let s = nic.stats();
    eprintln!(
        "{} packets in ({} payload bytes, {} malformed), {} messages completed",
        s.packets_in,
        s.payload_bytes_in,
        s.malformed,
        done.len()
    );
    for d in &done {
        eprintln!(
            "message {}:{} (match bits {:#x}, {} bytes): rc {}, {} bytes dropped{}{}",
            d.src,
            d.msg_id,
            d.match_bits,
            d.length,
            d.rc,
            d.dropped_bytes,
            if d.flow_control { ", flow control" } else { "" },
            if d.timed_out { ", timed out" } else { "" }
        );
    }
    if let Some(out) = &args.host_out {
        let host = nic.host();
        let bytes = match &range {
            Some(r) => &host[r.clone()],
            None => host,
        };
        write(out, bytes)?;
    }
    if let Some(file) = &args.stats_json {
        let doc = serde_json::json!({
            "node": node,
            "spin": nic.stats(),
            "completions": done,
        });
        write(
            file,
            serde_json::to_string_pretty(&doc)
                .unwrap_or_default()
                .as_bytes(),
        )?;
    }
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn write(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    std::fs::write(path, bytes).with_context(|| format!("cannot write {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::host_range;

    #[test]
    fn host_ranges_parse_and_are_checked() {
        assert_eq!(host_range("0x100..0x200", 4096).unwrap(), 0x100..0x200);
        assert_eq!(host_range("16..32", 4096).unwrap(), 16..32);
        for bad in ["1..", "5..4", "0..4097", "0x10-0x20", "a..b"] {
            assert!(host_range(bad, 4096).is_err(), "{bad}");
        }
    }
}
