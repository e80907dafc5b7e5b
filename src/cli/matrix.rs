//! `netsparse matrix gen ...` and `netsparse matrix info FILE`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Context as _;
use clap::Parser as _;

use netsparse::sim::matrix::gen::RmatParams;
use netsparse::sim::matrix::{self, GenSpec, ReadOptions};
use netsparse::sim::memory;
use netsparse::sim::partition::{analyze, Partition};
use netsparse::sim::report::fmt_bytes;

use super::sim::DelayedBar;

/// Arguments of `netsparse matrix`.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(clap::Subcommand, Debug)]
enum Cmd {
    /// Generate a matrix (seeded, deterministic) and write it as .mtx.
    #[command(
        after_help = "Or any generator spec, as `sim --gen` takes it:\n  netsparse matrix gen paper:arabic/8 -o arabic8.mtx\n  netsparse matrix gen rmat:scale=16,ef=8 -o r16.mtx --seed 2"
    )]
    Gen {
        #[command(subcommand)]
        kind: GenKind,
    },
    /// Print a matrix's size, duplicates and per-node remote idx statistics.
    #[command(
        after_help = "Examples: netsparse matrix info queen.mtx --nodes 128\n          netsparse matrix info --gen rmat:scale=17,ef=8 --tiles 256"
    )]
    Info(InfoArgs),
}

/// The options after a generator spec (`matrix gen SPEC -o FILE`).
#[derive(clap::Parser, Debug)]
#[command(
    about = "Generate the matrix of a generator spec (as `sim --gen` takes it) and write it as .mtx"
)]
struct SpecOut {
    #[command(flatten)]
    out: GenOut,
    /// The global `--engine`, taken here too because the words after a
    /// spec reach this parser, not the global one. Checked as everywhere;
    /// it changes nothing, since `matrix gen` runs no P4 program.
    #[arg(long, value_name = "MODE", value_parser = super::engine::MODES)]
    engine: Option<String>,
}

