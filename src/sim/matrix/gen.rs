//! Seeded, deterministic matrix generators.
//!
//! Every generator takes a seed (even the deterministic stencils accept one,
//! for a uniform interface) and returns a pattern [`CsrMatrix`]: the
//! simulator only needs the structure. The same spec and seed give the same
//! matrix on every platform ([`crate::sim::rng`] is part of this crate).
//!
//! | spec | matrix |
//! |---|---|
//! | `rmat:scale=S,edge-factor=E,a=..,b=..,c=..,d=..,noise=..` | R-MAT (Chakrabarti et al.): `2^S` vertices, `E·2^S` sampled edges, duplicates merged |
//! | `grid2d:nx=..,ny=..` | 5-point stencil on an `nx × ny` grid |
//! | `grid3d:nx=..,ny=..,nz=..` | 7-point stencil on an `nx × ny × nz` grid |
//! | `banded:n=..,width=..,density=..` | diagonal-heavy, queen-like: the diagonal plus each entry within `width` of it with probability `density` |
//! | `uniform:rows=..,cols=..,nnz=..` | exactly `nnz` distinct uniformly random positions |
//!
//! Keys may be left out (defaults: R-MAT scale 16, edge factor 16, the
//! Graph500 probabilities a=0.57, b=0.19, c=0.19, d=0.05, no noise; grids
//! 64 per side; banded n=65536, width=64, density=0.25; uniform 65536 ×
//! 65536 with 1,048,576 nonzeros). `edge-factor` may be written `ef`.
//!
//! R-MAT noise `ν` (0 ≤ ν < 1): at every recursion level of every edge the
//! four probabilities are each multiplied by an independent uniform factor in
//! `[1 − ν, 1 + ν]` and renormalised, which smooths the degree distribution's
//! staircase. Grid vertex `(x, y, z)` is row `x + nx·(y + ny·z)`.

use std::fmt;
use std::str::FromStr;

use thiserror::Error;

use super::paper::PaperMatrix;
use super::{BuildInfo, CooBuilder, CsrMatrix, MatrixError, MAX_DIM};
use crate::sim::rng::Xoshiro256;

/// The largest number of nonzeros a generator will produce (memory guard).
pub const MAX_GEN_NNZ: u64 = 1 << 31;

/// R-MAT parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RmatParams {
    /// log2 of the number of vertices (rows = columns = 2^scale).
    pub scale: u32,
    /// Edges sampled per vertex.
    pub edge_factor: u32,
    /// Probability of the top-left quadrant.
    pub a: f64,
    /// Probability of the top-right quadrant.
    pub b: f64,
    /// Probability of the bottom-left quadrant.
    pub c: f64,
    /// Probability of the bottom-right quadrant.
    pub d: f64,
    /// Per-level multiplicative noise, 0 ≤ noise < 1.
    pub noise: f64,
}

impl Default for RmatParams {
    fn default() -> RmatParams {
        RmatParams {
            scale: 16,
            edge_factor: 16,
            a: 0.57,
            b: 0.19,
            c: 0.19,
            d: 0.05,
            noise: 0.0,
        }
    }
}

/// A generator and its parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum GenSpec {
    /// R-MAT.
    Rmat(RmatParams),
    /// 2D 5-point stencil.
    Grid2d {
        /// Grid width.
        nx: u32,
        /// Grid height.
        ny: u32,
    },
    /// 3D 7-point stencil.
    Grid3d {
        /// Grid width.
        nx: u32,
        /// Grid height.
        ny: u32,
        /// Grid depth.
        nz: u32,
    },
    /// Banded, diagonal-heavy ("queen-like").
    Banded {
        /// Rows = columns.
        n: u32,
        /// Half bandwidth: entries `(i, j)` with `|i − j| ≤ width`.
        width: u32,
        /// Probability of each off-diagonal entry inside the band.
        density: f64,
    },
    /// A stand-in for one of the paper's matrices at 1/`scale` of its size
    /// (`paper:arabic`, `paper:uk/8`; see [`super::paper`]).
    Paper {
        /// Which matrix.
        matrix: PaperMatrix,
        /// Divide rows and nonzeros by this.
        scale: u32,
    },
    /// Uniformly random distinct positions.
    Uniform {
        /// Rows.
        rows: u32,
        /// Columns.
        cols: u32,
        /// Nonzeros (exact).
        nnz: u64,
    },
}

