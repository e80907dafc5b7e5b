//! Matrix Market (`.mtx`) coordinate files: a streaming reader and a writer.
//!
//! Supported: `%%MatrixMarket matrix coordinate {real|double|integer|pattern}
//! {general|symmetric|skew-symmetric}`, `%` comment lines and blank lines
//! anywhere after the banner, 1-based indices. Symmetric files store one
//! triangle: every off-diagonal entry `(i, j, v)` is mirrored to `(j, i, v)`
//! (skew-symmetric: `(j, i, -v)`, and the diagonal must be zero: an explicit
//! diagonal entry with a nonzero value is an error, a zero one is dropped and
//! counted). Repeated coordinates are merged (values summed) and counted in
//! [`MtxInfo`].
//!
//! Not supported, each with its own error: `array` (dense) files, `complex`
//! values and `hermitian` symmetry. Everything malformed is an [`MtxError`]
//! naming the line: a missing or garbled banner, a bad size line, 0-based
//! or out-of-range indices, non-numeric tokens, missing or extra tokens, too
//! few or too many entries, an empty file.
//!
//! The reader is a single pass over a buffered stream with one reused line
//! buffer and a hand-written tokenizer: no allocation per line, no regex.

use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};

use serde::Serialize;
use thiserror::Error;

use super::{BuildInfo, CooBuilder, CsrMatrix, MatrixError};

/// The value type of a Matrix Market file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Field {
    /// Floating-point values (`real` or `double`).
    Real,
    /// Integer values.
    Integer,
    /// No values: the structure only.
    Pattern,
}

/// The symmetry of a Matrix Market file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Symmetry {
    /// Every entry is stored.
    General,
    /// One triangle is stored; `A = Aᵀ`.
    Symmetric,
    /// The strict lower triangle is stored; `A = -Aᵀ`, zero diagonal.
    SkewSymmetric,
}

/// What reading a file found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct MtxInfo {
    /// The value type.
    pub field: Field,
    /// The symmetry.
    pub symmetry: Symmetry,
    /// Rows from the size line.
    pub rows: u64,
    /// Columns from the size line.
    pub cols: u64,
    /// Entries declared by the size line (= entry lines read).
    pub declared_entries: u64,
    /// Coordinates after mirroring, and how many were duplicates merged away.
    pub build: BuildInfo,
    /// Zero-valued diagonal entries of a skew-symmetric file, dropped.
    pub skew_zero_diagonal: u64,
    /// Lines in the file.
    pub lines: u64,
}

/// Reader options.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReadOptions {
    /// Keep the values (otherwise they are validated and dropped, and the
    /// matrix is a pattern matrix: faster and half the memory).
    pub values: bool,
}

impl Default for ReadOptions {
    fn default() -> ReadOptions {
        ReadOptions { values: true }
    }
}

