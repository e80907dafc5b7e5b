//! `netsparse sim --collective allreduce`: every algorithm's result equals
//! the direct sum of the workers' seeded tensors (all-zero, fully dense,
//! and sparse tensors whose nonzero blocks differ per worker), over one
//! rack and over several; the aggregator program refuses protocol
//! violations; bad parameters are refused naming the flag; the same seed
//! gives the same JSON.

use std::process::Command;

use netsparse::programs::{Bundled, ProgramCache};
use netsparse::sim::collective::{run, Algo, CollectiveParams, CollectiveReport};

fn params(density: f64) -> CollectiveParams {
    CollectiveParams {
        bytes: 64 * 64,
        block: 64,
        depth: 4,
        density,
        workers: 3,
        seed: 11,
        window: 2,
        ..CollectiveParams::default()
    }
}

fn run_ok(p: &CollectiveParams) -> CollectiveReport {
    let rep = run(p, &mut ProgramCache::new()).expect("runs");
    for r in &rep.results {
        assert!(r.verified, "{}: {:?}", r.algo, r.problems);
        assert!(r.time_ns > 0.0, "{r:?}");
    }
    rep
}

#[test]
fn every_algorithm_sums_exactly_at_several_densities() {
    for density in [0.0, 0.3, 1.0] {
        let rep = run_ok(&params(density));
        assert_eq!(rep.results.len(), 3);
        // omnireduce: --depth streams of depth 1; omniccl: one of depth d.
        let or = &rep.results[1];
        assert_eq!((or.depth, or.streams), (1, 4));
        assert_eq!(or.aggregator.expect("stats").refused.total(), 0);
        let omni = &rep.results[2];
        let agg = omni.aggregator.expect("aggregator stats");
        // Only nonzero blocks travel to the aggregator, each once.
        let nz: u64 = rep.nonzero_blocks.iter().sum();
        assert_eq!(agg.blocks, nz, "density {density}");
        assert_eq!(agg.refused.total(), 0);
        if density == 0.0 {
            assert_eq!(rep.union_blocks, 0);
            assert_eq!(agg.rounds, 0);
        }
        if density == 1.0 {
            assert_eq!(rep.union_blocks, 64);
            // 64 blocks at depth 4: 16 rounds.
            assert_eq!(agg.rounds, 16);
        }
    }
}

#[test]
fn workers_nonzero_blocks_differ_and_zero_blocks_are_skipped() {
    let p = params(0.3);
    let rep = run_ok(&p);
    let nz = &rep.nonzero_blocks;
    assert!(
        nz.iter().any(|&k| k != nz[0]) || rep.union_blocks > nz[0],
        "{nz:?}"
    );
    assert!(rep.union_blocks < 64 && rep.union_blocks > *nz.iter().max().unwrap());
    let ring = &rep.results[0];
    let omni = &rep.results[2];
    // Ring sends every block 2(n-1)/n times; OmNICCL only nonzero ones.
    assert_eq!(ring.max_worker_blocks_sent, 2 * 2 * 64 / 3 + 1);
    assert!(omni.max_worker_blocks_sent <= *nz.iter().max().unwrap());
}

#[test]
fn larger_blocks_more_workers_and_racks() {
    let p = CollectiveParams {
        bytes: 1024 * 96,
        block: 1024,
        depth: 16,
        density: 0.5,
        workers: 5,
        racks: 2,
        window: 3,
        ..CollectiveParams::default()
    };
    run_ok(&p);
}

#[test]
fn the_same_seed_gives_the_same_json() {
    let p = params(0.3);
    let a = serde_json::to_string(&run_ok(&p)).unwrap();
    let b = serde_json::to_string(&run_ok(&p)).unwrap();
    assert_eq!(a, b);
    let c = serde_json::to_string(&run_ok(&CollectiveParams { seed: 12, ..p })).unwrap();
    assert_ne!(a, c);
}

#[test]
fn the_aggregator_program_compiles_and_loads() {
    let art = ProgramCache::new()
        .get(Bundled::OmnicclAgg, &[])
        .expect("compiles");
    let cfg = netsparse_nic::coll::AggConfig {
        node: 4,
        workers: 4,
        depth: 8,
        block: 1024,
        window: 2,
        streams: 1,
        link_gbps: 400,
    };
    assert!(netsparse_nic::coll::Aggregator::new(&art, cfg).is_ok());
    let e = netsparse_nic::coll::Aggregator::new(
        &art,
        netsparse_nic::coll::AggConfig { block: 1430, ..cfg },
    )
    .expect_err("block too large")
    .to_string();
    assert!(e.contains("block = 1430"), "{e}");
}

fn cli(args: &[&str]) -> (Option<i32>, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_netsparse"))
        .args(args)
        .output()
        .unwrap();
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn cli_runs_and_refuses_bad_parameters() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("a.json");
    let (code, out, err) = cli(&[
        "sim",
        "--collective",
        "allreduce",
        "--algo",
        "ring,omniccl",
        "--bytes",
        "8192",
        "--block",
        "128",
        "--depth",
        "8",
        "--density",
        "0.5",
        "--workers",
        "3",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(out.contains("omniccl") && out.contains("yes"), "{out}");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(doc["results"].as_array().map(|a| a.len()), Some(2));
    for (flag, value, want) in [
        ("--block", "0", "--block 0"),
        ("--block", "2000", "--block 2000"),
        ("--density", "1.5", "--density 1.5"),
        ("--depth", "0", "--depth 0"),
        ("--workers", "1", "--workers 1"),
        ("--bytes", "1000", "--bytes 1000"),
    ] {
        let (code, out, err) = cli(&["sim", "--collective", "allreduce", flag, value]);
        assert_eq!(code, Some(2), "{flag} {value}: {out}{err}");
        assert!(err.contains(want), "{flag} {value}: {err}");
    }
    let (code, _, err) = cli(&["sim", "--collective", "allreduce", "--algo", "tree"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("tree"), "{err}");
    let (code, _, err) = cli(&["sim", "--collective", "broadcast"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("allreduce"), "{err}");
}

#[test]
fn a_lost_frame_is_reported_naming_the_workers_not_a_hang() {
    for (algo, k) in [(Algo::Ring, 3), (Algo::Omniccl, 2), (Algo::Omniccl, 40)] {
        let p = CollectiveParams {
            algos: vec![algo],
            drop_frame: Some(k),
            ..params(0.5)
        };
        let rep = run(&p, &mut ProgramCache::new()).expect("runs to the end");
        let r = &rep.results[0];
        assert!(!r.verified, "{algo} with frame {k} lost");
        assert!(
            r.problems
                .iter()
                .any(|m| m.contains("worker h") || m.contains("workers [")),
            "{algo}: {:?}",
            r.problems
        );
    }
}
