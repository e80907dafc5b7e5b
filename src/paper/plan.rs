//! The plan of `netsparse paper`: the options resolved into a [`Setup`]
//! (sections, stand-ins, and the configuration of every run: the paper's
//! defaults, §8.2's RIG batch per matrix and Table 5's cache, scaled with
//! the stand-ins, and each sweep point of Figures 15, 17 and 18), and the
//! deduplicated list of runs the selected sections need ([`Planned`]),
//! grouped by stand-in so each is generated once.

use std::collections::HashMap;

use super::runs::{self, ProgramKey, RunKey};
use super::{data, max_scale, PaperError, PaperOptions, Section};
use crate::sim::config::{FilterBit, Headers, SimConfig};
use crate::sim::topology::{Routing, TopologySpec};

/// The model ablation's first point: every part of the model on.
pub const MODEL_ALL_ON: &str = "all parts on (the paper's configuration)";
use crate::sim::matrix::paper::PaperMatrix;
use crate::sim::Mode;

/// The resolved setup: which matrices and sections, and the configuration
/// of every run, derived from the options.
#[derive(Clone, Debug)]
pub struct Setup {
    /// The options.
    pub opts: PaperOptions,
    /// Sections to run, in report order.
    pub sections: Vec<Section>,
    /// Stand-ins, in the paper's order.
    pub matrices: Vec<PaperMatrix>,
    base: SimConfig,
}

impl Setup {
    /// Check the options and resolve them.
    pub fn new(opts: &PaperOptions) -> Result<Setup, PaperError> {
        let max = max_scale();
        if opts.scale == 0 || opts.scale > max {
            return Err(PaperError::Option {
                name: "--scale",
                value: opts.scale.to_string(),
                range: format!("1..={max} (1 = the paper's size; the smallest stand-in, queen, has 4 M rows and needs 512)"),
            });
        }
        if opts.nodes < 2 || opts.nodes > 1024 {
            return Err(PaperError::Option {
                name: "--nodes",
                value: opts.nodes.to_string(),
                range: "2..=1024 (Table 5: 128)".into(),
            });
        }
        if opts.racks == 0 || opts.racks > opts.nodes || opts.nodes % opts.racks != 0 {
            return Err(PaperError::Option {
                name: "--racks",
                value: opts.racks.to_string(),
                range: format!(
                    "a divisor of --nodes {} (Table 5: 8 racks of 16)",
                    opts.nodes
                ),
            });
        }
        if opts.threads > 256 {
            return Err(PaperError::Option {
                name: "--threads",
                value: opts.threads.to_string(),
                range: "1..=256".into(),
            });
        }
        if opts.jobs == 0 || opts.jobs > 64 {
            return Err(PaperError::Option {
                name: "--jobs",
                value: opts.jobs.to_string(),
                range: "1..=64 (runs at once; each holds its own run memory)".into(),
            });
        }
        if opts.memory_limit == Some(0) {
            return Err(PaperError::Option {
                name: "--memory-limit",
                value: "0".into(),
                range: "a positive number of GiB".into(),
            });
        }
        let base = SimConfig {
            nodes: opts.nodes,
            racks: opts.racks,
            seed: opts.seed,
            routing: opts.routing,
            ..SimConfig::default()
        };
        base.validate()?;
        let mut sections: Vec<Section> = if opts.only.is_empty() {
            Section::ALL.to_vec()
        } else {
            opts.only.clone()
        };
        sections.sort();
        sections.dedup();
        let matrices: Vec<PaperMatrix> = PaperMatrix::ALL
            .into_iter()
            .filter(|m| opts.matrices.is_empty() || opts.matrices.contains(m))
            .collect();
        Ok(Setup {
            opts: opts.clone(),
            sections,
            matrices,
            base,
        })
    }

    /// Whether `s` is selected.
    pub fn has(&self, s: Section) -> bool {
        self.sections.contains(&s)
    }