/// An invalid generator spec.
#[derive(Clone, Debug, PartialEq, Error)]
pub enum GenError {
    /// Unknown generator name.
    #[error("unknown generator {0:?} (expected rmat, grid2d, grid3d, banded, uniform or paper)")]
    UnknownKind(String),
    /// A key the generator does not take.
    #[error("{kind}: unknown parameter {key:?} (expected one of: {expected})")]
    UnknownKey {
        /// The generator.
        kind: &'static str,
        /// The key.
        key: String,
        /// The keys it takes.
        expected: &'static str,
    },
    /// A `key=value` item without `=`.
    #[error("{kind}: expected key=value, found {item:?}")]
    NotKeyValue {
        /// The generator.
        kind: &'static str,
        /// The item.
        item: String,
    },
    /// A value that does not parse.
    #[error("{kind}: {key}={value:?} is not a valid {expected}")]
    BadValue {
        /// The generator.
        kind: &'static str,
        /// The key.
        key: &'static str,
        /// The text.
        value: String,
        /// What was expected.
        expected: &'static str,
    },
    /// A value out of range.
    #[error("{kind}: {key}={value} is out of range: {range}")]
    OutOfRange {
        /// The generator.
        kind: &'static str,
        /// The key.
        key: &'static str,
        /// The value.
        value: String,
        /// The allowed range.
        range: String,
    },
    /// R-MAT probabilities that do not sum to 1.
    #[error("rmat: a + b + c + d = {a} + {b} + {c} + {d} = {sum}, must be 1")]
    ProbabilitySum {
        /// a.
        a: f64,
        /// b.
        b: f64,
        /// c.
        c: f64,
        /// d.
        d: f64,
        /// Their sum.
        sum: f64,
    },
    /// The matrix would be too large.
    #[error("{kind}: {what} = {value} exceeds the limit {max}")]
    TooLarge {
        /// The generator.
        kind: &'static str,
        /// What is too large.
        what: &'static str,
        /// Its value.
        value: u64,
        /// The limit.
        max: u64,
    },
    /// Internal: a coordinate outside the matrix (a generator bug).
    #[error("generator produced an invalid entry: {0}")]
    Matrix(#[from] MatrixError),
}

fn range_err(
    kind: &'static str,
    key: &'static str,
    value: impl fmt::Display,
    range: &str,
) -> GenError {
    GenError::OutOfRange {
        kind,
        key,
        value: value.to_string(),
        range: range.to_string(),
    }
}

impl GenSpec {
    /// The generator's name (`rmat`, `grid2d`, ...).
    pub fn kind(&self) -> &'static str {
        match self {
            GenSpec::Rmat(_) => "rmat",
            GenSpec::Grid2d { .. } => "grid2d",
            GenSpec::Grid3d { .. } => "grid3d",
            GenSpec::Banded { .. } => "banded",
            GenSpec::Uniform { .. } => "uniform",
            GenSpec::Paper { .. } => "paper",
        }
    }

