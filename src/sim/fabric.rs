//! The leaf-spine fabric that the collective (`--collective`) and RDMA
//! SpMM (`--kernel spmm2d`) runs share: every switch a v1model switch
//! running `netsparse_spine.p4` with the topology's control-plane entries
//! unless the caller builds it (the collective's aggregating ToR, the RDMA
//! SpMM's NetSparse ToRs running `netsparse_tor.p4`), then the user's
//! `--spine-commands`, each node a device its caller builds, every cable a
//! link. One builder, so both runs cross the compiled switches the same
//! way.

use netsparse_bmv2::{Switch, SwitchConfig};
use netsparse_engine::control::commands;
use netsparse_externs::artifact::Artifact;
use netsparse_externs::{Datapath, Time};
use netsparse_netsim::{DeviceId, Engine, EngineError, LinkParams, LinkTap};

use super::topology::{Device, TableTemplates, Topology};
use crate::programs::UserCommands;

/// Timing of the fabric.
#[derive(Clone, Copy, Debug)]
pub struct FabricParams {
    /// The switches' seed.
    pub seed: u64,
    /// Link latency, ns.
    pub link_latency_ns: u64,
    /// Switch latency, ns.
    pub switch_latency_ns: u64,
}

/// Why the fabric could not be built.
#[derive(Debug)]
pub enum FabricError {
    /// A device could not be made (the message names it).
    Build(String),
    /// The engine refused a link.
    Engine(EngineError),
}

/// Switch `d` as [`build`] makes it when its caller does not: a v1model
/// switch running `spine` with the control-plane `entries`, then the
/// user's `spine_commands`; the error names the switch.
pub fn v1_switch(
    d: Device,
    spine: &Artifact,
    entries: &str,
    seed: u64,
    spine_commands: Option<&UserCommands>,
) -> Result<Switch, String> {
    let cfg = SwitchConfig {
        seed,
        ..SwitchConfig::default()
    };
    let mut sw = Switch::new(spine, cfg).map_err(|e| format!("{d}: {e}"))?;
    commands::apply(&mut sw, entries, &format!("{d}-commands.txt"))
        .map_err(|e| format!("{d}: {e}"))?;
    if let Some(c) = spine_commands {
        commands::apply(&mut sw, &c.text, &c.name()).map_err(|e| {
            format!("{d}: the spine commands after the simulator's own entries: {e}")
        })?;
    }
    Ok(sw)
}

/// Add `topo`'s devices and links to `engine`: node `n` is `node(n)`, a
/// switch is `custom(d, its control-plane entries)` when that gives one
/// (e.g. the NetSparse switch that aggregates a collective), else `switch`
/// of a v1model switch running `spine` with its entries and then
/// `spine_commands` (the user's), and the link between two devices runs at
/// `gbps(a, b)`.
#[allow(clippy::too_many_arguments)]
pub fn build<D: Datapath, T: LinkTap>(
    engine: &mut Engine<D, T>,
    topo: &Topology,
    spine: &Artifact,
    spine_commands: Option<&UserCommands>,
    p: FabricParams,
    mut node: impl FnMut(u32) -> Result<D, String>,
    switch: impl Fn(Box<Switch>) -> D,
    mut custom: impl FnMut(Device, &str) -> Option<Result<D, String>>,
    gbps: impl Fn(Device, Device) -> u64,
) -> Result<(), FabricError> {
    let templates = TableTemplates::default();
    for d in topo.devices() {
        let (dev, latency) = match d {
            Device::Node(n) => (node(n).map_err(FabricError::Build)?, Time::ZERO),
            _ => {
                let entries = topo.control_plane(d, &templates);
                let dev = match custom(d, &entries) {
                    Some(dev) => dev.map_err(|e| FabricError::Build(format!("{d}: {e}")))?,
                    None => {
                        let sw = v1_switch(d, spine, &entries, p.seed, spine_commands)
                            .map_err(FabricError::Build)?;
                        switch(Box::new(sw))
                    }
                };
                (dev, Time::from_ns(p.switch_latency_ns))
            }
        };
        engine.add_device(Box::new(dev), latency, d.to_string());
    }
    for l in topo.links() {
        let a = topo.device_index(l.a.device) as DeviceId;
        let b = topo.device_index(l.b.device) as DeviceId;
        let params = LinkParams {
            gbps: gbps(l.a.device, l.b.device),
            latency: Time::from_ns(p.link_latency_ns),
        };
        engine
            .connect(a, l.a.port, b, l.b.port, params)
            .map_err(FabricError::Engine)?;
    }
    Ok(())
}