/// A malformed or unsupported Matrix Market file. Line numbers are 1-based.
#[derive(Debug, Error)]
pub enum MtxError {
    /// The file could not be opened.
    #[error("cannot open {path}: {source}")]
    Open {
        /// The path.
        path: PathBuf,
        /// The OS error.
        source: io::Error,
    },
    /// A read failed.
    #[error("read error after line {line}: {source}")]
    Io {
        /// Last line read completely.
        line: u64,
        /// The OS error.
        source: io::Error,
    },
    /// The file is empty.
    #[error("empty file: expected a `%%MatrixMarket matrix coordinate ...` banner")]
    Empty,
    /// The first line is not a Matrix Market banner.
    #[error("line 1: missing `%%MatrixMarket` banner, found {found:?}")]
    MissingBanner {
        /// The start of the first line.
        found: String,
    },
    /// The banner does not have the form `%%MatrixMarket object format field symmetry`.
    #[error("line 1: garbled banner: {reason}")]
    GarbledBanner {
        /// What is wrong.
        reason: String,
    },
    /// `array` (dense) files are not supported.
    #[error("line 1: `array` (dense) Matrix Market files are not supported; only `coordinate`")]
    ArrayFormat,
    /// `complex` values are not supported.
    #[error("line 1: `complex` matrices are not supported (use real, integer or pattern)")]
    Complex,
    /// `hermitian` symmetry is not supported.
    #[error(
        "line 1: `hermitian` matrices are not supported (use general, symmetric or skew-symmetric)"
    )]
    Hermitian,
    /// `pattern` with `skew-symmetric` is meaningless (the spec forbids it).
    #[error("line 1: a `pattern` matrix cannot be `skew-symmetric`")]
    PatternSkew,
    /// The file ends before the size line.
    #[error("line {line}: file ends before the size line `rows cols entries`")]
    MissingSizeLine {
        /// Lines read.
        line: u64,
    },
    /// The size line is not three non-negative integers.
    #[error("line {line}: bad size line: {reason}")]
    BadSizeLine {
        /// The line.
        line: u64,
        /// What is wrong.
        reason: String,
    },
    /// A dimension does not fit the simulator's `u32` indices.
    #[error("line {line}: {source}")]
    TooLarge {
        /// The size line.
        line: u64,
        /// The dimension error.
        source: MatrixError,
    },
    /// A token is missing on an entry line.
    #[error("line {line}: missing {what}")]
    MissingToken {
        /// The line.
        line: u64,
        /// `"row index"`, `"column index"` or `"value"`.
        what: &'static str,
    },
    /// An entry line has more tokens than the field allows.
    #[error(
        "line {line}: unexpected extra token {token:?} (a {field:?} entry has {expected} tokens)"
    )]
    ExtraToken {
        /// The line.
        line: u64,
        /// The token.
        token: String,
        /// The file's field.
        field: Field,
        /// Tokens per entry.
        expected: usize,
    },
    /// An index or integer value is not an integer.
    #[error("line {line}: {what} {token:?} is not a valid integer")]
    BadInteger {
        /// The line.
        line: u64,
        /// What the token should be.
        what: &'static str,
        /// The token.
        token: String,
    },
    /// A real value is not a finite number.
    #[error("line {line}: value {token:?} is not a finite number")]
    BadNumber {
        /// The line.
        line: u64,
        /// The token.
        token: String,
    },
    /// A 0 index: Matrix Market is 1-based.
    #[error("line {line}: {what} 0: Matrix Market indices are 1-based")]
    ZeroIndex {
        /// The line.
        line: u64,
        /// `"row index"` or `"column index"`.
        what: &'static str,
    },
    /// An index beyond the size line's dimension.
    #[error("line {line}: {what} {value} is out of range 1..={max}")]
    IndexOutOfRange {
        /// The line.
        line: u64,
        /// `"row index"` or `"column index"`.
        what: &'static str,
        /// The index.
        value: u64,
        /// The dimension.
        max: u64,
    },
    /// More entry lines than the size line declares.
    #[error("line {line}: more entries than the {declared} declared by the size line")]
    TooManyEntries {
        /// The first extra line.
        line: u64,
        /// Declared entries.
        declared: u64,
    },
    /// Fewer entry lines than the size line declares.
    #[error("line {line}: file ends after {found} entries, but the size line declares {declared}")]
    TooFewEntries {
        /// Lines read.
        line: u64,
        /// Entries found.
        found: u64,
        /// Declared entries.
        declared: u64,
    },
    /// A skew-symmetric file with a nonzero diagonal entry.
    #[error("line {line}: skew-symmetric matrix has a nonzero diagonal entry at ({row}, {row})")]
    SkewDiagonal {
        /// The line.
        line: u64,
        /// The (1-based) row.
        row: u64,
    },
}

/// A file's banner and size line, read without reading the entries (for
/// a memory estimate before the matrix is built).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MtxHeader {
    /// The value type.
    pub field: Field,
    /// The symmetry.
    pub symmetry: Symmetry,
    /// Rows.
    pub rows: u64,
    /// Columns.
    pub cols: u64,
    /// Entry lines declared.
    pub declared_entries: u64,
}

impl MtxHeader {
    /// Coordinates the entries make at most (mirrored ones counted twice).
    pub fn max_coordinates(&self) -> u64 {
        if self.symmetry == Symmetry::General {
            self.declared_entries
        } else {
            self.declared_entries.saturating_mul(2)
        }
    }
}