    /// Check every parameter; errors name the parameter and its range.
    pub fn validate(&self) -> Result<(), GenError> {
        let kind = self.kind();
        match *self {
            GenSpec::Rmat(p) => {
                if !(1..=31).contains(&p.scale) {
                    return Err(range_err(kind, "scale", p.scale, "1..=31"));
                }
                if p.edge_factor == 0 {
                    return Err(range_err(kind, "edge-factor", p.edge_factor, ">= 1"));
                }
                for (key, v) in [("a", p.a), ("b", p.b), ("c", p.c), ("d", p.d)] {
                    if !(0.0..=1.0).contains(&v) {
                        return Err(range_err(kind, key, v, "0..=1"));
                    }
                }
                let sum = p.a + p.b + p.c + p.d;
                if (sum - 1.0).abs() > 1e-9 {
                    return Err(GenError::ProbabilitySum {
                        a: p.a,
                        b: p.b,
                        c: p.c,
                        d: p.d,
                        sum,
                    });
                }
                if !(0.0..1.0).contains(&p.noise) {
                    return Err(range_err(kind, "noise", p.noise, "0 <= noise < 1"));
                }
                let edges = u64::from(p.edge_factor) << p.scale;
                if edges > MAX_GEN_NNZ {
                    return Err(GenError::TooLarge {
                        kind,
                        what: "edge-factor * 2^scale",
                        value: edges,
                        max: MAX_GEN_NNZ,
                    });
                }
            }
            GenSpec::Grid2d { nx, ny } => {
                for (key, v) in [("nx", nx), ("ny", ny)] {
                    if v == 0 {
                        return Err(range_err(kind, key, v, ">= 1"));
                    }
                }
                check_dim(kind, u64::from(nx) * u64::from(ny), 5)?;
            }
            GenSpec::Grid3d { nx, ny, nz } => {
                for (key, v) in [("nx", nx), ("ny", ny), ("nz", nz)] {
                    if v == 0 {
                        return Err(range_err(kind, key, v, ">= 1"));
                    }
                }
                check_dim(kind, u64::from(nx) * u64::from(ny) * u64::from(nz), 7)?;
            }
            GenSpec::Banded { n, width, density } => {
                if n == 0 || u64::from(n) > MAX_DIM {
                    return Err(range_err(kind, "n", n, ">= 1"));
                }
                if width >= n {
                    return Err(range_err(
                        kind,
                        "width",
                        width,
                        &format!("0..{n} (less than n)"),
                    ));
                }
                if !(density > 0.0 && density <= 1.0) {
                    return Err(range_err(kind, "density", density, "0 < density <= 1"));
                }
                let expect =
                    u64::from(n) + (2.0 * f64::from(width) * f64::from(n) * density) as u64;
                if expect > MAX_GEN_NNZ {
                    return Err(GenError::TooLarge {
                        kind,
                        what: "expected nonzeros",
                        value: expect,
                        max: MAX_GEN_NNZ,
                    });
                }
            }
            GenSpec::Paper { matrix, scale } => {
                let p = matrix.stats();
                if scale == 0 || u64::from(scale) > p.rows / (super::paper::NODES * 4) {
                    return Err(range_err(
                        kind,
                        "scale",
                        scale,
                        &format!(
                            "1..={} (at least 4 rows per node of 128)",
                            p.rows / (super::paper::NODES * 4)
                        ),
                    ));
                }
                if p.nnz / u64::from(scale) > MAX_GEN_NNZ {
                    return Err(GenError::TooLarge {
                        kind,
                        what: "nonzeros",
                        value: p.nnz / u64::from(scale),
                        max: MAX_GEN_NNZ,
                    });
                }
            }
            GenSpec::Uniform { rows, cols, nnz } => {
                if rows == 0 {
                    return Err(range_err(kind, "rows", rows, ">= 1"));
                }
                if cols == 0 {
                    return Err(range_err(kind, "cols", cols, ">= 1"));
                }
                let cells = u64::from(rows) * u64::from(cols);
                if nnz > cells {
                    return Err(range_err(
                        kind,
                        "nnz",
                        nnz,
                        &format!("0..={cells} (rows * cols)"),
                    ));
                }
                if nnz > MAX_GEN_NNZ {
                    return Err(GenError::TooLarge {
                        kind,
                        what: "nnz",
                        value: nnz,
                        max: MAX_GEN_NNZ,
                    });
                }
            }
        }
        Ok(())
    }