    /// A batch of `b` nonzeros at full scale, divided by the scale.
    pub fn scaled_batch(&self, b: u32) -> u32 {
        ((f64::from(b) / f64::from(self.opts.scale)).round() as u32).max(1)
    }

    /// A Property Cache of `bytes` per switch at full scale, divided by
    /// the scale and rounded to the nearest size the cache takes (pipes ×
    /// 512 B × ways × a power of two); 0 stays 0.
    pub fn scaled_cache(&self, bytes: u64) -> u64 {
        if bytes == 0 {
            return 0;
        }
        let pipes = self.base.topology().map_or(8, |t| u64::from(t.tor_pipes()));
        let unit = pipes * 512 * u64::from(self.base.cache_ways);
        let target = bytes as f64 / f64::from(self.opts.scale) / unit as f64;
        let exp = target.max(1.0).log2().round() as u32;
        unit << exp.min(40)
    }

    /// The configuration of `m` at property size `k` with the paper's
    /// defaults (§8.2's batch, Table 5's cache), scaled.
    pub fn config(&self, m: PaperMatrix, k: u32) -> SimConfig {
        SimConfig {
            k,
            rig_batch: self.scaled_batch(data::rig_batch(m)),
            cache_bytes: self.scaled_cache(SimConfig::default().cache_bytes),
            ..self.base.clone()
        }
    }

    /// Figure 15's configuration: batch `b` (full-scale nonzeros), K = 16.
    pub fn fig15_config(&self, m: PaperMatrix, b: u32) -> SimConfig {
        SimConfig {
            rig_batch: self.scaled_batch(b),
            ..self.config(m, 16)
        }
    }

    /// Figure 17's configuration: NIC delay `d` cycles, the switch's `d / 4`
    /// (Table 5's 500 : 125), K = 16.
    pub fn fig17_config(&self, m: PaperMatrix, d: u64) -> SimConfig {
        SimConfig {
            nic_delay_cycles: d,
            switch_delay_cycles: d / 4,
            ..self.config(m, 16)
        }
    }

    /// Figure 18's configuration: a cache of `mb` MiB at full scale
    /// (`None`: unbounded), K = 16.
    pub fn fig18_config(&self, m: PaperMatrix, mb: Option<u64>) -> SimConfig {
        let mut c = self.config(m, 16);
        match mb {
            Some(mb) => c.cache_bytes = self.scaled_cache(mb << 20),
            None => c.cache_unbounded = true,
        }
        c
    }

    /// Figure 22's configuration: the topology `spec` (Figure 22's shapes
    /// at the paper's 128 nodes), K = 16. The cache per switch stays the
    /// same size (every HyperX and Dragonfly switch has one).
    pub fn fig22_config(&self, m: PaperMatrix, spec: TopologySpec) -> SimConfig {
        let base = self.config(m, 16);
        SimConfig {
            topology: spec,
            // `--routing` picks among a leaf-spine's spines; HyperX and
            // Dragonfly have their own minimal routing.
            routing: if spec == TopologySpec::LeafSpine {
                base.routing
            } else {
                Routing::RackPair
            },
            ..base
        }
    }

    /// Figure 22's topologies: leaf-spine, then HyperX and Dragonfly with
    /// Figure 22's shapes; the latter two only where `--nodes` is a
    /// multiple of their 32 switches.
    pub fn fig22_points(&self) -> Vec<TopologySpec> {
        data::FIG22_TOPOLOGIES
            .iter()
            .filter_map(|s| s.parse::<TopologySpec>().ok())
            .filter(|&t| self.fig22_config(PaperMatrix::Queen, t).validate().is_ok())
            .collect()
    }

    /// Figure 15's batch sizes.
    pub fn fig15_points(&self) -> Vec<u32> {
        if self.opts.quick {
            data::FIG15_BATCHES_QUICK.to_vec()
        } else {
            data::FIG15_BATCHES.to_vec()
        }
    }