/// Read the banner and size line of a Matrix Market stream.
pub fn read_mtx_header<R: BufRead>(mut reader: R) -> Result<MtxHeader, MtxError> {
    let mut line: Vec<u8> = Vec::with_capacity(256);
    let mut lineno = 0u64;
    let mut next = |line: &mut Vec<u8>, lineno: &mut u64| -> Result<bool, MtxError> {
        line.clear();
        let n = reader
            .read_until(b'\n', line)
            .map_err(|source| MtxError::Io {
                line: *lineno,
                source,
            })?;
        *lineno += u64::from(n > 0);
        Ok(n > 0)
    };
    if !next(&mut line, &mut lineno)? {
        return Err(MtxError::Empty);
    }
    let (field, symmetry) = parse_banner(&line)?;
    loop {
        if !next(&mut line, &mut lineno)? {
            return Err(MtxError::MissingSizeLine { line: lineno });
        }
        let body = trim_ascii(&line);
        if body.is_empty() || body[0] == b'%' {
            continue;
        }
        let (rows, cols, declared_entries) = parse_size_line(body, lineno)?;
        return Ok(MtxHeader {
            field,
            symmetry,
            rows,
            cols,
            declared_entries,
        });
    }
}

/// Read a Matrix Market file from disk.
pub fn read_mtx_file(path: &Path, opts: ReadOptions) -> Result<(CsrMatrix, MtxInfo), MtxError> {
    let f = File::open(path).map_err(|source| MtxError::Open {
        path: path.to_path_buf(),
        source,
    })?;
    read_mtx(BufReader::with_capacity(1 << 20, f), opts)
}

/// Read a Matrix Market file from a buffered stream.
pub fn read_mtx<R: BufRead>(
    reader: R,
    opts: ReadOptions,
) -> Result<(CsrMatrix, MtxInfo), MtxError> {
    read_mtx_with_progress(reader, opts, &mut |_, _| {})
}

/// Entries between two progress callbacks.
pub const PROGRESS_EVERY: u64 = 1 << 20;