    /// The size of the matrix this spec generates, known before it is
    /// generated (for the memory estimate): rows, columns, nonzeros at
    /// most, and whether the coordinates come in row order. A paper
    /// stand-in's remote nonzeros and distinct remote idxs are known too
    /// when the run has the [`super::paper::NODES`] nodes it is calibrated for.
    pub fn workload(&self, nodes: u32) -> crate::sim::memory::Workload {
        use crate::sim::memory::{Workload, ORDERED, UNORDERED};
        match *self {
            GenSpec::Rmat(p) => {
                let n = 1u64 << p.scale;
                Workload::new(n, n, u64::from(p.edge_factor) << p.scale, UNORDERED)
            }
            GenSpec::Grid2d { nx, ny } => {
                let n = u64::from(nx) * u64::from(ny);
                Workload::new(n, n, 5 * n, ORDERED)
            }
            GenSpec::Grid3d { nx, ny, nz } => {
                let n = u64::from(nx) * u64::from(ny) * u64::from(nz);
                Workload::new(n, n, 7 * n, ORDERED)
            }
            GenSpec::Banded { n, width, .. } => {
                let n = u64::from(n);
                Workload::new(n, n, n * (2 * u64::from(width) + 1).min(n), ORDERED)
            }
            // In row order, but the sparse case draws its keys (8 B each)
            // before building.
            GenSpec::Uniform { rows, cols, nnz } => {
                Workload::new(u64::from(rows), u64::from(cols), nnz, ORDERED + 8)
            }
            GenSpec::Paper { matrix, scale } => {
                let s = super::paper::shape(matrix, scale);
                if u64::from(nodes) == super::paper::NODES {
                    s.workload()
                } else {
                    Workload::new(s.rows, s.rows, s.nnz, ORDERED)
                }
            }
        }
    }

    /// Generate the matrix. Returns the build statistics too (R-MAT merges
    /// repeated edges; the other generators never produce duplicates).
    pub fn generate(&self, seed: u64) -> Result<(CsrMatrix, BuildInfo), GenError> {
        self.validate()?;
        let mut rng = Xoshiro256::seed_from_u64(seed);
        match *self {
            GenSpec::Rmat(p) => rmat(&p, &mut rng),
            GenSpec::Grid2d { nx, ny } => grid(nx, ny, 1),
            GenSpec::Grid3d { nx, ny, nz } => grid(nx, ny, nz),
            GenSpec::Banded { n, width, density } => banded(n, width, density, &mut rng),
            GenSpec::Uniform { rows, cols, nnz } => uniform(rows, cols, nnz, &mut rng),
            GenSpec::Paper { matrix, scale } => {
                super::paper::standin(matrix, scale, &mut rng).map_err(GenError::from)
            }
        }
    }
}

fn check_dim(kind: &'static str, n: u64, per_row: u64) -> Result<(), GenError> {
    if n > MAX_DIM {
        return Err(GenError::TooLarge {
            kind,
            what: "grid points",
            value: n,
            max: MAX_DIM,
        });
    }
    if n * per_row > MAX_GEN_NNZ {
        return Err(GenError::TooLarge {
            kind,
            what: "nonzeros",
            value: n * per_row,
            max: MAX_GEN_NNZ,
        });
    }
    Ok(())
}

fn rmat(p: &RmatParams, rng: &mut Xoshiro256) -> Result<(CsrMatrix, BuildInfo), GenError> {
    let n = 1u64 << p.scale;
    let edges = u64::from(p.edge_factor) << p.scale;
    let mut b = CooBuilder::new(n, n, false)?;
    b.reserve(edges as usize);
    let (ab, abc) = (p.a + p.b, p.a + p.b + p.c);
    for _ in 0..edges {
        let (mut r, mut c) = (0u64, 0u64);
        for level in (0..p.scale).rev() {
            let bit = 1u64 << level;
            let u = rng.next_f64();
            let quadrant = if p.noise == 0.0 {
                // The thresholds rise (a, b, c are >= 0), so the quadrant
                // is how many of them `u` has reached: no branch to
                // mispredict at every level.
                u64::from(u >= p.a) + u64::from(u >= ab) + u64::from(u >= abc)
            } else {
                let mut w = [p.a, p.b, p.c, p.d];
                let mut sum = 0.0;
                for x in &mut w {
                    *x *= 1.0 - p.noise + 2.0 * p.noise * rng.next_f64();
                    sum += *x;
                }
                let t = u * sum;
                if t < w[0] {
                    0
                } else if t < w[0] + w[1] {
                    1
                } else if t < w[0] + w[1] + w[2] {
                    2
                } else {
                    3
                }
            };
            c |= bit * (quadrant & 1);
            r |= bit * (quadrant >> 1);
        }
        b.push(r, c, 1.0)?;
    }
    Ok(b.build())
}

