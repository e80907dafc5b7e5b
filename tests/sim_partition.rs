//! Oracle tests: per-node distinct remote idxs, PR counts and SU's volume,
//! computed independently in the test (naive parsing, explicit ranges,
//! ordered sets) and compared with the simulator's partition analysis and
//! analytic models.

use std::collections::BTreeSet;
use std::path::PathBuf;

use netsparse::sim::analytic;
use netsparse::sim::config::SimConfig;
use netsparse::sim::matrix::gen::{GenSpec, RmatParams};
use netsparse::sim::matrix::{read_mtx_file, CsrMatrix, ReadOptions};
use netsparse::sim::partition::{analyze, Partition};

fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

/// A deliberately naive .mtx parser for general/symmetric fixtures:
/// returns (rows, cols, 0-based coordinates incl. mirrored ones).
fn naive_entries(name: &str) -> (u32, u32, Vec<(u32, u32)>) {
    let text = std::fs::read_to_string(data(name)).unwrap();
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    let banner = lines.next().unwrap().to_lowercase();
    let symmetric = banner.contains("symmetric");
    let mut lines = lines.filter(|l| !l.starts_with('%'));
    let size: Vec<u32> = lines
        .next()
        .unwrap()
        .split_whitespace()
        .map(|t| t.parse().unwrap())
        .collect();
    let mut e = Vec::new();
    for l in lines {
        let t: Vec<u32> = l
            .split_whitespace()
            .take(2)
            .map(|t| t.parse().unwrap())
            .collect();
        e.push((t[0] - 1, t[1] - 1));
        if symmetric && t[0] != t[1] {
            e.push((t[1] - 1, t[0] - 1));
        }
    }
    (size[0], size[1], e)
}

/// Equal split written out the long way: node n gets `base` items plus one
/// if n < remainder, handed out in order.
fn oracle_ranges(total: u32, nodes: u32) -> Vec<(u32, u32)> {
    let mut v = Vec::new();
    let mut start = 0;
    for n in 0..nodes {
        let len = total / nodes + if n < total % nodes { 1 } else { 0 };
        v.push((start, start + len));
        start += len;
    }
    v
}

fn oracle_owner(ranges: &[(u32, u32)], c: u32) -> u32 {
    ranges.iter().position(|&(s, e)| s <= c && c < e).unwrap() as u32
}

struct Oracle {
    remote_nnz: Vec<u64>,
    distinct: Vec<u64>,
    distinct_per_owner: Vec<Vec<u64>>,
    /// Per node, per core: distinct remote idxs of that core's rows.
    core_distinct: Vec<Vec<u64>>,
    su_bytes: Vec<u64>,
}

fn oracle(rows: u32, cols: u32, entries: &[(u32, u32)], nodes: u32, cores: u32, k: u32) -> Oracle {
    let rr = oracle_ranges(rows, nodes);
    let cr = oracle_ranges(cols, nodes);
    let mut o = Oracle {
        remote_nnz: vec![0; nodes as usize],
        distinct: vec![0; nodes as usize],
        distinct_per_owner: vec![vec![0; nodes as usize]; nodes as usize],
        core_distinct: vec![vec![0; cores as usize]; nodes as usize],
        su_bytes: vec![0; nodes as usize],
    };
    // Distinct coordinates (the reader merges duplicates).
    let uniq: BTreeSet<(u32, u32)> = entries.iter().copied().collect();
    for n in 0..nodes {
        let (rs, re) = rr[n as usize];
        let mut set = BTreeSet::new();
        for &(r, c) in &uniq {
            if r < rs || r >= re {
                continue;
            }
            let owner = oracle_owner(&cr, c);
            if owner != n {
                o.remote_nnz[n as usize] += 1;
                set.insert(c);
            }
        }
        o.distinct[n as usize] = set.len() as u64;
        for &c in &set {
            o.distinct_per_owner[n as usize][oracle_owner(&cr, c) as usize] += 1;
        }
        let core_ranges = oracle_ranges(re - rs, cores);
        for (ci, &(a, b)) in core_ranges.iter().enumerate() {
            let s: BTreeSet<u32> = uniq
                .iter()
                .filter(|&&(r, c)| r >= rs + a && r < rs + b && oracle_owner(&cr, c) != n)
                .map(|&(_, c)| c)
                .collect();
            o.core_distinct[n as usize][ci] = s.len() as u64;
        }
        let owned = cr[n as usize].1 - cr[n as usize].0;
        o.su_bytes[n as usize] = u64::from(cols - owned) * u64::from(k) * 4;
    }
    o
}