/// [`read_mtx`] calling `progress(entries_read, declared_entries)` every
/// [`PROGRESS_EVERY`] entries.
pub fn read_mtx_with_progress<R: BufRead>(
    mut reader: R,
    opts: ReadOptions,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<(CsrMatrix, MtxInfo), MtxError> {
    let mut line: Vec<u8> = Vec::with_capacity(256);
    let mut lineno = 0u64;
    let mut next_line = |line: &mut Vec<u8>, lineno: &mut u64| -> Result<bool, MtxError> {
        line.clear();
        let n = reader
            .read_until(b'\n', line)
            .map_err(|source| MtxError::Io {
                line: *lineno,
                source,
            })?;
        if n == 0 {
            return Ok(false);
        }
        *lineno += 1;
        Ok(true)
    };

    // Banner.
    if !next_line(&mut line, &mut lineno)? {
        return Err(MtxError::Empty);
    }
    let (field, symmetry) = parse_banner(&line)?;

    // Comments, then the size line.
    let (rows, cols, declared) = loop {
        if !next_line(&mut line, &mut lineno)? {
            return Err(MtxError::MissingSizeLine { line: lineno });
        }
        let body = trim_ascii(&line);
        if body.is_empty() || body[0] == b'%' {
            continue;
        }
        break parse_size_line(body, lineno)?;
    };
    let keep_values = opts.values && field != Field::Pattern;
    let mut b = CooBuilder::new(rows, cols, keep_values).map_err(|source| MtxError::TooLarge {
        line: lineno,
        source,
    })?;
    let mirror = symmetry != Symmetry::General;
    // Reserve, but never trust a size line with the whole memory.
    let want = declared.saturating_mul(if mirror { 2 } else { 1 });
    b.reserve(want.min(1 << 26) as usize);

    let tokens_per_entry = if field == Field::Pattern { 2 } else { 3 };
    let mut found = 0u64;
    let mut skew_zero_diagonal = 0u64;
    while next_line(&mut line, &mut lineno)? {
        let mut t = Tokens::new(&line);
        let Some(first) = t.next() else { continue };
        if first[0] == b'%' {
            continue;
        }
        if found == declared {
            return Err(MtxError::TooManyEntries {
                line: lineno,
                declared,
            });
        }
        found += 1;
        let i = parse_index(first, "row index", rows, lineno)?;
        let second = t.next().ok_or(MtxError::MissingToken {
            line: lineno,
            what: "column index",
        })?;
        let j = parse_index(second, "column index", cols, lineno)?;
        let v = match field {
            Field::Pattern => 1.0,
            Field::Real | Field::Integer => {
                let tok = t.next().ok_or(MtxError::MissingToken {
                    line: lineno,
                    what: "value",
                })?;
                if field == Field::Integer {
                    parse_i64(tok).ok_or_else(|| MtxError::BadInteger {
                        line: lineno,
                        what: "value",
                        token: show(tok),
                    })? as f64
                } else {
                    parse_f64(tok).ok_or_else(|| MtxError::BadNumber {
                        line: lineno,
                        token: show(tok),
                    })?
                }
            }
        };
        if let Some(extra) = t.next() {
            return Err(MtxError::ExtraToken {
                line: lineno,
                token: show(extra),
                field,
                expected: tokens_per_entry,
            });
        }
        let (r, c) = (i - 1, j - 1);
        match symmetry {
            Symmetry::General => push(&mut b, r, c, v),
            Symmetry::Symmetric => {
                push(&mut b, r, c, v);
                if r != c {
                    push(&mut b, c, r, v);
                }
            }
            Symmetry::SkewSymmetric => {
                if r == c {
                    if v != 0.0 {
                        return Err(MtxError::SkewDiagonal {
                            line: lineno,
                            row: i,
                        });
                    }
                    skew_zero_diagonal += 1;
                } else {
                    push(&mut b, r, c, v);
                    push(&mut b, c, r, -v);
                }
            }
        }
        if found % PROGRESS_EVERY == 0 {
            progress(found, declared);
        }
    }
    if found < declared {
        return Err(MtxError::TooFewEntries {
            line: lineno,
            found,
            declared,
        });
    }
    progress(found, declared);
    let (m, build) = b.build();
    Ok((
        m,
        MtxInfo {
            field,
            symmetry,
            rows,
            cols,
            declared_entries: declared,
            build,
            skew_zero_diagonal,
            lines: lineno,
        },
    ))
}

/// Push a coordinate already checked against the dimensions.
#[inline(always)]
fn push(b: &mut CooBuilder, r: u64, c: u64, v: f64) {
    // Indices were range-checked against the same dimensions, so this
    // cannot fail; an error here would be a bug, reported by debug builds.
    let res = b.push(r, c, v);
    debug_assert!(res.is_ok());
}

fn parse_banner(line: &[u8]) -> Result<(Field, Symmetry), MtxError> {
    const BANNER: &[u8] = b"%%MatrixMarket";
    let body = trim_ascii(line);
    if body.len() < BANNER.len() || !body[..BANNER.len()].eq_ignore_ascii_case(BANNER) {
        return Err(MtxError::MissingBanner {
            found: show(&body[..body.len().min(40)]),
        });
    }
    let mut t = Tokens::new(&body[BANNER.len()..]);
    let mut words: [&[u8]; 4] = [b""; 4];
    for (k, name) in ["object", "format", "field", "symmetry"].iter().enumerate() {
        words[k] = t.next().ok_or_else(|| MtxError::GarbledBanner {
            reason: format!(
                "missing the {name} (expected `%%MatrixMarket matrix coordinate real general`)"
            ),
        })?;
    }
    if let Some(extra) = t.next() {
        return Err(MtxError::GarbledBanner {
            reason: format!("unexpected {:?} after the symmetry", show(extra)),
        });
    }
    let lower = |w: &[u8]| String::from_utf8_lossy(w).to_ascii_lowercase();
    let object = lower(words[0]);
    if object != "matrix" {
        return Err(MtxError::GarbledBanner {
            reason: format!("object {object:?} is not supported (expected `matrix`)"),
        });
    }
    match lower(words[1]).as_str() {
        "coordinate" => {}
        "array" => return Err(MtxError::ArrayFormat),
        other => {
            return Err(MtxError::GarbledBanner {
                reason: format!("unknown format {other:?} (expected `coordinate`)"),
            })
        }
    }
    let field = match lower(words[2]).as_str() {
        "real" | "double" => Field::Real,
        "integer" => Field::Integer,
        "pattern" => Field::Pattern,
        "complex" => return Err(MtxError::Complex),
        other => {
            return Err(MtxError::GarbledBanner {
                reason: format!("unknown field {other:?} (expected real, integer or pattern)"),
            })
        }
    };
    let symmetry = match lower(words[3]).as_str() {
        "general" => Symmetry::General,
        "symmetric" => Symmetry::Symmetric,
        "skew-symmetric" => Symmetry::SkewSymmetric,
        "hermitian" => return Err(MtxError::Hermitian),
        other => {
            return Err(MtxError::GarbledBanner {
                reason: format!(
                    "unknown symmetry {other:?} (expected general, symmetric or skew-symmetric)"
                ),
            })
        }
    };
    if field == Field::Pattern && symmetry == Symmetry::SkewSymmetric {
        return Err(MtxError::PatternSkew);
    }
    Ok((field, symmetry))
}

fn parse_size_line(body: &[u8], line: u64) -> Result<(u64, u64, u64), MtxError> {
    let mut t = Tokens::new(body);
    let mut v = [0u64; 3];
    for (k, name) in ["rows", "columns", "entries"].iter().enumerate() {
        let tok = t.next().ok_or_else(|| MtxError::BadSizeLine {
            line,
            reason: format!("missing {name} (expected `rows cols entries`)"),
        })?;
        v[k] = parse_u64(tok).ok_or_else(|| MtxError::BadSizeLine {
            line,
            reason: format!("{name} {:?} is not a non-negative integer", show(tok)),
        })?;
    }
    if let Some(extra) = t.next() {
        return Err(MtxError::BadSizeLine {
            line,
            reason: format!(
                "unexpected {:?} after `rows cols entries` (dense `array` size lines have two numbers)",
                show(extra)
            ),
        });
    }
    Ok((v[0], v[1], v[2]))
}

#[inline]
fn parse_index(tok: &[u8], what: &'static str, max: u64, line: u64) -> Result<u64, MtxError> {
    let v = parse_u64(tok).ok_or_else(|| MtxError::BadInteger {
        line,
        what,
        token: show(tok),
    })?;
    if v == 0 {
        return Err(MtxError::ZeroIndex { line, what });
    }
    if v > max {
        return Err(MtxError::IndexOutOfRange {
            line,
            what,
            value: v,
            max,
        });
    }
    Ok(v)
}

/// Decimal digits only, no sign, overflow-checked.
#[inline]
fn parse_u64(tok: &[u8]) -> Option<u64> {
    if tok.is_empty() || tok.len() > 20 {
        return None;
    }
    let mut v: u64 = 0;
    for &b in tok {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(u64::from(d))?;
    }
    Some(v)
}

#[inline]
fn parse_i64(tok: &[u8]) -> Option<i64> {
    let (neg, digits) = match tok.first() {
        Some(b'-') => (true, &tok[1..]),
        Some(b'+') => (false, &tok[1..]),
        _ => (false, tok),
    };
    let m = parse_u64(digits)?;
    if neg {
        if m <= i64::MAX as u64 + 1 {
            Some((m as i64).wrapping_neg())
        } else {
            None
        }
    } else {
        i64::try_from(m).ok()
    }
}

#[inline]
fn parse_f64(tok: &[u8]) -> Option<f64> {
    let s = std::str::from_utf8(tok).ok()?;
    let v: f64 = s.parse().ok()?;
    v.is_finite().then_some(v)
}

/// A token for an error message (lossy UTF-8, at most 40 bytes).
fn show(tok: &[u8]) -> String {
    String::from_utf8_lossy(&tok[..tok.len().min(40)]).into_owned()
}

fn trim_ascii(b: &[u8]) -> &[u8] {
    let start = b.iter().position(|c| !is_space(*c)).unwrap_or(b.len());
    let end = b
        .iter()
        .rposition(|c| !is_space(*c))
        .map_or(start, |e| e + 1);
    &b[start..end.max(start)]
}

#[inline(always)]
fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\r' | b'\n' | 0x0b | 0x0c)
}