fn grid(nx: u32, ny: u32, nz: u32) -> Result<(CsrMatrix, BuildInfo), GenError> {
    let (nx, ny, nz) = (u64::from(nx), u64::from(ny), u64::from(nz));
    let n = nx * ny * nz;
    let mut b = CooBuilder::new(n, n, false)?;
    b.reserve((n * if nz > 1 { 7 } else { 5 }) as usize);
    let plane = nx * ny;
    for z in 0..nz {
        for y in 0..ny {
            for x in 0..nx {
                let i = x + nx * (y + ny * z);
                // Neighbours in increasing column order.
                if z > 0 {
                    b.push(i, i - plane, 1.0)?;
                }
                if y > 0 {
                    b.push(i, i - nx, 1.0)?;
                }
                if x > 0 {
                    b.push(i, i - 1, 1.0)?;
                }
                b.push(i, i, 1.0)?;
                if x + 1 < nx {
                    b.push(i, i + 1, 1.0)?;
                }
                if y + 1 < ny {
                    b.push(i, i + nx, 1.0)?;
                }
                if z + 1 < nz {
                    b.push(i, i + plane, 1.0)?;
                }
            }
        }
    }
    Ok(b.build())
}

fn banded(
    n: u32,
    width: u32,
    density: f64,
    rng: &mut Xoshiro256,
) -> Result<(CsrMatrix, BuildInfo), GenError> {
    let n = u64::from(n);
    let w = u64::from(width);
    let mut b = CooBuilder::new(n, n, false)?;
    b.reserve((n as f64 * (1.0 + 2.0 * w as f64 * density)) as usize);
    for i in 0..n {
        let lo = i.saturating_sub(w);
        let hi = (i + w).min(n - 1);
        for j in lo..=hi {
            if j == i || rng.chance(density) {
                b.push(i, j, 1.0)?;
            }
        }
    }
    Ok(b.build())
}

fn uniform(
    rows: u32,
    cols: u32,
    nnz: u64,
    rng: &mut Xoshiro256,
) -> Result<(CsrMatrix, BuildInfo), GenError> {
    let cells = u64::from(rows) * u64::from(cols);
    let c64 = u64::from(cols);
    let mut b = CooBuilder::new(u64::from(rows), c64, false)?;
    b.reserve(nnz as usize);
    if nnz.saturating_mul(2) > cells {
        // Dense: selection sampling (Knuth's algorithm S) over every cell.
        let mut needed = nnz;
        for t in 0..cells {
            if needed == 0 {
                break;
            }
            if rng.below(cells - t) < needed {
                b.push(t / c64, t % c64, 1.0)?;
                needed -= 1;
            }
        }
    } else {
        // Sparse: draw, sort, dedupe, top up until exactly nnz distinct.
        let mut keys: Vec<u64> = Vec::with_capacity(nnz as usize);
        while (keys.len() as u64) < nnz {
            let missing = nnz - keys.len() as u64;
            for _ in 0..missing {
                keys.push(rng.below(cells));
            }
            keys.sort_unstable();
            keys.dedup();
        }
        for k in keys {
            b.push(k / c64, k % c64, 1.0)?;
        }
    }
    Ok(b.build())
}

const RMAT_KEYS: &str = "scale, edge-factor (ef), a, b, c, d, noise";
const GRID2D_KEYS: &str = "nx, ny";
const GRID3D_KEYS: &str = "nx, ny, nz";
const BANDED_KEYS: &str = "n, width, density";
const UNIFORM_KEYS: &str = "rows, cols, nnz";

fn parse_num<T: FromStr>(
    kind: &'static str,
    key: &'static str,
    v: &str,
    expected: &'static str,
) -> Result<T, GenError> {
    v.trim()
        .replace('_', "")
        .parse()
        .map_err(|_| GenError::BadValue {
            kind,
            key,
            value: v.to_string(),
            expected,
        })
}

impl FromStr for GenSpec {
    type Err = GenError;

