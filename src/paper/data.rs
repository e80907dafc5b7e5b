//! The paper's published numbers, in one place, each with the table or
//! figure (or section) it comes from, so the report can put them beside
//! ours. Nothing here is measured: these are the values printed in
//! NetSparse (MICRO '25), `shared/paper/netsparse-micro25.txt`.
//!
//! Figures 15, 17 and 18 are plots whose values the text does not give;
//! for them only the sweep ranges, the defaults and the text's statements
//! are recorded ([`Claim`]), with a number where the text states one
//! (Figure 18: "up to 40% improvement for arabic").

use super::e2e::Speedups;
use serde::Serialize;

use crate::sim::matrix::paper::PaperMatrix;
use crate::sim::Mode;

/// Property sizes the paper evaluates (K = 1, 16, 128: 4, 64 and 512 bytes; §8.2).
pub const KS: [u32; 3] = [1, 16, 128];

/// The RIG batch the paper uses per matrix (§8.2): 32k nonzeros for arabic,
/// queen and stokes, 8k for europe and uk.
pub fn rig_batch(m: PaperMatrix) -> u32 {
    match m {
        PaperMatrix::Europe | PaperMatrix::Uk => 8 * 1024,
        _ => 32 * 1024,
    }
}

/// Figure 12 and §9.1: the gmean communication speedup of NetSparse over
/// SUOpt, over the five matrices and K = 1, 16, 128.
pub const FIG12_GMEAN_NETSPARSE_VS_SU: f64 = 33.0;
/// §9.1: the gmean speedup of NetSparse over SAOpt (same set).
pub const FIG12_GMEAN_NETSPARSE_VS_SA: f64 = 15.0;
/// §9.4: europe's NetSparse speedup over SUOpt at K = 16 ("132x (Figure 12 for K=16)").
pub const FIG12_EUROPE_K16: f64 = 132.0;

/// Figure 12's NetSparse bar for `m` at `k`, where the paper prints it:
/// Table 8's "Switch" row (full NetSparse vs SUOpt) for arabic and europe
/// is the same experiment. `None` elsewhere (the bars are not in the text).
pub fn fig12_netsparse(m: PaperMatrix, k: u32) -> Option<(f64, &'static str)> {
    let row = table8(m, Mode::NetSparse, k)?;
    Some((row.speedup, "Table 8, Switch row"))
}

/// What §9.1 says about Figure 12's SAOpt bars: SAOpt is slower than SUOpt
/// for stokes at every K and for arabic at K = 1, faster elsewhere.
pub fn fig12_sa_slower_than_su(m: PaperMatrix, k: u32) -> bool {
    matches!((m, k), (PaperMatrix::Stokes, _) | (PaperMatrix::Arabic, 1))
}

/// One row of Table 7 (tail node under NetSparse, K = 16). Rates are
/// fractions (0.97 = 97%).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Table7Row {
    /// Filtered-or-coalesced share of the tail node's remote nonzeros.
    pub fc_rate: f64,
    /// Response PRs per packet.
    pub prs_per_packet: f64,
    /// Property Cache hit rate.
    pub cache_hit_rate: f64,
    /// Goodput (payload over line rate).
    pub goodput: f64,
    /// Line utilisation.
    pub line_util: f64,
    /// Traffic reduction vs SUOpt.
    pub traffic_reduction_vs_su: f64,
    /// SAOpt's goodput.
    pub goodput_sa: f64,
    /// PR reduction vs SAOpt.
    pub pr_reduction_vs_sa: f64,
}

/// Table 7's row for `m`.
pub fn table7(m: PaperMatrix) -> Table7Row {
    let r = |fc, ppp, hit, gput, line, trfc, gsa, pr| Table7Row {
        fc_rate: fc,
        prs_per_packet: ppp,
        cache_hit_rate: hit,
        goodput: gput,
        line_util: line,
        traffic_reduction_vs_su: trfc,
        goodput_sa: gsa,
        pr_reduction_vs_sa: pr,
    };
    match m {
        PaperMatrix::Arabic => r(0.97, 5.7, 0.26, 0.35, 0.65, 283.0, 0.01, 3.8),
        PaperMatrix::Europe => r(0.08, 4.5, 0.05, 0.37, 0.70, 188.0, 0.10, 1.3),
        PaperMatrix::Queen => r(0.95, 19.6, 0.50, 0.40, 0.66, 42.0, 0.11, 1.1),
        PaperMatrix::Stokes => r(0.90, 12.1, 0.06, 0.38, 0.64, 17.0, 0.08, 4.4),
        PaperMatrix::Uk => r(0.61, 17.0, 0.30, 0.30, 0.50, 271.0, 0.09, 2.6),
    }
}

