//! Matrix Market reader/writer and generators: exact small outputs, and an
//! error for every kind of malformed file.

use std::io::Cursor;
use std::path::PathBuf;

use netsparse::sim::matrix::gen::{GenSpec, RmatParams};
use netsparse::sim::matrix::mtx::{Field, Symmetry};
use netsparse::sim::matrix::{
    read_mtx, read_mtx_file, write_mtx, CsrMatrix, MtxError, ReadOptions,
};

fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

fn read(name: &str) -> (CsrMatrix, netsparse::sim::matrix::MtxInfo) {
    read_mtx_file(&data(name), ReadOptions::default()).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn entries(m: &CsrMatrix) -> Vec<(u32, u32, f64)> {
    m.iter().collect()
}

#[test]
fn general_real_exact() {
    let (m, info) = read("general_real.mtx");
    assert_eq!((m.rows(), m.cols(), m.nnz()), (6, 6, 11));
    assert_eq!(info.field, Field::Real);
    assert_eq!(info.symmetry, Symmetry::General);
    assert_eq!(info.declared_entries, 12);
    assert_eq!(info.build.entries, 12);
    assert_eq!(info.build.duplicates, 1);
    assert_eq!(
        entries(&m),
        vec![
            (0, 0, 1.5),
            (0, 3, -2.0),
            (1, 2, 3.5), // 3.0 + 0.5 merged
            (1, 4, 1e-3),
            (2, 5, 4.0),
            (3, 0, 5.0),
            (4, 1, 6.25),
            (4, 4, 7.0),
            (5, 0, 8.0),
            (5, 2, 9.0),
            (5, 5, 10.0),
        ]
    );
    assert_eq!(m.row_ptr(), &[0, 2, 4, 5, 6, 8, 11]);
    // Pattern-only read: same structure, no values.
    let (p, _) = read_mtx_file(&data("general_real.mtx"), ReadOptions { values: false }).unwrap();
    assert!(p.values().is_none());
    assert_eq!(p.col_idx(), m.col_idx());
}

#[test]
fn symmetric_is_mirrored() {
    let (m, info) = read("symmetric_pattern.mtx");
    assert_eq!(info.symmetry, Symmetry::Symmetric);
    // 7 stored: 2 diagonal + 5 off-diagonal mirrored = 12.
    assert_eq!(m.nnz(), 12);
    assert_eq!(info.build.entries, 12);
    let pos: Vec<(u32, u32)> = m.iter().map(|(r, c, _)| (r, c)).collect();
    assert_eq!(
        pos,
        vec![
            (0, 0),
            (0, 1),
            (0, 3),
            (1, 0),
            (1, 2),
            (2, 1),
            (2, 4),
            (3, 0),
            (3, 3),
            (3, 4),
            (4, 2),
            (4, 3)
        ]
    );
    assert!(m.values().is_none());
}

#[test]
fn skew_symmetric_negates_the_mirror() {
    let (m, info) = read("skew_integer.mtx");
    assert_eq!(info.field, Field::Integer);
    assert_eq!(
        entries(&m),
        vec![
            (0, 1, -3.0),
            (0, 2, 4.0),
            (1, 0, 3.0),
            (1, 3, -7.0),
            (2, 0, -4.0),
            (3, 1, 7.0),
        ]
    );
}

#[test]
fn crlf_blank_lines_rectangular() {
    let (m, _) = read("rect_pattern.mtx");
    assert_eq!((m.rows(), m.cols(), m.nnz()), (4, 8, 9));
    assert_eq!(m.row(2), &[2, 4, 5]);
    assert_eq!(m.row(3), &[0, 3]);
}

#[test]
fn writer_round_trips() {
    for name in [
        "general_real.mtx",
        "symmetric_pattern.mtx",
        "skew_integer.mtx",
        "rect_pattern.mtx",
    ] {
        let (m, _) = read(name);
        let mut buf = Vec::new();
        write_mtx(&m, &mut buf, " round trip\n second comment line").unwrap();
        let text = String::from_utf8(buf.clone()).unwrap();
        assert!(
            text.starts_with("%%MatrixMarket matrix coordinate "),
            "{text}"
        );
        assert!(text.contains("% second comment line\n"));
        let (again, info) = read_mtx(Cursor::new(buf), ReadOptions::default()).unwrap();
        assert_eq!(info.symmetry, Symmetry::General);
        assert_eq!(again, m, "{name}");
    }
}

/// Every malformed-file error kind, with the line it names.
#[test]
fn malformed_files_are_errors_naming_the_line() {
    let cases: &[(&str, &str)] = &[
        ("empty.mtx", "empty file"),
        (
            "array.mtx",
            "`array` (dense) Matrix Market files are not supported",
        ),
        ("complex.mtx", "`complex` matrices are not supported"),
        ("hermitian.mtx", "`hermitian` matrices are not supported"),
        ("no_banner.mtx", "line 1: missing `%%MatrixMarket` banner"),
        (
            "garbled_banner.mtx",
            "line 1: garbled banner: missing the symmetry",
        ),
        (
            "bad_size.mtx",
            "line 2: bad size line: columns \"x\" is not a non-negative integer",
        ),
        (
            "zero_based.mtx",
            "line 3: row index 0: Matrix Market indices are 1-based",
        ),
        (
            "out_of_range.mtx",
            "line 4: column index 4 is out of range 1..=3",
        ),
        (
            "too_few.mtx",
            "file ends after 2 entries, but the size line declares 3",
        ),
        ("too_many.mtx", "line 4: more entries than the 1 declared"),
        (
            "non_numeric.mtx",
            "line 4: value \"abc\" is not a finite number",
        ),
        (
            "skew_diagonal.mtx",
            "line 4: skew-symmetric matrix has a nonzero diagonal entry at (2, 2)",
        ),
    ];
    for (file, needle) in cases {
        let e = read_mtx_file(&data(&format!("bad/{file}")), ReadOptions::default())
            .err()
            .unwrap_or_else(|| panic!("{file} was accepted"));
        assert!(e.to_string().contains(needle), "{file}: got {e:?} / {e}");
    }
}

fn parse(text: &str) -> Result<CsrMatrix, MtxError> {
    read_mtx(Cursor::new(text.as_bytes()), ReadOptions::default()).map(|(m, _)| m)
}

#[test]
fn more_malformed_inputs() {
    let b = "%%MatrixMarket matrix coordinate real general\n";
    let cases: Vec<(String, &str)> = vec![
        (b.to_string(), "line 1: file ends before the size line"),
        (
            format!("{b}% only comments\n"),
            "line 2: file ends before the size line",
        ),
        (
            format!("{b}2 2\n"),
            "line 2: bad size line: missing entries",
        ),
        (
            format!("{b}2 2 1 7\n1 1 1\n"),
            "line 2: bad size line: unexpected \"7\"",
        ),
        (
            format!("{b}-2 2 1\n1 1 1\n"),
            "rows \"-2\" is not a non-negative integer",
        ),
        (format!("{b}2 2 1\n1\n"), "line 3: missing column index"),
        (format!("{b}2 2 1\n1 1\n"), "line 3: missing value"),
        (
            format!("{b}2 2 1\n1 1 1 9\n"),
            "line 3: unexpected extra token \"9\"",
        ),
        (
            format!("{b}2 2 1\n1.5 1 1\n"),
            "line 3: row index \"1.5\" is not a valid integer",
        ),
        (
            format!("{b}2 2 1\n1 1 inf\n"),
            "value \"inf\" is not a finite number",
        ),
        (
            format!("{b}2 2 1\n3 1 1\n"),
            "line 3: row index 3 is out of range 1..=2",
        ),
        (
            format!("{b}2 2 1\n1 0 1\n"),
            "line 3: column index 0: Matrix Market indices are 1-based",
        ),
        (
            format!("{b}2 2 1\n99999999999999999999999 1 1\n"),
            "is not a valid integer",
        ),
        (
            format!("{b}5000000000 2 1\n1 1 1\n"),
            "rows = 5000000000 exceeds",
        ),
        (
            "%%MatrixMarket vector coordinate real general\n".into(),
            "object \"vector\" is not supported",
        ),
        (
            "%%MatrixMarket matrix sparse real general\n".into(),
            "unknown format \"sparse\"",
        ),
        (
            "%%MatrixMarket matrix coordinate float general\n".into(),
            "unknown field \"float\"",
        ),
        (
            "%%MatrixMarket matrix coordinate real upper\n".into(),
            "unknown symmetry \"upper\"",
        ),
        (
            "%%MatrixMarket matrix coordinate real general extra\n".into(),
            "unexpected \"extra\"",
        ),
        (
            "%%MatrixMarket matrix coordinate pattern skew-symmetric\n".into(),
            "cannot be `skew-symmetric`",
        ),
        (
            "%%MatrixMarket matrix coordinate integer general\n1 1 1\n1 1 2.5\n".into(),
            "line 3: value \"2.5\" is not a valid integer",
        ),
        (
            "%%MatrixMarket matrix coordinate pattern general\n1 1 1\n1 1 2\n".into(),
            "unexpected extra token \"2\"",
        ),
        (
            "\u{feff}garbage\n".into(),
            "missing `%%MatrixMarket` banner",
        ),
    ];
    for (text, needle) in &cases {
        let e = parse(text)
            .err()
            .unwrap_or_else(|| panic!("accepted: {text:?}"));
        assert!(e.to_string().contains(needle), "{text:?}: got {e}");
    }
    // Binary garbage never panics.
    let junk: Vec<u8> = (0..4096u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    assert!(read_mtx(Cursor::new(junk), ReadOptions::default()).is_err());
    // A zero-valued skew diagonal entry is dropped and counted; a banner is
    // case-insensitive; an empty matrix is fine.
    let (m, info) = read_mtx(
        Cursor::new(
            &b"%%matrixmarket MATRIX Coordinate Real Skew-Symmetric\n2 2 2\n1 1 0\n2 1 1\n"[..],
        ),
        ReadOptions::default(),
    )
    .unwrap();
    assert_eq!((m.nnz(), info.skew_zero_diagonal), (2, 1));
    let m = parse(&format!("{b}3 4 0\n")).unwrap();
    assert_eq!((m.rows(), m.cols(), m.nnz()), (3, 4, 0));
}

#[test]
fn grid2d_3x3_has_33_known_nonzeros() {
    let (m, info) = GenSpec::Grid2d { nx: 3, ny: 3 }.generate(0).unwrap();
    assert_eq!(m.nnz(), 33);
    assert_eq!(info.duplicates, 0);
    // Independent oracle: (i, j) is a nonzero iff the grid points are equal
    // or 4-neighbours.
    let mut want = Vec::new();
    for i in 0..9i32 {
        for j in 0..9i32 {
            let (xi, yi, xj, yj) = (i % 3, i / 3, j % 3, j / 3);
            if (xi - xj).abs() + (yi - yj).abs() <= 1 {
                want.push((i as u32, j as u32));
            }
        }
    }
    let got: Vec<(u32, u32)> = m.iter().map(|(r, c, _)| (r, c)).collect();
    assert_eq!(got, want);
    assert_eq!(m.row(4), &[1, 3, 4, 5, 7]);
    assert_eq!(m.row(0), &[0, 1, 3]);
}

#[test]
fn grid3d_counts() {
    // 2x2x2: 8 diagonal + 12 cube edges x 2 directions.
    let (m, _) = GenSpec::Grid3d {
        nx: 2,
        ny: 2,
        nz: 2,
    }
    .generate(0)
    .unwrap();
    assert_eq!(m.nnz(), 32);
    // nx x ny x nz: n + 2 * (edges along each axis).
    let (nx, ny, nz) = (4u64, 3, 5);
    let (m, _) = GenSpec::Grid3d {
        nx: 4,
        ny: 3,
        nz: 5,
    }
    .generate(0)
    .unwrap();
    let edges = (nx - 1) * ny * nz + nx * (ny - 1) * nz + nx * ny * (nz - 1);
    assert_eq!(m.nnz(), nx * ny * nz + 2 * edges);
    // Row of the centre-ish point (1,1,1) = 1 + 4 * (1 + 3 * 1) = 17.
    assert_eq!(m.row(17), &[5, 13, 16, 17, 18, 21, 29]);
}

fn checksum(m: &CsrMatrix) -> u64 {
    // FNV-1a over (row, col) pairs.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for (r, c, _) in m.iter() {
        for b in r.to_le_bytes().into_iter().chain(c.to_le_bytes()) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

#[test]
fn rmat_is_deterministic_with_fixed_count_and_checksum() {
    let spec = GenSpec::Rmat(RmatParams {
        scale: 10,
        edge_factor: 8,
        ..RmatParams::default()
    });
    let (m, info) = spec.generate(42).unwrap();
    let (again, _) = spec.generate(42).unwrap();
    assert_eq!(m, again);
    assert_eq!(info.entries, 8 * 1024);
    assert_eq!(m.nnz() + info.duplicates, 8 * 1024);
    assert_eq!((m.nnz(), checksum(&m)), RMAT_GOLDEN);
    let (other, _) = spec.generate(43).unwrap();
    assert_ne!(checksum(&other), checksum(&m));
    // Top-level quadrant shares follow a, b, c, d (within sampling noise),
    // counted over the sampled edges, duplicates included.
    let big = GenSpec::Rmat(RmatParams {
        scale: 12,
        edge_factor: 16,
        ..RmatParams::default()
    });
    let (m, _) = big.generate(7).unwrap();
    let half = 1u32 << 11;
    let mut q = [0f64; 4];
    for (r, c, _) in m.iter() {
        q[usize::from(r >= half) * 2 + usize::from(c >= half)] += 1.0;
    }
    let total: f64 = q.iter().sum();
    // Merging duplicates removes proportionally more from the dense
    // quadrant a, so only the order and rough shares are checked.
    assert!(q[0] / total > 0.45 && q[3] / total < 0.08, "{q:?}");
    assert!((q[1] - q[2]).abs() / total < 0.02, "{q:?}");
    // Noise changes the matrix but keeps it valid.
    let noisy = GenSpec::Rmat(RmatParams {
        scale: 10,
        edge_factor: 8,
        noise: 0.1,
        ..RmatParams::default()
    });
    let (n, _) = noisy.generate(42).unwrap();
    assert_ne!(checksum(&n), checksum(&spec.generate(42).unwrap().0));
}

/// (nnz, checksum) of `rmat:scale=10,ef=8` with seed 42.
const RMAT_GOLDEN: (u64, u64) = (6776, 5_347_851_171_726_092_026);

#[test]
fn banded_and_uniform() {
    let (m, _) = GenSpec::Banded {
        n: 200,
        width: 5,
        density: 1.0,
    }
    .generate(3)
    .unwrap();
    // Full band: every |i - j| <= 5.
    let want: u64 = (0..200i64)
        .map(|i| ((i + 5).min(199) - (i - 5).max(0) + 1) as u64)
        .sum();
    assert_eq!(m.nnz(), want);
    let (m, _) = GenSpec::Banded {
        n: 1000,
        width: 8,
        density: 0.25,
    }
    .generate(3)
    .unwrap();
    for r in 0..1000u32 {
        let row = m.row(r);
        assert!(row.contains(&r), "diagonal missing in row {r}");
        assert!(row
            .iter()
            .all(|&c| (i64::from(c) - i64::from(r)).abs() <= 8));
    }
    let expect = 1000.0 + 0.25 * 2.0 * 8.0 * 1000.0;
    assert!(
        (m.nnz() as f64 - expect).abs() < 0.1 * expect,
        "{}",
        m.nnz()
    );
    for (rows, cols, nnz) in [
        (100u32, 50u32, 1234u64),
        (10, 10, 95),
        (7, 3, 21),
        (5, 5, 0),
    ] {
        let (m, info) = GenSpec::Uniform { rows, cols, nnz }.generate(9).unwrap();
        assert_eq!(m.nnz(), nnz, "{rows}x{cols}");
        assert_eq!(info.duplicates, 0);
        assert_eq!((m.rows(), m.cols()), (rows, cols));
        let (again, _) = GenSpec::Uniform { rows, cols, nnz }.generate(9).unwrap();
        assert_eq!(m, again);
    }
}

#[test]
fn generator_errors_name_the_value() {
    let bad = [
        (
            GenSpec::Rmat(RmatParams {
                a: 0.6,
                ..RmatParams::default()
            }),
            "must be 1",
        ),
        (
            GenSpec::Rmat(RmatParams {
                scale: 0,
                ..RmatParams::default()
            }),
            "scale=0",
        ),
        (
            GenSpec::Rmat(RmatParams {
                edge_factor: 0,
                ..RmatParams::default()
            }),
            "edge-factor=0",
        ),
        (
            GenSpec::Rmat(RmatParams {
                noise: 1.0,
                ..RmatParams::default()
            }),
            "noise=1",
        ),
        (
            GenSpec::Rmat(RmatParams {
                scale: 31,
                edge_factor: 4,
                ..RmatParams::default()
            }),
            "exceeds the limit",
        ),
        (GenSpec::Grid2d { nx: 0, ny: 3 }, "nx=0"),
        (
            GenSpec::Grid3d {
                nx: 70_000,
                ny: 70_000,
                nz: 1,
            },
            "grid points",
        ),
        (
            GenSpec::Banded {
                n: 10,
                width: 10,
                density: 0.5,
            },
            "width=10",
        ),
        (
            GenSpec::Banded {
                n: 10,
                width: 2,
                density: 0.0,
            },
            "density=0",
        ),
        (
            GenSpec::Uniform {
                rows: 0,
                cols: 3,
                nnz: 0,
            },
            "rows=0",
        ),
        (
            GenSpec::Uniform {
                rows: 3,
                cols: 3,
                nnz: 10,
            },
            "nnz=10",
        ),
    ];
    for (spec, needle) in bad {
        let e = spec.generate(1).unwrap_err();
        assert!(e.to_string().contains(needle), "{spec:?}: {e}");
    }
}

mod props {
    use super::*;
    use netsparse::sim::matrix::CooBuilder;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// write → read is the identity on any matrix, with or without values.
        #[test]
        fn write_read_round_trip(
            rows in 1u64..40,
            cols in 1u64..40,
            raw in proptest::collection::vec((0u64..1000, 0u64..1000, -1e6f64..1e6), 0..200),
            values in any::<bool>(),
        ) {
            let mut b = CooBuilder::new(rows, cols, values).unwrap();
            for &(r, c, v) in &raw {
                b.push(r % rows, c % cols, v).unwrap();
            }
            let (m, info) = b.build();
            prop_assert_eq!(m.nnz() + info.duplicates, raw.len() as u64);
            let mut buf = Vec::new();
            write_mtx(&m, &mut buf, "").unwrap();
            let (again, _) = read_mtx(Cursor::new(buf), ReadOptions::default()).unwrap();
            prop_assert_eq!(again, m);
        }

        /// Arbitrary bytes after a valid banner never panic the reader.
        #[test]
        fn garbage_never_panics(tail in proptest::collection::vec(any::<u8>(), 0..300)) {
            let mut text = b"%%MatrixMarket matrix coordinate real general\n".to_vec();
            text.extend(tail);
            let _ = read_mtx(Cursor::new(text), ReadOptions::default());
        }
    }
}
