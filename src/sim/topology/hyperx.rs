//! HyperX (Ahn et al., SC '09): switches on an L-dimensional grid, each
//! fully connected to every switch that differs from it in exactly one
//! coordinate, over `width` parallel links (trunking). This file owns the
//! geometry (coordinates, port numbering, who is cabled to whom) and the
//! dimension-order next hop; [`super::Topology`] adds hosts, devices and
//! control-plane entries.
//!
//! Figure 22 of the paper: 32 switches in 4 × 4 × 2, 4 hosts per switch,
//! width 4, so a switch has 4 + 4 × (3 + 3 + 1) = 32 ports (Table 5's
//! switch).
//!
//! # Ports of a switch at coordinates `c`
//!
//! Host ports come first (`0..hosts`). Then, dimension by dimension, for
//! every other coordinate value `v ≠ c[d]` in increasing order, `width`
//! consecutive ports: port `hosts + width·(off(d) + idx(v)) + t` for trunk
//! `t`, where `off(d) = Σ_{e<d} (dims[e] − 1)` and `idx(v)` is `v`'s rank
//! among the values other than `c[d]`. Trunk `t` of one switch is cabled to
//! trunk `t` of the other, so a neighbour's links are consecutive (with
//! 4 hosts and width 4 each neighbour fills one 4-port pipe).

use super::TopologyError;

/// Most dimensions a HyperX may have.
pub const MAX_DIMS: usize = 4;

/// Largest trunk width.
pub const MAX_WIDTH: u32 = 64;

/// A validated HyperX shape (without hosts).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct HyperX {
    dims: [u32; MAX_DIMS],
    len: u8,
    width: u32,
}

impl HyperX {
    /// Figure 22's HyperX: 4 × 4 × 2, width 4.
    pub const PAPER: HyperX = HyperX {
        dims: [4, 4, 2, 1],
        len: 3,
        width: 4,
    };

    /// A HyperX with these dimension sizes (1 to [`MAX_DIMS`] of them, each
    /// at least 2) and trunk width (1 to [`MAX_WIDTH`]).
    pub fn new(dims: &[u32], width: u32) -> Result<HyperX, TopologyError> {
        let bad = |value: String, range: &str| TopologyError::Parameter {
            name: "hyperx",
            value,
            range: range.to_string(),
        };
        if dims.is_empty() || dims.len() > MAX_DIMS {
            return Err(bad(
                format!("{} dimensions", dims.len()),
                "1 to 4 dimensions, e.g. 4x4x2",
            ));
        }
        if let Some(d) = dims.iter().find(|&&d| !(2..=64).contains(&d)) {
            return Err(bad(
                format!("dimension size {d}"),
                "2..=64 switches per dimension",
            ));
        }
        if !(1..=MAX_WIDTH).contains(&width) {
            return Err(TopologyError::Parameter {
                name: "hyperx width",
                value: width.to_string(),
                range: format!("1..={MAX_WIDTH} parallel links between neighbours"),
            });
        }
        let mut a = [1u32; MAX_DIMS];
        a[..dims.len()].copy_from_slice(dims);
        Ok(HyperX {
            dims: a,
            len: dims.len() as u8,
            width,
        })
    }

    /// The dimension sizes.
    pub fn dims(&self) -> &[u32] {
        &self.dims[..self.len as usize]
    }

    /// Parallel links between two neighbours.
    pub fn width(&self) -> u32 {
        self.width
    }

    /// Switches (the product of the dimension sizes).
    pub fn switches(&self) -> u64 {
        self.dims().iter().map(|&d| u64::from(d)).product()
    }

    /// Switch-to-switch ports of one switch: `width · Σ (dims − 1)`.
    pub fn fabric_ports(&self) -> u64 {
        u64::from(self.width) * self.dims().iter().map(|&d| u64::from(d - 1)).sum::<u64>()
    }

    /// Coordinates of switch `r` (dimension 0 varies fastest).
    pub fn coords(&self, r: u32) -> [u32; MAX_DIMS] {
        let mut c = [0u32; MAX_DIMS];
        let mut rest = r;
        for (i, &d) in self.dims().iter().enumerate() {
            c[i] = rest % d;
            rest /= d;
        }
        c
    }