/// One cell of Table 8: speedup and tail-node traffic reduction vs SUOpt,
/// and tail-node goodput (a fraction).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Table8Cell {
    /// Communication speedup vs SUOpt ("Spd").
    pub speedup: f64,
    /// Tail-node traffic reduction vs SUOpt ("-Trfc").
    pub traffic_reduction: f64,
    /// Tail-node goodput ("Gput").
    pub goodput: f64,
}

/// The matrices of Table 8.
pub const TABLE8_MATRICES: [PaperMatrix; 2] = [PaperMatrix::Arabic, PaperMatrix::Europe];

/// Table 8's cell for matrix `m`, ablation step `step` (one of
/// [`Mode::ABLATION`]) and `k` (1, 16 or 128); `None` outside the table.
pub fn table8(m: PaperMatrix, step: Mode, k: u32) -> Option<Table8Cell> {
    let ki = KS.iter().position(|&x| x == k)?;
    let si = Mode::ABLATION.iter().position(|&x| x == step)?;
    // [step][k] = (Spd, -Trfc, Gput %)
    const ARABIC: [[(f64, f64, f64); 3]; 5] = [
        [(0.2, 3.1, 0.4), (1.8, 5.3, 22.9), (3.6, 8.5, 39.4)],
        [(3.4, 17.4, 0.8), (34.2, 63.2, 22.2), (78.7, 109.0, 56.7)],
        [(8.4, 34.6, 0.9), (88.0, 118.5, 23.8), (184.8, 279.9, 54.0)],
        [
            (12.6, 80.8, 1.1),
            (129.1, 191.2, 34.0),
            (184.2, 310.7, 52.6),
        ],
        [
            (13.7, 115.5, 0.9),
            (184.1, 283.4, 35.2),
            (250.4, 398.0, 55.1),
        ],
    ];
    const EUROPE: [[(f64, f64, f64); 3]; 5] = [
        [(7.4, 8.8, 2.3), (82.8, 99.1, 26.2), (176.0, 248.0, 55.7)],
        [(7.5, 8.9, 2.4), (84.8, 100.8, 26.4), (175.5, 252.2, 54.7)],
        [(8.1, 9.6, 2.3), (91.3, 108.7, 26.4), (190.3, 272.1, 54.9)],
        [
            (14.1, 19.1, 4.1),
            (122.1, 159.6, 35.2),
            (197.8, 292.9, 57.1),
        ],
        [
            (15.1, 24.8, 4.0),
            (132.1, 188.4, 36.5),
            (202.8, 301.5, 58.4),
        ],
    ];
    let t = match m {
        PaperMatrix::Arabic => &ARABIC,
        PaperMatrix::Europe => &EUROPE,
        _ => return None,
    };
    let (s, r, g) = t[si][ki];
    Some(Table8Cell {
        speedup: s,
        traffic_reduction: r,
        goodput: g / 100.0,
    })
}

/// A statement of the paper about a figure whose values it does not print,
/// optionally with the one number it gives, and the matrix it is about.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Claim {
    /// Where it is said.
    pub source: &'static str,
    /// The statement, quoted or closely paraphrased.
    pub text: &'static str,
    /// The matrix it is about, if one.
    pub matrix: Option<&'static str>,
    /// The number it gives, if any (a speedup).
    pub value: Option<f64>,
}

/// Figure 15 (§9.3): RIG batch sizes, nonzeros per RIG command. The text
/// gives the baseline (16k) and the defaults; the swept range is the
/// figure's, 1k to 64k.
pub const FIG15_BATCHES: [u32; 7] = [1024, 2048, 4096, 8192, 16384, 32768, 65536];
/// Figure 15's baseline batch size: speedups are relative to 16k.
pub const FIG15_BASELINE: u32 = 16384;
/// The batch sizes `--quick` runs.
pub const FIG15_BATCHES_QUICK: [u32; 4] = [1024, 4096, 16384, 65536];

/// Figure 17 (§9.3): NIC concatenation delay cycles, swept "from 0 to
/// 50000" (the switch's scaled alike, Table 5's 500 : 125), speedup over
/// no concatenation (0).
pub const FIG17_DELAYS: [u64; 6] = [0, 50, 500, 2000, 5000, 50000];
/// The delays `--quick` runs.
pub const FIG17_DELAYS_QUICK: [u64; 3] = [0, 500, 50000];

/// Figure 18 (§9.3): Property Cache bytes per switch at full scale, from 0
/// (the baseline, "no-cache") to infinite (`None`); default 32 MB.
pub const FIG18_CACHE_MB: [Option<u64>; 6] = [Some(0), Some(2), Some(8), Some(32), Some(128), None];
/// The cache sizes `--quick` runs.
pub const FIG18_CACHE_MB_QUICK: [Option<u64>; 3] = [Some(0), Some(32), None];

