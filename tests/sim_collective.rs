//! `netsparse sim --collective allreduce`: every algorithm's result equals
//! the direct sum of the workers' seeded tensors (all-zero, fully dense,
//! and sparse tensors whose nonzero blocks differ per worker), over one
//! rack and over several; the aggregator program refuses protocol
//! violations; bad parameters are refused naming the flag; the same seed
//! gives the same JSON. The aggregator in a NetSparse switch's middle pipes
//! (`--agg-at switch`, `programs/omniccl_switch.p4`) sums exactly in the
//! simulator and when driven directly with votes and blocks in shuffled
//! orders, and counts bad input.

use std::process::Command;

use netsparse::programs::{Bundled, ProgramCache};
use netsparse::sim::collective::{run, AggAt, Algo, CollectiveParams, CollectiveReport};
use netsparse_bmv2::{NsCollStats, NsCollective, NsConfig, NsSwitch};
use netsparse_nic::coll::PrSender;

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
fn overlapping_patterns_shrink_the_union_and_still_sum_exactly() {
    let p = CollectiveParams {
        overlap: 1.0,
        ..params(0.3)
    };
    let rep = run_ok(&p);
    let nz = &rep.nonzero_blocks;
    assert!(nz.iter().all(|&k| k == nz[0]), "{nz:?}");
    assert_eq!(rep.union_blocks, nz[0]);
    // Every chosen block is nonzero at every worker: full rounds.
    let agg = rep.results[2].aggregator.unwrap();
    assert_eq!(agg.blocks, 3 * rep.union_blocks);
    assert!(rep.results[2]
        .agg_link_busy
        .is_some_and(|b| b > 0.0 && b <= 1.0));
    let half = run_ok(&CollectiveParams {
        overlap: 0.5,
        ..params(0.3)
    });
    let indep = run_ok(&params(0.3));
    assert!(rep.union_blocks < half.union_blocks && half.union_blocks < indep.union_blocks);
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
        ("--overlap", "1.5", "--overlap 1.5"),
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

// ----- the aggregator in a NetSparse switch's middle pipes (--agg-at switch) -----

fn switch_params(density: f64) -> CollectiveParams {
    CollectiveParams {
        agg_at: AggAt::Switch,
        ..params(density)
    }
}

#[test]
fn the_switch_aggregator_sums_exactly_at_several_densities() {
    for density in [0.0, 0.3, 1.0] {
        let rep = run_ok(&switch_params(density));
        let ring = &rep.results[0];
        assert_eq!(ring.agg_at, None);
        for r in &rep.results[1..] {
            assert_eq!(r.agg_at, Some(AggAt::Switch));
            assert!(r.aggregator.is_none(), "no NIC aggregator");
            let s = r.switch_aggregator.expect("switch aggregator stats");
            let nz: u64 = rep.nonzero_blocks.iter().sum();
            assert_eq!(s.unit.blocks, nz, "{} at density {density}", r.algo);
            assert_eq!(s.unit.refused.total(), 0);
            assert_eq!((s.unit.program_errors, s.prs_rejected), (0, 0));
            // Every worker receives every block of the union once.
            assert!(s.prs_sent >= 3 * rep.union_blocks, "{s:?}");
        }
        if density == 1.0 {
            let s = rep.results[2].switch_aggregator.unwrap();
            assert_eq!(s.unit.rounds, 16);
        }
    }
}

#[test]
fn the_switch_aggregator_over_two_racks_with_larger_blocks() {
    let p = CollectiveParams {
        bytes: 1024 * 96,
        block: 1024,
        depth: 16,
        density: 0.5,
        workers: 5,
        racks: 2,
        window: 3,
        agg_at: AggAt::Switch,
        ..CollectiveParams::default()
    };
    let rep = run_ok(&p);
    // Nothing crosses an aggregator link: faster than on the NIC.
    let nic = run_ok(&CollectiveParams {
        agg_at: AggAt::Nic,
        ..p.clone()
    });
    assert!(
        rep.results[2].time_ns < nic.results[2].time_ns,
        "switch {} ns, NIC {} ns",
        rep.results[2].time_ns,
        nic.results[2].time_ns
    );
}

#[test]
fn the_switch_aggregator_refuses_agg_gbps() {
    let p = CollectiveParams {
        agg_gbps: 1600,
        ..switch_params(0.3)
    };
    let e = p
        .validate()
        .expect_err("--agg-gbps with --agg-at switch")
        .to_string();
    assert!(
        e.starts_with("--agg-gbps 1600") && e.contains("--agg-at nic"),
        "{e}"
    );
}

/// Drive the switch running `omniccl_switch.p4` directly: three workers on
/// ports 0..3 (the aggregator node 3 on port 3), one round of four
/// blocks. Votes arrive in a seeded order, then the blocks and DONE
/// markers, one per frame, in another; plus a vote from an unknown worker
/// and a block of the wrong size. Returns what each worker received: the
/// NEXT indices and the (index, sum) pairs, sorted.
#[allow(clippy::type_complexity)]
fn drive_switch(perm_seed: u64) -> (Vec<(Vec<u64>, Vec<(u64, Vec<u8>)>)>, NsCollStats) {
    use netsparse_externs::coll::{coll_pr, CollConfig, BLOCK, DONE, NEXT, NONE, SUM, VOTE};
    use netsparse_externs::deconcat::{DeconcatConfig, Deconcatenator};
    use netsparse_externs::wire::PrType;
    use netsparse_externs::{Datapath, Outputs, Time};

    const B: u32 = 16;
    let (n, agg) = (3u32, 3u32);
    // Worker w's nonzero blocks of 0..4 and their words (near u32::MAX, so
    // the sums wrap).
    let has = |w: u32, j: u64| (w + j as u32) % 3 != 0 || j == 3;
    let block = |w: u32, j: u64| -> Vec<u8> {
        (0..B / 4)
            .flat_map(|k| {
                (u32::MAX - 5)
                    .wrapping_add(w * 1000 + j as u32 * 7 + k)
                    .to_le_bytes()
            })
            .collect()
    };
    let art = ProgramCache::new()
        .get(Bundled::OmnicclSwitch, &[])
        .expect("omniccl_switch.p4 compiles");
    let cfg = NsConfig {
        ports: 4,
        pipes: 2,
        ..NsConfig::default()
    };
    let mut sw = NsSwitch::new(&art, cfg).expect("loads");
    let mut cmds = String::new();
    for p in 0..4 {
        cmds.push_str(&format!("table_add node_port set_port {p} => {p}\n"));
    }
    cmds.push_str(&format!("table_add coll_node serve {agg} =>\n"));
    netsparse_engine::control::commands::apply(&mut sw, &cmds, "cmds").expect("entries");
    sw.configure_collective(NsCollective {
        unit: CollConfig {
            workers: n,
            depth: 4,
            block: B,
            window: 2,
            streams: 1,
        },
        node: agg,
        worker_ports: vec![0, 1, 2],
    })
    .expect("configured");
    // One frame from `src` with the reads `kind` of `idxs`, or one block.
    let frame = |src: u32, kind: u16, idxs: &[u64], payload: Option<Vec<u8>>| -> Vec<u8> {
        let mut tx = PrSender::new(src, 400, 1500).unwrap();
        for &idx in idxs {
            let pr = coll_pr(src, kind, 0, idx);
            match &payload {
                Some(p) => tx.push(Time::ZERO, PrType::Response, agg, p.len() as u32, &pr, p),
                None => tx.push(Time::ZERO, PrType::Read, agg, B, &pr, &[]),
            }
        }
        tx.flush(Time::ZERO);
        let mut out = Outputs::new();
        tx.emit(Time::from_us(1), &mut out);
        let f: Vec<Vec<u8>> = out.iter().map(|(_, f)| f.to_vec()).collect();
        assert_eq!(f.len(), 1);
        f.into_iter().next().unwrap()
    };
    // A seeded permutation (Fisher-Yates on a 64-bit LCG).
    let mut state = perm_seed.wrapping_mul(6364136223846793005).wrapping_add(1);
    let mut shuffle = |v: &mut Vec<(u32, Vec<u8>)>| {
        for i in (1..v.len()).rev() {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            v.swap(i, (state >> 33) as usize % (i + 1));
        }
    };
    let mut votes: Vec<(u32, Vec<u8>)> = Vec::new();
    let mut sends: Vec<(u32, Vec<u8>)> = Vec::new();
    for w in 0..n {
        // A worker's votes ascend, in one message; workers' messages and
        // every block and DONE arrive in any order.
        let own: Vec<u64> = (0..4).filter(|&j| has(w, j)).collect();
        let vote: Vec<u64> = (0..4)
            .map(|k| own.get(k).copied().unwrap_or(NONE))
            .collect();
        votes.push((w, frame(w, VOTE, &vote, None)));
        for &j in &own {
            sends.push((w, frame(w, BLOCK, &[j], Some(block(w, j)))));
        }
        sends.push((w, frame(w, DONE, &[own.len() as u64], None)));
    }
    // Bad input: a vote from worker 9 (unknown), a block of 8 bytes.
    votes.push((1, frame(9, VOTE, &[0], None)));
    sends.push((2, frame(2, BLOCK, &[3], Some(vec![1; 8]))));
    shuffle(&mut votes);
    shuffle(&mut sends);
    let mut out = Outputs::new();
    let mut now = Time::ZERO;
    for (port, f) in votes {
        now += Time::from_ns(30);
        sw.on_packet(now, port, &f, &mut out);
    }
    sw.flush_all(now, &mut out);
    for (port, f) in sends {
        now += Time::from_ns(30);
        sw.on_packet(now, port, &f, &mut out);
    }
    sw.flush_all(now + Time::from_us(1), &mut out);
    let mut got = vec![(Vec::new(), Vec::new()); n as usize];
    let mut dec = Deconcatenator::new(DeconcatConfig::default());
    for (port, f) in out.iter() {
        let d = dec.frame(f).expect("the switch sends well-formed frames");
        assert!(port < n, "nothing goes to the aggregator node's port");
        for v in d.prs {
            assert_eq!(v.src, agg);
            let g = &mut got[port as usize];
            match v.tid {
                NEXT => g.0.push(v.idx),
                SUM => g.1.push((v.idx, v.payload.to_vec())),
                k => panic!("unexpected kind {k}"),
            }
        }
    }
    for g in &mut got {
        g.1.sort();
    }
    // The direct sum.
    for g in &got {
        assert_eq!(g.0, vec![0, 1, 2, 3], "NEXT: the union of the votes");
        assert_eq!(g.1.len(), 4, "one sum per block of the union");
        for (j, sum) in &g.1 {
            let mut want = vec![0u8; B as usize];
            for w in (0..n).filter(|&w| has(w, *j)) {
                for (a, b) in want.chunks_exact_mut(4).zip(block(w, *j).chunks_exact(4)) {
                    let x = u32::from_le_bytes(a.try_into().unwrap());
                    let y = u32::from_le_bytes(b.try_into().unwrap());
                    a.copy_from_slice(&x.wrapping_add(y).to_le_bytes());
                }
            }
            assert_eq!(sum, &want, "block {j}");
        }
    }
    (got, sw.collective_stats().expect("configured"))
}

#[test]
fn the_switch_aggregator_sums_exactly_under_reordering_and_counts_bad_input() {
    let (first, s) = drive_switch(1);
    assert_eq!(s.unit.refused.unknown_worker, 1, "{s:?}");
    assert_eq!(s.unit.refused.block_size, 1, "{s:?}");
    assert_eq!(s.unit.refused.total(), 2, "{s:?}");
    assert_eq!((s.unit.rounds, s.unit.program_errors), (1, 0));
    for seed in 2..8 {
        let (got, s) = drive_switch(seed);
        assert_eq!(got, first, "order {seed}");
        assert_eq!(s.unit.refused.total(), 2);
    }
}

#[test]
fn a_collective_extern_without_a_configured_collective_is_counted() {
    let art = ProgramCache::new()
        .get(Bundled::OmnicclSwitch, &[])
        .expect("compiles");
    let mut sw = NsSwitch::new(
        &art,
        NsConfig {
            ports: 4,
            pipes: 2,
            ..NsConfig::default()
        },
    )
    .unwrap();
    assert!(sw.collective_stats().is_none());
    let bad = |ports: Vec<u32>| NsCollective {
        unit: netsparse_externs::coll::CollConfig {
            workers: 3,
            depth: 4,
            block: 16,
            window: 2,
            streams: 1,
        },
        node: 3,
        worker_ports: ports,
    };
    let e = sw
        .configure_collective(bad(vec![0, 1]))
        .unwrap_err()
        .to_string();
    assert!(e.contains("2 ports for 3 workers"), "{e}");
    let e = sw
        .configure_collective(bad(vec![0, 1, 7]))
        .unwrap_err()
        .to_string();
    assert!(e.contains("port 7"), "{e}");
    let mut c = bad(vec![0, 1, 2]);
    c.unit.block = 6;
    let e = sw.configure_collective(c).unwrap_err().to_string();
    assert!(e.contains("block = 6"), "{e}");
    // Unconfigured: a vote to a served node is counted as unsupported.
    netsparse_engine::control::commands::apply(
        &mut sw,
        "table_add node_port set_port 3 => 3\ntable_add coll_node serve 3 =>\n",
        "cmds",
    )
    .unwrap();
    let mut tx = PrSender::new(0, 400, 1500).unwrap();
    let pr = netsparse_externs::coll::coll_pr(0, netsparse_externs::coll::VOTE, 0, 1);
    tx.push(
        netsparse_externs::Time::ZERO,
        netsparse_externs::wire::PrType::Read,
        3,
        16,
        &pr,
        &[],
    );
    tx.flush(netsparse_externs::Time::ZERO);
    let mut out = netsparse_externs::Outputs::new();
    tx.emit(netsparse_externs::Time::from_us(1), &mut out);
    let frame = out.iter().next().unwrap().1.to_vec();
    let mut o2 = netsparse_externs::Outputs::new();
    use netsparse_externs::Datapath;
    sw.on_packet(netsparse_externs::Time::ZERO, 0, &frame, &mut o2);
    sw.flush_all(netsparse_externs::Time::from_us(1), &mut o2);
    assert!(o2.is_empty(), "the vote is consumed, nothing sent");
    assert_eq!(sw.stats().total.program_errors.unsupported, 1);
}

#[test]
fn cli_runs_the_switch_aggregator_and_refuses_a_bad_place() {
    let (code, out, err) = cli(&[
        "sim",
        "--collective",
        "allreduce",
        "--algo",
        "omniccl",
        "--bytes",
        "8192",
        "--block",
        "128",
        "--depth",
        "8",
        "--workers",
        "3",
        "--agg-at",
        "switch",
    ]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(
        out.contains("in the ToR's middle pipes") && out.contains("yes"),
        "{out}"
    );
    let (code, _, err) = cli(&["sim", "--collective", "allreduce", "--agg-at", "spine"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("spine") && err.contains("nic or switch"),
        "{err}"
    );
    let (code, _, err) = cli(&[
        "sim",
        "--collective",
        "allreduce",
        "--agg-at",
        "switch",
        "--agg-gbps",
        "800",
    ]);
    assert_ne!(code, Some(0), "{err}");
    assert!(err.contains("--agg-gbps 800"), "{err}");
}

/// `netsparse switch --config`'s `[collective]` table: the switch is built
/// with its aggregator, and a bad port is refused naming the key.
#[test]
fn the_collective_table_of_a_switch_config_builds_the_aggregator() {
    let art = ProgramCache::new()
        .get(Bundled::OmnicclSwitch, &[])
        .expect("omniccl_switch.p4 compiles");
    let toml = |ports: &str| {
        format!(
            "ports = 4\npipes = 2\n[collective]\nworkers = 3\ndepth = 4\nblock = 64\nnode = 3\nworker_ports = {ports}\n"
        )
    };
    let cfg = NsConfig::from_toml(&toml("[0, 1, 2]")).expect("parses");
    let sw = NsSwitch::new(&art, cfg).expect("builds with the aggregator");
    assert!(
        sw.collective_stats().is_some(),
        "the aggregator is configured"
    );
    for (ports, want) in [("[0, 1, 9]", "port 9"), ("[0, 1]", "2 ports for 3 workers")] {
        let cfg = NsConfig::from_toml(&toml(ports)).expect("parses");
        let Err(e) = NsSwitch::new(&art, cfg) else {
            panic!("{ports}: accepted");
        };
        let e = e.to_string();
        assert!(
            e.contains("collective.worker_ports") && e.contains(want),
            "{e}"
        );
    }
}