    /// The switch at coordinates `c`.
    pub fn index(&self, c: &[u32; MAX_DIMS]) -> u32 {
        let mut r = 0u32;
        for i in (0..self.len as usize).rev() {
            r = r * self.dims[i] + c[i];
        }
        r
    }

    fn offset(&self, dim: usize) -> u32 {
        self.dims[..dim].iter().map(|d| d - 1).sum()
    }

    /// The port of switch `r` towards the switch that has coordinate `v` in
    /// dimension `dim` (and `r`'s elsewhere), trunk `t`.
    pub fn port(&self, hosts: u32, r: u32, dim: usize, v: u32, t: u32) -> u32 {
        let own = self.coords(r)[dim];
        let idx = if v < own { v } else { v - 1 };
        hosts + self.width * (self.offset(dim) + idx) + t
    }

    /// The (switch, port) at the other end of switch `r`'s fabric port
    /// `port`; `None` for a host port or a port past the end.
    pub fn peer(&self, hosts: u32, r: u32, port: u32) -> Option<(u32, u32)> {
        let rel = port.checked_sub(hosts)?;
        let (link, t) = (rel / self.width, rel % self.width);
        let mut c = self.coords(r);
        for dim in 0..self.len as usize {
            let off = self.offset(dim);
            let n = self.dims[dim] - 1;
            if link >= off && link < off + n {
                let idx = link - off;
                let own = c[dim];
                let v = if idx < own { idx } else { idx + 1 };
                c[dim] = v;
                let other = self.index(&c);
                return Some((other, self.port(hosts, other, dim, own, t)));
            }
        }
        None
    }

    /// The dimension and neighbour coordinate of switch `r`'s fabric port.
    pub fn port_dim(&self, hosts: u32, r: u32, port: u32) -> Option<usize> {
        let link = port.checked_sub(hosts)? / self.width;
        (0..self.len as usize)
            .find(|&dim| link >= self.offset(dim) && link < self.offset(dim) + self.dims[dim] - 1)
            .filter(|_| r < self.switches() as u32)
    }

    /// The next hop from switch `r` towards switch `b` in dimension order,
    /// lowest differing dimension first (`ascending`) or highest first,
    /// over trunk `t`; `None` when `r == b`.
    pub fn next_port(&self, hosts: u32, r: u32, b: u32, ascending: bool, t: u32) -> Option<u32> {
        let (cr, cb) = (self.coords(r), self.coords(b));
        let mut differing = (0..self.len as usize).filter(|&d| cr[d] != cb[d]);
        let dim = if ascending {
            differing.next()?
        } else {
            differing.next_back()?
        };
        Some(self.port(hosts, r, dim, cb[dim], t % self.width))
    }
}

impl std::fmt::Display for HyperX {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let dims: Vec<String> = self.dims().iter().map(u32::to_string).collect();
        write!(f, "hyperx:{},width={}", dims.join("x"), self.width)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coordinates_round_trip_and_ports_pair_up() {
        let h = HyperX::PAPER;
        assert_eq!(h.switches(), 32);
        assert_eq!(h.fabric_ports(), 28);
        for r in 0..32 {
            assert_eq!(h.index(&h.coords(r)), r);
            for port in 4..32 {
                let (o, p) = h.peer(4, r, port).unwrap();
                assert_ne!(o, r);
                assert_eq!(h.peer(4, o, p), Some((r, port)));
                // Neighbours differ in exactly one coordinate.
                let (a, b) = (h.coords(r), h.coords(o));
                assert_eq!((0..3).filter(|&d| a[d] != b[d]).count(), 1);
            }
            assert_eq!(h.peer(4, r, 32), None);
            assert_eq!(h.peer(4, r, 3), None);
        }
    }

    #[test]
    fn bad_shapes_name_the_parameter() {
        assert!(HyperX::new(&[], 1)
            .unwrap_err()
            .to_string()
            .contains("hyperx"));
        assert!(HyperX::new(&[4, 1], 1)
            .unwrap_err()
            .to_string()
            .contains("2..=64"));
        assert!(HyperX::new(&[4, 4], 0)
            .unwrap_err()
            .to_string()
            .contains("hyperx width"));
        assert!(HyperX::new(&[2, 2, 2, 2, 2], 1).is_err());
    }
}