    /// Figure 17's delays.
    pub fn fig17_points(&self) -> Vec<u64> {
        if self.opts.quick {
            data::FIG17_DELAYS_QUICK.to_vec()
        } else {
            data::FIG17_DELAYS.to_vec()
        }
    }

    /// Figure 18's cache sizes.
    pub fn fig18_points(&self) -> Vec<Option<u64>> {
        if self.opts.quick {
            data::FIG18_CACHE_MB_QUICK.to_vec()
        } else {
            data::FIG18_CACHE_MB.to_vec()
        }
    }

    /// The model ablation's points for `m` at K = 16: every part of the
    /// system model on (the paper's configuration), then each part off or
    /// changed in turn: (what, configuration).
    pub fn model_points(&self, m: PaperMatrix) -> Vec<(&'static str, SimConfig)> {
        let on = self.config(m, 16);
        vec![
            (MODEL_ALL_ON, on.clone()),
            (
                "no flow control (unbounded queues)",
                SimConfig {
                    switch_buffer_bytes: 0,
                    nic_buffer_bytes: 0,
                    ..on.clone()
                },
            ),
            (
                "no middle-pipe PR rate limit",
                SimConfig {
                    switch_pr_cycles: 0,
                    ..on.clone()
                },
            ),
            (
                "no host posting cost",
                SimConfig {
                    host_post_ns: 0,
                    ..on.clone()
                },
            ),
            if on.routing == Routing::RackPair {
                (
                    "node-pair routing (every uplink)",
                    SimConfig {
                        routing: Routing::NodePair,
                        ..on.clone()
                    },
                )
            } else {
                (
                    "rack-pair routing (R − 1 uplinks per ToR)",
                    SimConfig {
                        routing: Routing::RackPair,
                        ..on.clone()
                    },
                )
            },
            (
                "Table 5 header sizes",
                SimConfig {
                    headers: Headers::Paper,
                    ..on.clone()
                },
            ),
            (
                "filter bit set at response (not at host write)",
                SimConfig {
                    filter_bit: FilterBit::Response,
                    ..on.clone()
                },
            ),
            (
                "no NIC memory model (free filter lookups)",
                SimConfig {
                    filter_memory: false,
                    ..on
                },
            ),
        ]
    }

    /// Table 8's matrices among the selected ones.
    pub fn table8_matrices(&self) -> Vec<PaperMatrix> {
        data::TABLE8_MATRICES
            .into_iter()
            .filter(|m| self.matrices.contains(m))
            .collect()
    }

    /// A run's label: stand-in, K, mode, and what differs from the
    /// paper's defaults (a sweep point).
    pub fn label(&self, m: PaperMatrix, mode: Mode, cfg: &SimConfig) -> String {
        let base = self.config(m, cfg.k);
        let mut s = format!("{} K={} {}", runs::spec(m, self.opts.scale), cfg.k, mode);
        if cfg.rig_batch != base.rig_batch {
            s.push_str(&format!(" rig-batch={}", cfg.rig_batch));
        }
        if cfg.nic_delay_cycles != base.nic_delay_cycles {
            s.push_str(&format!(" delay-cycles={}", cfg.nic_delay_cycles));
        }
        let on = SimConfig::default();
        if cfg.switch_buffer_bytes != on.switch_buffer_bytes {
            s.push_str(&format!(" switch-buffer-bytes={}", cfg.switch_buffer_bytes));
        }
        if cfg.nic_buffer_bytes != on.nic_buffer_bytes {
            s.push_str(&format!(" nic-buffer-bytes={}", cfg.nic_buffer_bytes));
        }
        if cfg.switch_pr_cycles != on.switch_pr_cycles {
            s.push_str(&format!(" switch-pr-cycles={}", cfg.switch_pr_cycles));
        }
        if cfg.host_post_ns != on.host_post_ns {
            s.push_str(&format!(" host-post-ns={}", cfg.host_post_ns));
        }
        if cfg.topology != on.topology {
            s.push_str(&format!(" topology={}", cfg.topology));
        }
        // The plan's routing is in the report's header; a run says its
        // own only where it differs (HyperX and Dragonfly route their own
        // way and say so by their topology).
        if cfg.topology == TopologySpec::LeafSpine && cfg.routing != base.routing {
            s.push_str(&format!(" routing={}", cfg.routing.name()));
        }
        if cfg.headers != on.headers {
            s.push_str(&format!(" headers={}", cfg.headers.name()));
        }
        if cfg.filter_memory != on.filter_memory {
            s.push_str(&format!(" filter-memory={}", cfg.filter_memory));
        }
        if cfg.filter_bit != on.filter_bit {
            s.push_str(&format!(" filter-bit={}", cfg.filter_bit.name()));
        }
        if cfg.cache_unbounded {
            s.push_str(" cache=unbounded");
        } else if cfg.cache_bytes != base.cache_bytes {
            s.push_str(&format!(" cache-bytes={}", cfg.cache_bytes));
        }
        s
    }

