//! What the fabric did over a cluster run ([`FabricUse`]): the buffers'
//! peaks and the links' pauses under flow control, from the engine's
//! counters, and the packets and PRs the switches dropped, from their own
//! (with the switch that dropped the most and why: a gather that loses PRs
//! fails, and this says where they went).

use netsparse_netsim::DeviceId;

use super::cluster::{ClusterDevice, ClusterEngine};
use super::config::SimConfig;
use super::report::FabricUse;
use super::topology::{Device, Topology};
use netsparse_externs::Time;

/// Buffers and flow control over the run, from the engine's counters.
pub(crate) fn of(engine: &ClusterEngine, cfg: &SimConfig, t: &Topology) -> FabricUse {
    let mut f = FabricUse {
        switch_buffer: cfg.switch_buffer().map(|b| b.capacity),
        nic_buffer: cfg.nic_buffer().map(|b| b.capacity),
        ..FabricUse::default()
    };
    for d in t.devices() {
        let Some(b) = engine.buffer_stats(t.device_index(d) as DeviceId) else {
            continue;
        };
        f.paused_frames += b.paused_frames;
        match d {
            Device::Node(_) => {
                f.peak_nic_rx_bytes = f.peak_nic_rx_bytes.max(b.peak_bytes);
                f.peak_nic_tx_bytes = f.peak_nic_tx_bytes.max(b.peak_queued_bytes);
            }
            _ => {
                f.peak_switch_bytes = f.peak_switch_bytes.max(b.peak_bytes);
                f.peak_switch_port_bytes = f.peak_switch_port_bytes.max(b.peak_port_bytes);
            }
        }
    }
    let mut most = 0;
    for d in t.devices() {
        let (packets, prs, why) = match engine.device(t.device_index(d) as DeviceId) {
            Some(ClusterDevice::V1(sw)) => {
                let (n, why) = v1_drops(&sw.stats().total.drops);
                (n, 0, why)
            }
            Some(ClusterDevice::NetSparse(sw)) => ns_drops(&sw.stats()),
            _ => continue,
        };
        f.switch_drops += packets;
        f.switch_pr_drops += prs;
        if packets + prs > most {
            most = packets + prs;
            f.most_drops_at = Some(match (packets, prs) {
                (_, 0) => format!("{d}: {packets} packet(s) ({why})"),
                (0, _) => format!("{d}: {prs} PR(s) ({why})"),
                _ => format!("{d}: {packets} packet(s), {prs} PR(s) ({why})"),
            });
        }
    }
    let name = |d: DeviceId| {
        t.device_at(d as usize)
            .map_or_else(|| format!("device {d}"), |x| x.to_string())
    };
    for (from, to, c) in engine.link_counters() {
        if c.paused_ps > 0 {
            let p = Time::from_ps(c.paused_ps);
            f.paused_links += 1;
            f.paused += p;
            if p > f.max_link_paused {
                f.max_link_paused = p;
                f.max_link_paused_at = Some(format!("{} -> {}", name(from), name(to)));
            }
        }
    }
    f
}

/// A v1model switch's drops in all, and the largest reason.
fn v1_drops(d: &netsparse_bmv2::DropStats) -> (u64, &'static str) {
    largest(&[
        (d.malformed_oversize, "oversize frames"),
        (d.bad_port, "bad port"),
        (d.ingress_drop, "dropped by ingress"),
        (d.egress_drop, "dropped by egress"),
        (d.assertion, "assert"),
        (d.loop_cap, "resubmit/recirculate cap"),
        (d.no_mcast_group, "no multicast group"),
        (d.empty, "deparsed to nothing"),
    ])
}

/// A NetSparse switch's dropped packets, the PRs its middle pipes dropped
/// or refused (out of packets that went on), and the largest reason of
/// either.
fn ns_drops(s: &netsparse_bmv2::NsStats) -> (u64, u64, &'static str) {
    let p = &s.total;
    let packets = [
        (p.rx_malformed + p.malformed.total(), "malformed"),
        (p.ingress_drops, "dropped by ingress"),
        (p.bad_egress_spec + s.bad_port, "bad egress port"),
        (p.packets_dropped, "packets dropped by the middle pipe"),
        (p.program_errors.total(), "program errors"),
        (p.egress_drops, "dropped by egress"),
    ];
    let (n, why) = largest(&packets);
    let top = packets.iter().map(|c| c.0).max().unwrap_or(0);
    if p.prs_dropped > top {
        (n, p.prs_dropped, "PRs dropped by the middle pipe")
    } else {
        (n, p.prs_dropped, why)
    }
}

/// The sum of `counts` and the reason of the largest one.
fn largest(counts: &[(u64, &'static str)]) -> (u64, &'static str) {
    let total = counts.iter().map(|c| c.0).sum();
    let top = counts.iter().max_by_key(|c| c.0).map_or("", |c| c.1);
    (total, top)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_netsparse_switch_counts_packets_and_prs_apart() {
        let mut s = netsparse_bmv2::NsStats::default();
        s.total.packets_dropped = 2;
        s.total.ingress_drops = 1;
        s.total.prs_dropped = 5;
        assert_eq!(ns_drops(&s), (3, 5, "PRs dropped by the middle pipe"));
        s.total.prs_dropped = 1;
        assert_eq!(
            ns_drops(&s),
            (3, 1, "packets dropped by the middle pipe"),
            "the largest reason is a packet count"
        );
        assert_eq!(ns_drops(&netsparse_bmv2::NsStats::default()).0, 0);
    }
}