fn check(
    name: &str,
    m: &CsrMatrix,
    rows: u32,
    cols: u32,
    entries: &[(u32, u32)],
    nodes: u32,
    cores: u32,
) {
    let k = 16;
    let want = oracle(rows, cols, entries, nodes, cores, k);
    let part = Partition::equal(m, nodes).unwrap();
    let a = analyze(m, &part, cores, &mut |_| true);
    assert_eq!(a.nodes.len(), nodes as usize);
    for p in &a.nodes {
        let n = p.node as usize;
        assert_eq!(
            p.remote_nnz, want.remote_nnz[n],
            "{name}: node {n} remote nnz"
        );
        assert_eq!(
            p.distinct_remote, want.distinct[n],
            "{name}: node {n} distinct remote idxs"
        );
        assert_eq!(
            p.distinct_per_owner, want.distinct_per_owner[n],
            "{name}: node {n} per owner"
        );
        if cores > 1 {
            assert_eq!(
                p.group_distinct, want.core_distinct[n],
                "{name}: node {n} per core"
            );
        }
        let core_sum: u64 = want.core_distinct[n].iter().sum();
        assert_eq!(
            p.group_distinct_per_owner.iter().sum::<u64>(),
            core_sum,
            "{name}: node {n}"
        );
    }
    // SU volume per node, and the SA PR counts, through the analytic models.
    let cfg = SimConfig {
        nodes,
        racks: 1,
        k,
        sa_cores: cores,
        ..SimConfig::default()
    };
    let su = analytic::su(&part, &cfg);
    for r in &su.nodes {
        assert_eq!(
            r.rx.payload, want.su_bytes[r.node as usize],
            "{name}: SU bytes node {}",
            r.node
        );
        assert_eq!(r.rx.header, 0);
    }
    let tail = want.su_bytes.iter().copied().max().unwrap();
    assert_eq!(su.tail_node().unwrap().rx.payload, tail, "{name}: SU tail");
    let sa = analytic::sa(&a, &cfg, false);
    for r in &sa.nodes {
        let n = r.node as usize;
        assert_eq!(
            r.prs,
            Some(want.core_distinct[n].iter().sum::<u64>()),
            "{name}: SA PRs node {n}"
        );
        assert_eq!(r.remote_nnz, want.remote_nnz[n]);
    }
}

#[test]
fn fixtures_match_the_oracle() {
    for name in [
        "general_real.mtx",
        "symmetric_pattern.mtx",
        "rect_pattern.mtx",
    ] {
        let (rows, cols, e) = naive_entries(name);
        let (m, _) = read_mtx_file(&data(name), ReadOptions { values: false }).unwrap();
        for nodes in [2, 3, 4] {
            for cores in [1, 2] {
                check(name, &m, rows, cols, &e, nodes, cores);
            }
        }
    }
}

#[test]
fn general_fixture_by_hand() {
    // general_real.mtx on 3 nodes: rows/cols {0,1}, {2,3}, {4,5}.
    // Node 0: (0,0) local, (0,3) -> node 1, (1,2) -> node 1, (1,4) -> node 2.
    let (m, _) = read_mtx_file(&data("general_real.mtx"), ReadOptions { values: false }).unwrap();
    let part = Partition::equal(&m, 3).unwrap();
    let a = analyze(&m, &part, 1, &mut |_| true);
    let n0 = &a.nodes[0];
    assert_eq!(
        (n0.nnz, n0.local_nnz, n0.remote_nnz, n0.distinct_remote),
        (4, 1, 3, 3)
    );
    assert_eq!(n0.distinct_per_owner, vec![0, 2, 1]);
    // Node 2: (4,1) -> 0, (4,4) local, (5,0) -> 0, (5,2) -> 1, (5,5) local.
    let n2 = &a.nodes[2];
    assert_eq!((n2.remote_nnz, n2.distinct_remote), (3, 3));
    assert_eq!(n2.distinct_per_owner, vec![2, 1, 0]);
    let v = part.node(&m, 2);
    assert_eq!(v.cols, &[1, 4, 0, 2, 5]);
    assert_eq!(v.remote().collect::<Vec<_>>(), vec![(1, 0), (0, 0), (2, 1)]);
    assert_eq!(v.row(5), &[0, 2, 5]);
}

#[test]
fn generated_matrices_match_the_oracle() {
    let specs = [
        GenSpec::Grid2d { nx: 12, ny: 9 },
        GenSpec::Grid3d {
            nx: 5,
            ny: 4,
            nz: 3,
        },
        GenSpec::Banded {
            n: 300,
            width: 20,
            density: 0.3,
        },
        GenSpec::Uniform {
            rows: 150,
            cols: 97,
            nnz: 900,
        },
        GenSpec::Rmat(RmatParams {
            scale: 8,
            edge_factor: 6,
            ..RmatParams::default()
        }),
    ];
    for spec in specs {
        let (m, _) = spec.generate(5).unwrap();
        let e: Vec<(u32, u32)> = m.iter().map(|(r, c, _)| (r, c)).collect();
        for (nodes, cores) in [(4, 1), (7, 3), (16, 4)] {
            check(&spec.to_string(), &m, m.rows(), m.cols(), &e, nodes, cores);
        }
    }
}

#[test]
fn partition_file_drives_the_analysis() {
    let (m, _) = GenSpec::Grid2d { nx: 4, ny: 4 }.generate(0).unwrap();
    // Uneven: node 0 rows 0..2, node 1 rows 2..16.
    let part = Partition::from_text("0 2\n2 16\n", "p", &m, Some(2)).unwrap();
    let a = analyze(&m, &part, 1, &mut |_| true);
    // Rows 0 and 1 need columns 4 and 5 (grid neighbours below) and 2
    // (right of 1): all owned by node 1.
    assert_eq!(a.nodes[0].distinct_remote, 3);
    assert_eq!(a.nodes[1].distinct_remote, 2); // rows 2, 4, 5 need 1, 0, 1
    assert_eq!(part.cols.owner(1), 0);
    assert_eq!(part.cols.owner(2), 1);
}

#[test]
fn analysis_can_stop_early() {
    let (m, _) = GenSpec::Grid2d { nx: 8, ny: 8 }.generate(0).unwrap();
    let part = Partition::equal(&m, 8).unwrap();
    let a = analyze(&m, &part, 2, &mut |done| done < 3);
    assert_eq!(a.nodes.len(), 3);
}