    /// The key of a run.
    pub fn key(&self, m: PaperMatrix, mode: Mode, cfg: &SimConfig) -> RunKey {
        let runs = crate::sim::cluster::mode_programs(mode);
        // The users' files (programs, commands) for the devices this mode
        // runs (none for SU and SA), by role and digest.
        let keys = |files: &mut dyn Iterator<Item = (crate::programs::Bundled, &String)>| {
            files
                .filter(|(w, _)| runs.iter().any(|(r, _)| r == w))
                .map(|(w, digest)| ProgramKey {
                    role: w.role().to_string(),
                    digest: digest.clone(),
                })
                .collect()
        };
        RunKey {
            matrix: runs::spec(m, self.opts.scale),
            mode: mode.name().to_string(),
            config: cfg.clone(),
            version: self.opts.version.clone(),
            programs: keys(&mut self.opts.programs.iter().map(|(w, u)| (*w, &u.digest))),
            commands: keys(&mut self.opts.commands.iter().map(|(w, c)| (*w, &c.digest))),
        }
    }

    /// Every run the selected sections need, deduplicated, grouped by
    /// matrix in the paper's order (each matrix is generated once).
    pub fn plan(&self) -> Vec<Planned> {
        let mut out: Vec<Planned> = Vec::new();
        let mut seen: HashMap<String, ()> = HashMap::new();
        for &m in &self.matrices {
            let mut add = |mode: Mode, cfg: SimConfig| {
                let key = self.key(m, mode, &cfg);
                let id = key_id(&key);
                if seen.insert(id, ()).is_none() {
                    out.push(Planned {
                        label: self.label(m, mode, &cfg),
                        key,
                        matrix: m,
                        mode,
                        work: runs::work_units(m, self.opts.scale, cfg.k, mode),
                    });
                }
            };
            if self.has(Section::Fig12) {
                for k in data::KS {
                    for mode in [Mode::Su, Mode::Sa, Mode::NetSparse] {
                        add(mode, self.config(m, k));
                    }
                }
            }
            if self.has(Section::Table7) {
                for mode in [Mode::Su, Mode::Sa, Mode::NetSparse] {
                    add(mode, self.config(m, 16));
                }
            }
            if self.has(Section::Table8) && data::TABLE8_MATRICES.contains(&m) {
                for k in data::KS {
                    add(Mode::Su, self.config(m, k));
                    for &mode in Mode::ABLATION {
                        add(mode, self.config(m, k));
                    }
                }
            }
            if self.has(Section::Fig15) {
                for b in self.fig15_points() {
                    add(Mode::NetSparse, self.fig15_config(m, b));
                }
            }
            if self.has(Section::Fig17) {
                for d in self.fig17_points() {
                    add(Mode::NetSparse, self.fig17_config(m, d));
                }
            }
            if self.has(Section::Fig18) {
                for c in self.fig18_points() {
                    add(Mode::NetSparse, self.fig18_config(m, c));
                }
            }
            if self.has(Section::Fig13) || self.has(Section::Fig21) {
                for k in data::E2E_KS {
                    for mode in [Mode::Su, Mode::Sa, Mode::NetSparse] {
                        add(mode, self.config(m, k));
                    }
                }
            }
            if self.has(Section::Fig19) {
                add(Mode::NetSparse, self.config(m, 16));
            }
            if self.has(Section::Fig22) {
                add(Mode::Su, self.config(m, 16));
                for t in self.fig22_points() {
                    add(Mode::NetSparse, self.fig22_config(m, t));
                }
            }
            if self.has(Section::Model) {
                for (_, cfg) in self.model_points(m) {
                    add(Mode::Su, cfg.clone());
                    add(Mode::NetSparse, cfg);
                }
            }
        }
        out
    }
}

