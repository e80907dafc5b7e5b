//! What `--topology` and the `topology` TOML key parse: the kind of
//! network and its shape parameters, before the node count is known
//! ([`TopologySpec`]); [`super::Topology::build`] turns it into a cluster.

use super::{Dragonfly, HyperX, TopologyError};

/// Which topology a run uses, before the node count is known: what
/// `--topology` and the `topology` TOML key parse. Leaf-spine takes its
/// racks and spines from their own parameters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TopologySpec {
    /// Leaf-spine (`leaf-spine`).
    #[default]
    LeafSpine,
    /// HyperX (`hyperx[:DIMS][,width=W]`, default Figure 22's 4x4x2, width 4).
    HyperX(HyperX),
    /// Dragonfly (`dragonfly[:groups=G,switches=A,global=H]`, default
    /// Figure 22's 4 groups of 8 switches with 4 global links each).
    Dragonfly(Dragonfly),
}

impl TopologySpec {
    /// What the CLI accepts.
    pub const SYNTAX: &'static str =
        "leaf-spine, hyperx[:DxDxD][,width=W] (default hyperx:4x4x2,width=4), \
         or dragonfly[:groups=G,switches=A,global=H] (default groups=4,switches=8,global=4)";

    /// The short name: `leaf-spine`, `hyperx` or `dragonfly`.
    pub fn kind(&self) -> &'static str {
        match self {
            TopologySpec::LeafSpine => "leaf-spine",
            TopologySpec::HyperX(_) => "hyperx",
            TopologySpec::Dragonfly(_) => "dragonfly",
        }
    }
}

impl std::fmt::Display for TopologySpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TopologySpec::LeafSpine => f.write_str("leaf-spine"),
            TopologySpec::HyperX(h) => h.fmt(f),
            TopologySpec::Dragonfly(d) => d.fmt(f),
        }
    }
}

impl std::str::FromStr for TopologySpec {
    type Err = TopologyError;
    fn from_str(s: &str) -> Result<TopologySpec, TopologyError> {
        let s = s.trim();
        let (kind, rest) = s.split_once(':').unwrap_or((s, ""));
        let bad = |value: &str, range: &str| TopologyError::Parameter {
            name: "topology",
            value: value.to_string(),
            range: range.to_string(),
        };
        let num = |name: &'static str, v: &str| -> Result<u32, TopologyError> {
            v.trim().parse().map_err(|_| TopologyError::Parameter {
                name,
                value: v.to_string(),
                range: "an integer".into(),
            })
        };
        match kind {
            "leaf-spine" if rest.is_empty() => Ok(TopologySpec::LeafSpine),
            "leaf-spine" => Err(bad(
                s,
                "leaf-spine takes no options here (use --racks and --spines)",
            )),
            "hyperx" => {
                let h = HyperX::PAPER;
                let mut dims: Vec<u32> = h.dims().to_vec();
                let mut width = h.width();
                let dims_of = |v: &str| -> Result<Vec<u32>, TopologyError> {
                    v.split('x').map(|d| num("hyperx dimension", d)).collect()
                };
                for part in rest.split(',').filter(|p| !p.trim().is_empty()) {
                    match part.split_once('=') {
                        Some(("width", v)) => width = num("hyperx width", v)?,
                        Some(("dims", v)) => dims = dims_of(v)?,
                        None => dims = dims_of(part)?,
                        Some((k, _)) => {
                            return Err(bad(k, "hyperx options: DxDxD (or dims=DxDxD) and width=W"))
                        }
                    }
                }
                Ok(TopologySpec::HyperX(HyperX::new(&dims, width)?))
            }
            "dragonfly" => {
                let d = Dragonfly::PAPER;
                let (mut g, mut a, mut h) = (d.groups(), d.routers(), d.global());
                for part in rest.split(',').filter(|p| !p.trim().is_empty()) {
                    match part.split_once('=') {
                        Some(("groups", v)) => g = num("dragonfly groups", v)?,
                        Some(("switches", v)) => a = num("dragonfly switches", v)?,
                        Some(("global", v)) => h = num("dragonfly global", v)?,
                        _ => {
                            return Err(bad(
                                part,
                                "dragonfly options: groups=G, switches=A (per group), global=H (per switch)",
                            ))
                        }
                    }
                }
                Ok(TopologySpec::Dragonfly(Dragonfly::new(g, a, h)?))
            }
            _ => Err(bad(s, TopologySpec::SYNTAX)),
        }
    }
}

impl serde::Serialize for TopologySpec {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for TopologySpec {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<TopologySpec, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}