/// What the text says about Figure 15.
pub fn fig15_claims() -> Vec<Claim> {
    vec![
        Claim {
            source: "§8.2, §9.3",
            text: "defaults: 32k nonzeros per RIG command for arabic, queen and stokes, 8k for europe and uk; speedups are relative to 16k",
            matrix: None,
            value: None,
        },
        Claim {
            source: "§9.3",
            text: "a small batch adds software overhead, a large one SNIC thread load imbalance: for many matrices the best batch is not at the extremes, and it differs between matrices",
            matrix: None,
            value: None,
        },
    ]
}

/// What the text says about Figure 17.
pub fn fig17_claims() -> Vec<Claim> {
    vec![
        Claim {
            source: "§9.3",
            text: "as the delay grows performance first improves (more PRs concatenated); when it gets too large it is worse than no concatenation",
            matrix: None,
            value: None,
        },
        Claim {
            source: "§9.3",
            text: "queen (highest destination locality, Table 4) gains the most",
            matrix: Some("queen"),
            value: None,
        },
        Claim {
            source: "§9.3",
            text: "europe gains the least",
            matrix: Some("europe"),
            value: None,
        },
    ]
}

/// What the text says about Figure 18.
pub fn fig18_claims() -> Vec<Claim> {
    vec![
        Claim {
            source: "§9.3",
            text: "caching gives up to 40% for arabic",
            matrix: Some("arabic"),
            value: Some(1.4),
        },
        Claim {
            source: "§9.3",
            text: "it does not improve stokes, regardless of the cache size",
            matrix: Some("stokes"),
            value: Some(1.0),
        },
        Claim {
            source: "§9.3",
            text: "the default 32 MB per switch is sufficient for most matrices",
            matrix: None,
            value: None,
        },
    ]
}

/// The Ks of the end-to-end figures (13, 14, 21): SPADE does not run
/// K = 1 (§9.2).
pub const E2E_KS: [u32; 2] = [16, 128];

/// Figure 13's gmeans (§9.2): 128 SPADE nodes over one with SUOpt, SAOpt,
/// NetSparse, and without communication.
pub const FIG13_PAPER: Speedups = Speedups {
    su: Some(0.7),
    sa: Some(3.0),
    netsparse: Some(38.0),
    ideal: Some(72.0),
};

/// Figure 21 with DDR (§9.6: averages over K = 16 and 128).
pub const FIG21_DDR_PAPER: Speedups = Speedups {
    su: Some(2.6),
    sa: Some(13.0),
    netsparse: Some(53.0),
    ideal: None,
};

/// Figure 21 with HBM (§9.6).
pub const FIG21_HBM_PAPER: Speedups = Speedups {
    su: Some(1.4),
    sa: Some(7.0),
    netsparse: Some(42.0),
    ideal: None,
};

/// Figure 22's networks, as `--topology` specs: Table 5's leaf-spine,
/// HyperX 4 x 4 x 2 of width 4, Dragonfly of 4 groups of 8 switches with 4
/// global links each (4 hosts per switch in both).
pub const FIG22_TOPOLOGIES: [&str; 3] = ["leaf-spine", "hyperx", "dragonfly"];

/// What the text says about Figure 22 (no values are printed; the
/// leaf-spine bars are Figure 12's at K = 16), each with the network it
/// is about (a [`TopologySpec::kind`](crate::sim::topology::TopologySpec::kind)),
/// if one: `None` means every network but leaf-spine.
pub fn fig22_claims() -> Vec<(Claim, Option<&'static str>)> {
    vec![
        (
            Claim {
                source: "§9.6",
                text: "the performance of NetSparse remains high for all three networks",
                matrix: None,
                value: None,
            },
            None,
        ),
        (
            Claim {
                source: "§9.6",
                text: "stokes with HyperX: the speedup drops by more than 2x compared to leaf-spine (more hops)",
                matrix: Some("stokes"),
                value: Some(0.5),
            },
            Some("hyperx"),
        ),
    ]
}

/// Table 6: rows and nonzeros of the paper's matrices (from the stand-in
/// generator's record of them).
pub fn table6(m: PaperMatrix) -> (u64, u64) {
    let s = m.stats();
    (s.rows, s.nnz)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_are_complete_and_consistent() {
        for m in TABLE8_MATRICES {
            for &step in Mode::ABLATION {
                for k in KS {
                    let c = table8(m, step, k).unwrap();
                    assert!(c.speedup > 0.0 && c.traffic_reduction > 1.0 && c.goodput < 1.0);
                }
            }
        }
        assert_eq!(table8(PaperMatrix::Queen, Mode::Rig, 16), None);
        assert_eq!(table8(PaperMatrix::Arabic, Mode::Su, 16), None);
        // §9.4's europe figure (132x) is Table 8's Switch row, rounded.
        let eu = fig12_netsparse(PaperMatrix::Europe, 16).unwrap().0;
        assert_eq!(eu.round(), FIG12_EUROPE_K16);
        assert_eq!(table7(PaperMatrix::Arabic).traffic_reduction_vs_su, 283.0);
        assert_eq!(rig_batch(PaperMatrix::Uk), 8192);
    }
}