/// One planned run.
#[derive(Clone, Debug)]
pub struct Planned {
    /// What it is, for people.
    pub label: String,
    /// Its key.
    pub key: RunKey,
    /// The stand-in.
    pub matrix: PaperMatrix,
    /// The mode.
    pub mode: Mode,
    /// Estimated work, for the ETA.
    pub work: u64,
}

/// A canonical string of a key (its JSON), for maps.
pub fn key_id(key: &RunKey) -> String {
    serde_json::to_string(key).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::paper::{max_scale, PaperOptions, Section};

    fn setup(scale: u32, quick: bool, only: Vec<Section>) -> Setup {
        Setup::new(&PaperOptions {
            scale,
            quick,
            only,
            version: "t".into(),
            ..PaperOptions::default()
        })
        .unwrap()
    }

    #[test]
    fn plan_shares_runs_between_sections() {
        let fig12 = setup(8, true, vec![Section::Fig12]).plan().len();
        assert_eq!(fig12, 5 * 3 * 3);
        // Table 7's runs are Figure 12's at K = 16.
        let both = setup(8, true, vec![Section::Fig12, Section::Table7])
            .plan()
            .len();
        assert_eq!(both, fig12);
        // Table 8 adds SU and the four steps before full NetSparse for
        // arabic and europe (SU and netsparse shared with Figure 12).
        let t8 = setup(8, true, vec![Section::Fig12, Section::Table8])
            .plan()
            .len();
        assert_eq!(t8, fig12 + 2 * 3 * 4);
        // Figure 17's 500 cycles and Figure 18's 32 MB are the default run.
        let sweeps = setup(
            8,
            true,
            vec![Section::Fig12, Section::Fig17, Section::Fig18],
        );
        assert_eq!(sweeps.plan().len(), fig12 + 5 * 2 + 5 * 2);
        let labels: Vec<String> = sweeps.plan().iter().map(|p| p.label.clone()).collect();
        assert!(labels.contains(&"paper:queen/8 K=16 netsparse delay-cycles=50000".to_string()));
        assert!(labels.contains(&"paper:queen/8 K=16 netsparse cache=unbounded".to_string()));
    }

    #[test]
    fn the_model_ablation_changes_one_part_at_a_time() {
        let s = setup(8, true, vec![Section::Model]);
        let pts = s.model_points(PaperMatrix::Queen);
        assert_eq!(pts[0].0, MODEL_ALL_ON);
        assert_eq!(pts[0].1, s.config(PaperMatrix::Queen, 16));
        for (what, cfg) in &pts[1..] {
            assert_ne!(cfg, &pts[0].1, "{what}");
            cfg.validate().unwrap();
        }
        // SU and NetSparse at each point, for every matrix; labels name
        // what differs.
        let plan = s.plan();
        assert_eq!(plan.len(), 5 * pts.len() * 2);
        let labels: Vec<&str> = plan.iter().map(|p| p.label.as_str()).collect();
        for l in [
            "paper:queen/8 K=16 netsparse switch-buffer-bytes=0 nic-buffer-bytes=0",
            "paper:queen/8 K=16 netsparse switch-pr-cycles=0",
            "paper:queen/8 K=16 netsparse host-post-ns=0",
            "paper:queen/8 K=16 netsparse routing=rack-pair",
            "paper:queen/8 K=16 su headers=paper",
        ] {
            assert!(labels.contains(&l), "{l} not in {labels:?}");
        }
        // Not in the default sections.
        assert!(!setup(8, true, vec![]).has(Section::Model));
    }

    #[test]
    fn routing_reaches_every_leaf_spine_run_and_its_key() {
        let opts = |routing| PaperOptions {
            scale: 8,
            quick: true,
            version: "t".into(),
            routing,
            ..PaperOptions::default()
        };
        // `netsparse paper` routes by owner unless told otherwise.
        assert_eq!(PaperOptions::default().routing, Routing::Owner);
        let owner = Setup::new(&opts(Routing::Owner)).unwrap();
        let rack = Setup::new(&opts(Routing::RackPair)).unwrap();
        for m in PaperMatrix::ALL {
            assert_eq!(owner.config(m, 16).routing, Routing::Owner);
            assert_eq!(owner.fig15_config(m, 8192).routing, Routing::Owner);
            // The routing is part of what keys the cache.
            assert_ne!(
                key_id(&owner.key(m, Mode::NetSparse, &owner.config(m, 16))),
                key_id(&rack.key(m, Mode::NetSparse, &rack.config(m, 16))),
                "{m:?}"
            );
            // Labels name a routing only where it differs from the plan's
            // (the header states the plan's).
            let plain = owner.label(m, Mode::NetSparse, &owner.config(m, 16));
            assert!(!plain.contains("routing="), "{plain}");
            for spec in owner.fig22_points() {
                let c = owner.fig22_config(m, spec);
                let want = if spec == TopologySpec::LeafSpine {
                    Routing::Owner
                } else {
                    Routing::RackPair
                };
                assert_eq!(c.routing, want, "{spec:?}");
                c.validate().unwrap();
                let label = owner.label(m, Mode::NetSparse, &c);
                assert!(!label.contains("routing="), "{label}");
            }
        }
        // The ablation's routing row changes the routing whatever the base.
        for r in [Routing::RackPair, Routing::NodePair, Routing::Owner] {
            let s = Setup::new(&opts(r)).unwrap();
            let pts = s.model_points(PaperMatrix::Uk);
            let changed: Vec<_> = pts.iter().filter(|(_, c)| c.routing != r).collect();
            assert_eq!(changed.len(), 1, "{r:?}");
            assert!(changed[0].0.contains("routing"), "{}", changed[0].0);
            let label = s.label(PaperMatrix::Uk, Mode::NetSparse, &changed[0].1);
            let want = format!("routing={}", changed[0].1.routing.name());
            assert!(label.ends_with(&want), "{label}");
        }
    }

    #[test]
    fn scaled_parameters() {
        let s = setup(8, false, vec![]);
        // 32k / 8 and 8k / 8; 32 MiB / 8 = 4 MiB (8 pipes x 512 B x 16 ways x 64).
        assert_eq!(s.config(PaperMatrix::Arabic, 16).rig_batch, 4096);
        assert_eq!(s.config(PaperMatrix::Uk, 16).rig_batch, 1024);
        assert_eq!(s.config(PaperMatrix::Uk, 16).cache_bytes, 4 << 20);
        assert_eq!(s.scaled_cache(0), 0);
        let full = setup(1, false, vec![]);
        // At full size the paper's configuration is Table 5's (`sim`'s
        // defaults) but for the routing.
        assert_eq!(
            full.config(PaperMatrix::Queen, 1),
            SimConfig {
                k: 1,
                routing: Routing::Owner,
                ..SimConfig::default()
            }
        );
        // The smallest cache the pipes take.
        let tiny = setup(max_scale(), false, vec![]);
        assert_eq!(tiny.scaled_cache(32 << 20), 64 << 10);
        for c in [
            s.config(PaperMatrix::Stokes, 128),
            tiny.fig18_config(PaperMatrix::Uk, Some(2)),
        ] {
            c.validate().unwrap();
        }
    }
}