    /// Parse `kind[:key=value,...]`, e.g. `rmat:scale=14,ef=8` or
    /// `grid2d:nx=100,ny=50`. The result is validated.
    fn from_str(s: &str) -> Result<GenSpec, GenError> {
        let (kind, rest) = match s.split_once(':') {
            Some((k, r)) => (k.trim(), r),
            None => (s.trim(), ""),
        };
        if kind.eq_ignore_ascii_case("paper") {
            // `paper:NAME` or `paper:NAME/S`.
            let (name, scale) = match rest.split_once('/') {
                Some((n, s)) => (
                    n.trim(),
                    parse_num("paper", "scale", s.trim(), "positive integer")?,
                ),
                None => (rest.trim(), 1),
            };
            let matrix = PaperMatrix::from_name(&name.to_ascii_lowercase()).ok_or_else(|| {
                GenError::BadValue {
                    kind: "paper",
                    key: "matrix",
                    value: name.to_string(),
                    expected: "arabic, europe, queen, stokes or uk",
                }
            })?;
            let spec = GenSpec::Paper { matrix, scale };
            spec.validate()?;
            return Ok(spec);
        }
        let mut spec = match kind.to_ascii_lowercase().as_str() {
            "rmat" | "r-mat" => GenSpec::Rmat(RmatParams::default()),
            "grid2d" => GenSpec::Grid2d { nx: 64, ny: 64 },
            "grid3d" => GenSpec::Grid3d {
                nx: 64,
                ny: 64,
                nz: 64,
            },
            "banded" | "queen" => GenSpec::Banded {
                n: 65_536,
                width: 64,
                density: 0.25,
            },
            "uniform" => GenSpec::Uniform {
                rows: 65_536,
                cols: 65_536,
                nnz: 1 << 20,
            },
            _ => return Err(GenError::UnknownKind(kind.to_string())),
        };
        let k = spec.kind();
        for item in rest.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            let (key, v) = item.split_once('=').ok_or_else(|| GenError::NotKeyValue {
                kind: k,
                item: item.to_string(),
            })?;
            let key = key.trim().to_ascii_lowercase();
            const U: &str = "non-negative integer";
            const F: &str = "number";
            match &mut spec {
                GenSpec::Rmat(p) => match key.as_str() {
                    "scale" => p.scale = parse_num(k, "scale", v, U)?,
                    "edge-factor" | "edge_factor" | "ef" => {
                        p.edge_factor = parse_num(k, "edge-factor", v, U)?
                    }
                    "a" => p.a = parse_num(k, "a", v, F)?,
                    "b" => p.b = parse_num(k, "b", v, F)?,
                    "c" => p.c = parse_num(k, "c", v, F)?,
                    "d" => p.d = parse_num(k, "d", v, F)?,
                    "noise" => p.noise = parse_num(k, "noise", v, F)?,
                    _ => return Err(unknown_key(k, key, RMAT_KEYS)),
                },
                GenSpec::Grid2d { nx, ny } => match key.as_str() {
                    "nx" => *nx = parse_num(k, "nx", v, U)?,
                    "ny" => *ny = parse_num(k, "ny", v, U)?,
                    _ => return Err(unknown_key(k, key, GRID2D_KEYS)),
                },
                GenSpec::Grid3d { nx, ny, nz } => match key.as_str() {
                    "nx" => *nx = parse_num(k, "nx", v, U)?,
                    "ny" => *ny = parse_num(k, "ny", v, U)?,
                    "nz" => *nz = parse_num(k, "nz", v, U)?,
                    _ => return Err(unknown_key(k, key, GRID3D_KEYS)),
                },
                GenSpec::Banded { n, width, density } => match key.as_str() {
                    "n" => *n = parse_num(k, "n", v, U)?,
                    "width" => *width = parse_num(k, "width", v, U)?,
                    "density" => *density = parse_num(k, "density", v, F)?,
                    _ => return Err(unknown_key(k, key, BANDED_KEYS)),
                },
                GenSpec::Uniform { rows, cols, nnz } => match key.as_str() {
                    "rows" => *rows = parse_num(k, "rows", v, U)?,
                    "cols" => *cols = parse_num(k, "cols", v, U)?,
                    "nnz" => *nnz = parse_num(k, "nnz", v, U)?,
                    _ => return Err(unknown_key(k, key, UNIFORM_KEYS)),
                },
                // Parsed above (`paper:NAME[/S]` takes no keys).
                GenSpec::Paper { .. } => {}
            }
        }
        spec.validate()?;
        Ok(spec)
    }
}