/// Whitespace-separated tokens of one line.
struct Tokens<'a> {
    s: &'a [u8],
    pos: usize,
}

impl<'a> Tokens<'a> {
    fn new(s: &'a [u8]) -> Tokens<'a> {
        Tokens { s, pos: 0 }
    }
}

impl<'a> Iterator for Tokens<'a> {
    type Item = &'a [u8];
    #[inline]
    fn next(&mut self) -> Option<&'a [u8]> {
        let s = self.s;
        let mut i = self.pos;
        while i < s.len() && is_space(s[i]) {
            i += 1;
        }
        if i == s.len() {
            self.pos = i;
            return None;
        }
        let start = i;
        while i < s.len() && !is_space(s[i]) {
            i += 1;
        }
        self.pos = i;
        Some(&s[start..i])
    }
}

/// Write `m` as a `coordinate general` file (`real` if it has values,
/// `pattern` otherwise), 1-based, preceded by `comment` lines (each
/// prefixed with `%`).
pub fn write_mtx<W: Write>(m: &CsrMatrix, w: W, comment: &str) -> io::Result<()> {
    let mut w = BufWriter::with_capacity(1 << 20, w);
    let field = if m.values().is_some() {
        "real"
    } else {
        "pattern"
    };
    writeln!(w, "%%MatrixMarket matrix coordinate {field} general")?;
    for l in comment.lines() {
        writeln!(w, "%{l}")?;
    }
    writeln!(w, "{} {} {}", m.rows(), m.cols(), m.nnz())?;
    let mut buf = itoa_buf::Buf::default();
    for r in 0..m.rows() {
        let range = m.entry_range(r, r + 1);
        for k in range {
            w.write_all(buf.format(u64::from(r) + 1))?;
            w.write_all(b" ")?;
            w.write_all(buf.format(u64::from(m.col_idx()[k]) + 1))?;
            match m.values() {
                Some(v) => writeln!(w, " {}", v[k])?,
                None => w.write_all(b"\n")?,
            }
        }
    }
    w.flush()
}