/// Output options shared by every generator.
#[derive(clap::Args, Debug)]
struct GenOut {
    /// The output file.
    #[arg(short = 'o', long = "output", value_name = "FILE.mtx")]
    output: PathBuf,
    /// Seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

#[derive(clap::Subcommand, Debug)]
enum GenKind {
    /// R-MAT: 2^scale vertices, edge-factor x 2^scale sampled edges (duplicates merged).
    Rmat {
        /// log2 of rows (= columns).
        #[arg(long, default_value_t = 16)]
        scale: u32,
        /// Edges sampled per row.
        #[arg(long, default_value_t = 16)]
        edge_factor: u32,
        /// Quadrant probabilities a,b,c,d (must sum to 1).
        #[arg(long, value_delimiter = ',', default_values_t = [0.57, 0.19, 0.19, 0.05])]
        abcd: Vec<f64>,
        /// Per-level multiplicative noise (0 <= noise < 1).
        #[arg(long, default_value_t = 0.0)]
        noise: f64,
        #[command(flatten)]
        out: GenOut,
    },
    /// 5-point stencil on an nx x ny grid.
    Grid2d {
        /// Grid width.
        #[arg(long)]
        nx: u32,
        /// Grid height.
        #[arg(long)]
        ny: u32,
        #[command(flatten)]
        out: GenOut,
    },
    /// 7-point stencil on an nx x ny x nz grid.
    Grid3d {
        /// Grid width.
        #[arg(long)]
        nx: u32,
        /// Grid height.
        #[arg(long)]
        ny: u32,
        /// Grid depth.
        #[arg(long)]
        nz: u32,
        #[command(flatten)]
        out: GenOut,
    },
    /// Diagonal-heavy, queen-like: the diagonal plus each entry within `width` of it with probability `density`.
    Banded {
        /// Rows (= columns).
        #[arg(long)]
        n: u32,
        /// Half bandwidth.
        #[arg(long)]
        width: u32,
        /// Probability of each off-diagonal entry in the band.
        #[arg(long, default_value_t = 0.25)]
        density: f64,
        #[command(flatten)]
        out: GenOut,
    },
    /// A stand-in for one of the NetSparse paper's matrices (Table 6's size
    /// divided by --scale), calibrated to its published statistics on 128
    /// nodes in 8 racks (check with `matrix info --nodes 128 --racks 8 --paper NAME`).
    Paper {
        /// arabic, europe, queen, stokes or uk.
        #[arg(value_parser = ["arabic", "europe", "queen", "stokes", "uk"])]
        name: String,
        /// Divide the paper's rows and nonzeros by this.
        #[arg(long, default_value_t = 1)]
        scale: u32,
        #[command(flatten)]
        out: GenOut,
    },
    /// Any generator spec, as `sim --gen` takes it: `netsparse matrix gen
    /// paper:arabic/8 -o arabic8.mtx`, `rmat:scale=16,ef=8`, ...
    #[command(external_subcommand)]
    Spec(Vec<String>),
    /// Exactly nnz distinct uniformly random positions.
    Uniform {
        /// Rows.
        #[arg(long)]
        rows: u32,
        /// Columns.
        #[arg(long)]
        cols: u32,
        /// Nonzeros.
        #[arg(long)]
        nnz: u64,
        #[command(flatten)]
        out: GenOut,
    },
}

#[derive(clap::Args, Debug)]
struct InfoArgs {
    /// The Matrix Market file.
    #[arg(required_unless_present = "gen", conflicts_with = "gen")]
    file: Option<PathBuf>,
    /// A generator spec instead of a file (as `netsparse sim --gen`).
    #[arg(long, value_name = "SPEC")]
    gen: Option<String>,
    /// Seed for --gen.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Partition over N nodes and print remote idx statistics.
    #[arg(long)]
    nodes: Option<u32>,
    /// A partition file instead of equal rows (needs --nodes).
    #[arg(long, requires = "nodes")]
    partition: Option<PathBuf>,
    /// Property elements (4 bytes each) for the SU volume line.
    #[arg(long, default_value_t = 16)]
    k: u32,
    /// Group the nodes into R racks (contiguous, nodes / R each) and print
    /// the paper's workload statistics: Table 1 (useful : redundant
    /// transfers under SU and SA), Table 4 (distinct destinations among 64
    /// consecutive PRs) and §3's intra-rack sharing (needs --nodes).
    #[arg(long, value_name = "R", requires = "nodes")]
    racks: Option<u32>,
    /// Print the paper's values for matrix NAME (arabic, europe, queen,
    /// stokes, uk) beside the statistics of --racks. A stand-in (`--gen
    /// paper:NAME...`, or a file whose header `matrix gen` wrote) gets its
    /// own without this.
    #[arg(long, value_name = "NAME", requires = "racks", value_parser = ["arabic", "europe", "queen", "stokes", "uk"])]
    paper: Option<String>,
    /// Print one line per node.
    #[arg(long)]
    per_node: bool,
    /// Cut the matrix into a √P×√P grid of tiles (P a perfect square) and
    /// print the load imbalance of Brock et al.'s 2D SpMM (their Figure 1):
    /// max/mean nonzeros over tiles, per stage of the stationary-C loop and
    /// end to end, without and with a random symmetric relabelling.
    #[arg(long, value_name = "P")]
    tiles: Option<u64>,
    /// Seed of the random symmetric relabelling of --tiles.
    #[arg(long, default_value_t = 1, requires = "tiles")]
    relabel_seed: u64,
    /// No progress bar.
    #[arg(long, short = 'q')]
    quiet: bool,
}

fn gen(kind: GenKind) -> anyhow::Result<ExitCode> {
    let (spec, out) = match kind {
        GenKind::Rmat {
            scale,
            edge_factor,
            abcd,
            noise,
            out,
        } => {
            let [a, b, c, d] = <[f64; 4]>::try_from(abcd.as_slice())
                .map_err(|_| anyhow::anyhow!("--abcd needs exactly 4 values"))?;
            (
                GenSpec::Rmat(RmatParams {
                    scale,
                    edge_factor,
                    a,
                    b,
                    c,
                    d,
                    noise,
                }),
                out,
            )
        }
        GenKind::Grid2d { nx, ny, out } => (GenSpec::Grid2d { nx, ny }, out),
        GenKind::Grid3d { nx, ny, nz, out } => (GenSpec::Grid3d { nx, ny, nz }, out),
        GenKind::Banded {
            n,
            width,
            density,
            out,
        } => (GenSpec::Banded { n, width, density }, out),
        GenKind::Uniform {
            rows,
            cols,
            nnz,
            out,
        } => (GenSpec::Uniform { rows, cols, nnz }, out),
        GenKind::Spec(words) => {
            let (spec, rest) = words
                .split_first()
                .ok_or_else(|| anyhow::anyhow!("matrix gen: no generator given"))?;
            // Usage errors and --help as clap gives them for the other
            // generators (exit 2, or 0 for help).
            let parsed = SpecOut::try_parse_from(
                std::iter::once(format!("netsparse matrix gen {spec}")).chain(rest.iter().cloned()),
            )
            .unwrap_or_else(|e| e.exit());
            let g = spec
                .parse::<GenSpec>()
                .map_err(|e| anyhow::anyhow!("matrix gen {spec}: {e}"))?;
            g.validate()
                .map_err(|e| anyhow::anyhow!("matrix gen {spec}: {e}"))?;
            (g, parsed.out)
        }
        GenKind::Paper { name, scale, out } => (
            format!("paper:{name}/{scale}")
                .parse::<GenSpec>()
                .with_context(|| format!("matrix gen paper {name} --scale {scale}"))?,
            out,
        ),
    };
    check_matrix_memory(&spec.workload(0), &spec.to_string())?;
    let t0 = Instant::now();
    let (m, info) = spec.generate(out.seed)?;
    let comment = format!(
        " generated by netsparse {}: {spec}, seed {}",
        env!("CARGO_PKG_VERSION"),
        out.seed
    );
    matrix::write_mtx_file(&m, &out.output, &comment)
        .with_context(|| format!("cannot write {}", out.output.display()))?;
    println!(
        "wrote {}: {} x {}, {} nonzeros ({} duplicate edges merged) in {:.2} s",
        out.output.display(),
        m.rows(),
        m.cols(),
        m.nnz(),
        info.duplicates,
        t0.elapsed().as_secs_f64()
    );
    Ok(ExitCode::SUCCESS)
}

fn stats(v: &[u64]) -> (u64, f64, u64) {
    let min = v.iter().copied().min().unwrap_or(0);
    let max = v.iter().copied().max().unwrap_or(0);
    let mean = if v.is_empty() {
        0.0
    } else {
        v.iter().sum::<u64>() as f64 / v.len() as f64
    };
    (min, mean, max)
}

/// Refuse a matrix whose construction would not fit in physical memory,
/// before anything large is allocated.
fn check_matrix_memory(w: &memory::Workload, what: &str) -> anyhow::Result<()> {
    let est = memory::estimate(w, &netsparse::sim::config::SimConfig::default(), &[], false);
    memory::check(&est, None, what)?;
    Ok(())
}

/// The paper matrix a stand-in stands for, when `--paper` does not say:
/// from a `--gen paper:NAME...` spec, or from the header comment that
/// `matrix gen` writes (`% generated by netsparse ...: paper:NAME/S, ...`).
fn stand_in_of(file: Option<&std::path::Path>, gen: Option<&str>) -> Option<(String, String)> {
    if let Some(spec) = gen {
        if let Ok(GenSpec::Paper { matrix, .. }) = spec.parse::<GenSpec>() {
            return Some((matrix.name().to_owned(), format!("--gen {spec}")));
        }
        return None;
    }
    use std::io::BufRead as _;
    let f = std::fs::File::open(file?).ok()?;
    for line in std::io::BufReader::new(f).lines().take(8) {
        let line = line.ok()?;
        if !line.starts_with('%') {
            break;
        }
        let Some(rest) = line.split_once("generated by netsparse").map(|x| x.1) else {
            continue;
        };
        let spec = rest.split_once(": ")?.1.split(", seed").next()?.trim();
        if let Ok(GenSpec::Paper { matrix, .. }) = spec.parse::<GenSpec>() {
            return Some((
                matrix.name().to_owned(),
                format!("the file's header ({spec})"),
            ));
        }
    }
    None
}

fn info(a: InfoArgs) -> anyhow::Result<ExitCode> {
    if let Some((w, what)) = super::sim::workload(a.file.as_deref(), a.gen.as_deref(), 0) {
        check_matrix_memory(&w, &what)?;
    }
    let mut bar = DelayedBar::new(!a.quiet);
    let t0 = Instant::now();
    let m = match (&a.file, &a.gen) {
        (Some(path), _) => {
            let f = std::fs::File::open(path)
                .with_context(|| format!("cannot open {}", path.display()))?;
            let (m, info) = matrix::mtx::read_mtx_with_progress(
                std::io::BufReader::with_capacity(1 << 20, f),
                ReadOptions { values: false },
                &mut |done, total| bar.update("reading matrix", done, total),
            )
            .with_context(|| format!("{}", path.display()))?;
            bar.finish();
            println!("file:        {}", path.display());
            println!(
                "format:      coordinate {:?} {:?}",
                info.field, info.symmetry
            );
            println!(
                "entries:     {} declared, {} after mirroring, {} duplicates merged{}",
                info.declared_entries,
                info.build.entries,
                info.build.duplicates,
                if info.skew_zero_diagonal > 0 {
                    format!(
                        ", {} zero skew diagonal entries dropped",
                        info.skew_zero_diagonal
                    )
                } else {
                    String::new()
                }
            );
            m
        }
        (None, Some(spec)) => {
            let spec: GenSpec = spec.parse().with_context(|| format!("--gen {spec}"))?;
            let (m, info) = spec.generate(a.seed)?;
            println!("generator:   {spec} (seed {})", a.seed);
            println!(
                "entries:     {} generated, {} duplicates merged",
                info.entries, info.duplicates
            );
            m
        }
        (None, None) => anyhow::bail!("give a FILE or --gen SPEC"),
    };
    println!(
        "size:        {} x {}, {} nonzeros",
        m.rows(),
        m.cols(),
        m.nnz()
    );
    println!("loaded in    {:.3} s", t0.elapsed().as_secs_f64());
    if let Some(p) = a.tiles {
        print_tiles(&m, p, a.relabel_seed)?;
    }
    let Some(nodes) = a.nodes else {
        return Ok(ExitCode::SUCCESS);
    };
    let part = match &a.partition {
        Some(p) => Partition::read_file(p, &m, Some(nodes))?,
        None => Partition::equal(&m, nodes)?,
    };
    let an = analyze(&m, &part, 1, &mut |done| {
        bar.update("remote idxs per node", u64::from(done), u64::from(nodes));
        true
    });
    bar.finish();
    let col = |f: &dyn Fn(&netsparse::sim::partition::NodeProfile) -> u64| -> Vec<u64> {
        an.nodes.iter().map(f).collect()
    };
    let rows = col(&|p| u64::from(p.rows.end - p.rows.start));
    let nnz = col(&|p| p.nnz);
    let remote = col(&|p| p.remote_nnz);
    let distinct = col(&|p| p.distinct_remote);
    let owners = col(&|p| p.distinct_per_owner.iter().filter(|&&c| c > 0).count() as u64);
    println!(
        "partition:   {nodes} nodes ({})",
        if a.partition.is_some() {
            "from file"
        } else {
            "equal contiguous rows"
        }
    );
    println!(
        "{:<24}{:>14}{:>16}{:>14}{:>16}",
        "per node", "min", "mean", "max", "total"
    );
    for (name, v) in [
        ("rows", &rows),
        ("nonzeros", &nnz),
        ("remote nonzeros", &remote),
        ("distinct remote idxs", &distinct),
        ("owners contacted", &owners),
    ] {
        let (lo, mean, hi) = stats(v);
        println!(
            "{name:<24}{lo:>14}{mean:>16.1}{hi:>14}{:>16}",
            v.iter().sum::<u64>()
        );
    }
    let total_remote: u64 = remote.iter().sum();
    let total_distinct: u64 = distinct.iter().sum();
    if total_remote > 0 {
        println!(
            "per-node filtering removes {:.1}% of remote nonzeros",
            100.0 * (1.0 - total_distinct as f64 / total_remote as f64)
        );
    }
    let prop = u64::from(a.k) * 4;
    let su_tail = (0..nodes)
        .map(|n| u64::from(m.cols() - part.cols.len(n)) * prop)
        .max()
        .unwrap_or(0);
    let (_, _, max_distinct) = stats(&distinct);
    println!(
        "K = {}: SU tail node receives {}, the neediest node needs {} ({:.1}x less)",
        a.k,
        fmt_bytes(su_tail),
        fmt_bytes(max_distinct * prop),
        if max_distinct > 0 {
            su_tail as f64 / (max_distinct * prop) as f64
        } else {
            f64::INFINITY
        }
    );
    if let Some(racks) = a.racks {
        if racks == 0 || nodes % racks != 0 {
            anyhow::bail!("--racks {racks}: must divide --nodes {nodes} (racks of equal size)");
        }
        let inferred = match &a.paper {
            Some(_) => None,
            None => stand_in_of(a.file.as_deref(), a.gen.as_deref()),
        };
        if let Some((name, from)) = &inferred {
            println!("stand-in for {name} (from {from}): the paper's values beside");
        }
        let paper = a
            .paper
            .as_deref()
            .or(inferred.as_ref().map(|x| x.0.as_str()));
        print_locality(&m, &part, nodes / racks, racks, paper);
    }
    if a.per_node {
        println!(
            "{:>6}{:>14}{:>14}{:>14}{:>14}{:>10}",
            "node", "rows", "nnz", "remote nnz", "distinct", "owners"
        );
        for (i, p) in an.nodes.iter().enumerate() {
            println!(
                "{:>6}{:>14}{:>14}{:>14}{:>14}{:>10}",
                p.node, rows[i], p.nnz, p.remote_nnz, p.distinct_remote, owners[i]
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `--tiles P`: Brock et al.'s Figure 1 statistic, without and with a
/// random symmetric relabelling (the latter skipped, with a note, for a
/// rectangular matrix).
fn print_tiles(m: &netsparse::sim::matrix::CsrMatrix, p: u64, seed: u64) -> anyhow::Result<()> {
    use netsparse::sim::tiling::{tile_stats, TilingError};
    let plain = tile_stats(m, p, None)?;
    let relabelled = match tile_stats(m, p, Some(seed)) {
        Ok(s) => Some(s),
        Err(e @ TilingError::NotSquareMatrix { .. }) => {
            println!("relabelling skipped: {e}");
            None
        }
        Err(e) => return Err(e.into()),
    };
    let g = plain.grid;
    println!("2D tiling:   {g} x {g} tiles (max / mean; 1.00 is perfect balance)");
    println!(
        "{:<34}{:>12}{:>22}",
        "load imbalance",
        "as given",
        format!("relabelled (seed {seed})")
    );
    let names = [
        "nonzeros per tile",
        "per stage, mean over stages",
        "per stage, worst stage",
        "end to end (stationary C)",
        "largest tile, nonzeros",
    ];
    let values = |s: &netsparse::sim::tiling::TileStats| {
        [
            format!("{:.2}", s.tile_imbalance),
            format!("{:.2}", s.mean_stage_imbalance()),
            format!("{:.2}", s.max_stage_imbalance()),
            format!("{:.2}", s.end_to_end_imbalance),
            s.tile_nnz.iter().max().copied().unwrap_or(0).to_string(),
        ]
    };
    let given = values(&plain);
    let other = relabelled.as_ref().map(values);
    for (i, name) in names.iter().enumerate() {
        println!(
            "{name:<34}{:>12}{:>22}",
            given[i],
            other.as_ref().map_or("-", |o| o[i].as_str())
        );
    }
    Ok(())
}

/// The paper's published statistics of its five matrices on 128 nodes:
/// Table 1 (redundant transfers per useful one, SU and SA) and Table 4
/// (distinct destinations among 64 consecutive PRs). §3 gives the
/// intra-group sharing only as an average over the matrices: 85%.
const PAPER: [(&str, f64, f64, f64); 5] = [
    ("arabic", 1947.0, 27.0, 2.51),
    ("europe", 582.0, 0.02, 7.43),
    ("queen", 74.0, 25.0, 1.00),
    ("stokes", 32.0, 3.6, 1.85),
    ("uk", 966.0, 4.5, 5.61),
];

/// The Table 1 / Table 4 / §3 statistics, with the paper's beside them.
fn print_locality(
    m: &netsparse::sim::matrix::CsrMatrix,
    part: &Partition,
    group: u32,
    racks: u32,
    paper: Option<&str>,
) {
    use netsparse::sim::locality::{measure, WINDOW};
    let l = measure(m, part, group);
    let p = paper.and_then(|n| PAPER.iter().find(|x| x.0 == n));
    let beside = |v: Option<String>| v.map_or(String::new(), |v| format!("   (paper: {v})"));
    println!(
        "paper statistics ({} nodes, {racks} racks of {group}):",
        l.nodes
    );
    println!(
        "  useful : redundant, SU (Table 1)      1:{:.2}{}",
        l.su_redundancy(),
        beside(p.map(|p| format!("1:{}", p.1)))
    );
    println!(
        "  useful : redundant, SA (Table 1)      1:{:.2}{}",
        l.sa_redundancy(),
        beside(p.map(|p| format!("1:{}", p.2)))
    );
    println!(
        "  destinations in {WINDOW} consecutive PRs   {:.2} of {}{}",
        l.mean_destinations(),
        l.nodes.saturating_sub(1),
        beside(p.map(|p| format!("{:.2}", p.3)))
    );
    println!(
        "  PRs useful to >1 node of the rack     {:.1}%{}",
        100.0 * l.shared_fraction(),
        beside(p.map(|_| "85% on average over its five matrices".to_owned()))
    );
    println!(
        "  ({} useful PRs, {} SU and {} SA transfers, {} windows of {WINDOW})",
        l.useful, l.su_transfers, l.sa_transfers, l.windows
    );
}

/// Run `netsparse matrix`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    match args.cmd {
        Cmd::Gen { kind } => gen(kind),
        Cmd::Info(a) => info(a),
    }
}