fn unknown_key(kind: &'static str, key: String, expected: &'static str) -> GenError {
    GenError::UnknownKey {
        kind,
        key,
        expected,
    }
}

impl fmt::Display for GenSpec {
    /// The canonical spec string ([`FromStr`] parses it back).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GenSpec::Rmat(p) => write!(
                f,
                "rmat:scale={},edge-factor={},a={},b={},c={},d={},noise={}",
                p.scale, p.edge_factor, p.a, p.b, p.c, p.d, p.noise
            ),
            GenSpec::Grid2d { nx, ny } => write!(f, "grid2d:nx={nx},ny={ny}"),
            GenSpec::Grid3d { nx, ny, nz } => write!(f, "grid3d:nx={nx},ny={ny},nz={nz}"),
            GenSpec::Banded { n, width, density } => {
                write!(f, "banded:n={n},width={width},density={density}")
            }
            GenSpec::Uniform { rows, cols, nnz } => {
                write!(f, "uniform:rows={rows},cols={cols},nnz={nnz}")
            }
            GenSpec::Paper { matrix, scale: 1 } => write!(f, "paper:{}", matrix.name()),
            GenSpec::Paper { matrix, scale } => write!(f, "paper:{}/{scale}", matrix.name()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_display_round_trip() {
        for s in [
            "rmat:scale=10,ef=4,a=0.45,b=0.15,c=0.15,d=0.25,noise=0.1",
            "grid2d:nx=3,ny=4",
            "grid3d:nx=2,ny=3,nz=4",
            "banded:n=100,width=5,density=0.5",
            "uniform:rows=10,cols=20,nnz=30",
            "rmat",
            "paper:queen",
            "paper:uk/8",
        ] {
            let g: GenSpec = s.parse().unwrap();
            let again: GenSpec = g.to_string().parse().unwrap();
            assert_eq!(g, again, "{s}");
        }
    }

    #[test]
    fn bad_specs_name_the_value() {
        let e = "rmat:a=0.5".parse::<GenSpec>().unwrap_err();
        assert!(e.to_string().contains("must be 1"), "{e}");
        let e = "grid2d:nx=0".parse::<GenSpec>().unwrap_err();
        assert!(e.to_string().contains("nx=0"), "{e}");
        let e = "grid2d:nq=3".parse::<GenSpec>().unwrap_err();
        assert!(e.to_string().contains("\"nq\""), "{e}");
        let e = "banded:width=x".parse::<GenSpec>().unwrap_err();
        assert!(e.to_string().contains("width=\"x\""), "{e}");
        let e = "uniform:rows=2,cols=2,nnz=5"
            .parse::<GenSpec>()
            .unwrap_err();
        assert!(e.to_string().contains("nnz=5"), "{e}");
        let e = "torus".parse::<GenSpec>().unwrap_err();
        assert!(matches!(e, GenError::UnknownKind(_)));
        let e = "rmat:scale=40".parse::<GenSpec>().unwrap_err();
        assert!(e.to_string().contains("scale=40"), "{e}");
        let e = "rmat:scale".parse::<GenSpec>().unwrap_err();
        assert!(matches!(e, GenError::NotKeyValue { .. }));
        let e = "paper:ara".parse::<GenSpec>().unwrap_err();
        assert!(
            e.to_string()
                .contains("arabic, europe, queen, stokes or uk"),
            "{e}"
        );
        let e = "paper:uk/0".parse::<GenSpec>().unwrap_err();
        assert!(e.to_string().contains("scale=0"), "{e}");
        let e = "paper:queen/100000".parse::<GenSpec>().unwrap_err();
        assert!(e.to_string().contains("scale=100000"), "{e}");
        let e = "paper:uk/x".parse::<GenSpec>().unwrap_err();
        assert!(e.to_string().contains("scale=\"x\""), "{e}");
    }
}