/// [`write_mtx`] to a file path.
pub fn write_mtx_file(m: &CsrMatrix, path: &Path, comment: &str) -> io::Result<()> {
    write_mtx(m, File::create(path)?, comment)
}

/// Minimal integer formatting without allocation.
mod itoa_buf {
    /// A 20-digit scratch buffer.
    #[derive(Default)]
    pub struct Buf {
        b: [u8; 20],
    }
    impl Buf {
        /// Decimal digits of `v`.
        pub fn format(&mut self, mut v: u64) -> &[u8] {
            let mut i = self.b.len();
            loop {
                i -= 1;
                self.b[i] = b'0' + (v % 10) as u8;
                v /= 10;
                if v == 0 {
                    break;
                }
            }
            &self.b[i..]
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers() {
        assert_eq!(parse_u64(b"0"), Some(0));
        assert_eq!(parse_u64(b"18446744073709551615"), Some(u64::MAX));
        assert_eq!(parse_u64(b"18446744073709551616"), None);
        assert_eq!(parse_u64(b"1x"), None);
        assert_eq!(parse_u64(b"-1"), None);
        assert_eq!(parse_i64(b"-9223372036854775808"), Some(i64::MIN));
        assert_eq!(parse_i64(b"9223372036854775808"), None);
        assert_eq!(parse_i64(b"+7"), Some(7));
        assert_eq!(parse_f64(b"1e3"), Some(1000.0));
        assert_eq!(parse_f64(b"nan"), None);
        assert_eq!(parse_f64(b"abc"), None);
        let mut b = itoa_buf::Buf::default();
        assert_eq!(b.format(0), b"0");
        assert_eq!(b.format(u64::MAX), b"18446744073709551615");
    }

    #[test]
    fn tokens_and_trim() {
        let t: Vec<_> = Tokens::new(b"  1\t2  3.5\r\n").collect();
        assert_eq!(t, vec![&b"1"[..], b"2", b"3.5"]);
        assert_eq!(trim_ascii(b"  \r\n"), b"");
        assert_eq!(trim_ascii(b" a b\n"), b"a b");
    }
}
