//! Packet drivers, generic over any [`netsparse_externs::Datapath`] (the
//! switch here; the NetSparse NIC reuses them):
//!
//! * [`pcap`]: deterministic replay of `DIR/<name>_in.pcap` files into
//!   `DIR/<name>_out.pcap`, time taken from the capture timestamps;
//! * [`live`]: Linux interfaces through AF_PACKET sockets, time from the
//!   monotonic clock, until a stop flag is raised; [`live::serve`] picks
//!   the fast path below and falls back to plain sockets;
//! * [`tpacket`]: the fast live path: `TPACKET_V2` memory-mapped receive
//!   rings and `sendmmsg` batches, one thread for all ports.
//!
//! Both bind ports to names with `-i PORT@NAME` ([`PortSpec`]). The live
//! drivers share their options, counters and recorders (`ports.rs`) and
//! one OS layer (`sys.rs`: packet sockets, namespaces, signals).

pub mod live;
pub mod pcap;
mod ports;
mod sys;

pub use sys::{command_in_netns, disable_tx_checksum, in_netns, is_root, send_signal, Sig};
pub mod tpacket;

use std::fmt;
use std::str::FromStr;

/// Largest port number a driver accepts (v1model ports are 9 bits; 511 is
/// the drop port).
pub const MAX_PORT: u32 = 510;

/// A `PORT@NAME` binding: switch port number to interface or file name.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PortSpec {
    /// Switch port.
    pub port: u32,
    /// Interface name (live) or file stem (pcap).
    pub name: String,
}

/// A malformed `PORT@NAME`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad port binding `{text}`: {detail} (expected PORT@NAME, e.g. 0@veth0)")]
pub struct PortSpecError {
    /// The text given.
    pub text: String,
    /// What is wrong.
    pub detail: String,
}

impl FromStr for PortSpec {
    type Err = PortSpecError;

    fn from_str(s: &str) -> Result<PortSpec, PortSpecError> {
        let err = |detail: &str| PortSpecError {
            text: s.to_owned(),
            detail: detail.to_owned(),
        };
        let (p, n) = s.split_once('@').ok_or_else(|| err("missing `@`"))?;
        let port: u32 = p
            .trim()
            .parse()
            .map_err(|_| err("the port is not a number"))?;
        if port > MAX_PORT {
            return Err(err("the port must be 0..=510"));
        }
        let name = n.trim();
        if name.is_empty() {
            return Err(err("empty name"));
        }
        if name.contains('/') || name.contains('\0') {
            return Err(err("the name may not contain `/`"));
        }
        Ok(PortSpec {
            port,
            name: name.to_owned(),
        })
    }
}

impl fmt::Display for PortSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}@{}", self.port, self.name)
    }
}

/// Check that ports and names are unique.
pub fn check_unique(specs: &[PortSpec]) -> Result<(), PortSpecError> {
    for (i, a) in specs.iter().enumerate() {
        for b in &specs[..i] {
            if a.port == b.port || a.name == b.name {
                return Err(PortSpecError {
                    text: a.to_string(),
                    detail: format!("conflicts with {b}"),
                });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_specs() {
        let p: PortSpec = "3@veth3".parse().unwrap();
        assert_eq!(
            p,
            PortSpec {
                port: 3,
                name: "veth3".into()
            }
        );
        assert!("veth3".parse::<PortSpec>().is_err());
        assert!("x@veth3".parse::<PortSpec>().is_err());
        assert!("511@v".parse::<PortSpec>().is_err());
        assert!("1@".parse::<PortSpec>().is_err());
        assert!("1@a/b".parse::<PortSpec>().is_err());
        let dup = vec![p.clone(), "4@veth3".parse().unwrap()];
        assert!(check_unique(&dup).is_err());
        assert!(check_unique(&[p, "4@veth4".parse().unwrap()]).is_ok());
    }
}
