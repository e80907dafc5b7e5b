//! The failure report of an STF run: expected vs received per port, with
//! the differing hex digits marked.

use std::fmt::Write as _;

use super::{Expectation, Failure, Mismatch, Pattern, Received, StfOutcome};

/// Bytes shown around the first difference of a long packet.
const WINDOW: usize = 48;
/// Packets up to this many bytes are shown whole.
const WHOLE: usize = 64;

/// Bytes as space-separated hex pairs (`0a 0b ff`).
pub fn render_hex(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 3);
    for (i, b) in bytes.iter().enumerate() {
        if i > 0 {
            s.push(' ');
        }
        let _ = write!(s, "{b:02x}");
    }
    s
}

/// The nibble `i` of `bytes`, if present.
fn nibble(bytes: &[u8], i: usize) -> Option<u8> {
    bytes
        .get(i / 2)
        .map(|b| if i % 2 == 0 { b >> 4 } else { b & 0xf })
}

/// Nibble positions where `got` differs from `want` (a missing nibble
/// differs; `*` never does).
fn differing(want: &Pattern, got: &[u8]) -> Vec<bool> {
    let n = want.nibbles.len().max(got.len() * 2);
    (0..n)
        .map(|i| match (want.nibbles.get(i), nibble(got, i)) {
            (Some(Some(w)), Some(g)) => *w != g,
            (Some(None), Some(_)) => false,
            (Some(_), None) => true,
            (None, Some(_)) => want.exact,
            (None, None) => false,
        })
        .collect()
}

struct Line {
    text: String,
    marks: String,
}

/// Render nibbles `[from, to)` as hex pairs, colouring / marking `diff`.
fn render_nibbles(
    get: impl Fn(usize) -> Option<char>,
    diff: &[bool],
    from: usize,
    to: usize,
    color: bool,
) -> Line {
    let mut text = String::new();
    let mut marks = String::new();
    for i in from..to {
        let Some(c) = get(i) else { break };
        if i > from && i % 2 == 0 {
            text.push(' ');
            marks.push(' ');
        }
        let d = diff.get(i).copied().unwrap_or(false);
        if d && color {
            let _ = write!(text, "\x1b[1;31m{c}\x1b[0m");
        } else {
            text.push(c);
        }
        marks.push(if d { '^' } else { ' ' });
    }
    Line {
        text,
        marks: marks.trim_end().to_owned(),
    }
}

fn hex_char(n: u8) -> char {
    char::from_digit(u32::from(n), 16).unwrap_or('?')
}

/// Expected and received, aligned, with a `^` line under the differences.
fn side_by_side(
    out: &mut String,
    want: Option<&Pattern>,
    got: Option<&[u8]>,
    first_diff: Option<usize>,
    color: bool,
) {
    let wlen = want.map_or(0, |p| p.nibbles.len());
    let glen = got.map_or(0, |g| g.len() * 2);
    let total = wlen.max(glen);
    let (from, to) = if total <= WHOLE * 2 {
        (0, total)
    } else {
        let start_byte = first_diff.map_or(0, |n| (n / 2).saturating_sub(16));
        let from = start_byte * 2;
        (from, (from + WINDOW * 2).min(total))
    };
    let clipped = from > 0 || to < total;
    if clipped {
        let _ = writeln!(
            out,
            "     (bytes {}..{} of {} shown)",
            from / 2,
            to.div_ceil(2),
            total.div_ceil(2)
        );
    }
    let empty_diff: Vec<bool> = Vec::new();
    let diff = match (want, got) {
        (Some(w), Some(g)) => differing(w, g),
        _ => empty_diff,
    };
    let dots = |s: &mut String, at_end: bool| {
        if at_end && to < total {
            s.push_str(" ...");
        }
    };
    if let Some(w) = want {
        let line = render_nibbles(
            |i| w.nibbles.get(i).map(|n| n.map_or('*', hex_char)),
            &diff,
            from,
            to,
            false,
        );
        let mut t = line.text;
        dots(&mut t, true);
        if w.exact && to >= wlen {
            t.push_str(" $");
        }
        let _ = writeln!(
            out,
            "     expected: {}{t}",
            if from > 0 { "... " } else { "" }
        );
    }
    if let Some(g) = got {
        let line = render_nibbles(|i| nibble(g, i).map(hex_char), &diff, from, to, color);
        let mut t = line.text;
        dots(&mut t, true);
        let pad = if from > 0 { "    " } else { "" };
        let _ = writeln!(
            out,
            "     received: {}{t}",
            if from > 0 { "... " } else { "" }
        );
        if want.is_some() && !line.marks.is_empty() {
            let _ = writeln!(out, "               {pad}{}", line.marks);
        }
    }
}

fn what_differs(m: Mismatch, want: &Expectation, got: &Received) -> String {
    match m {
        Mismatch::Nibble { nibble } => format!(
            "differs at byte {} (hex digit {} of the packet)",
            nibble / 2,
            nibble + 1
        ),
        Mismatch::TooShort => format!(
            "received packet too short: {} byte(s), the expectation has {} hex digit(s)",
            got.bytes.len(),
            want.pattern.nibbles.len()
        ),
        Mismatch::TooLong => format!(
            "received packet too long: {} byte(s), `$` expects exactly {}",
            got.bytes.len(),
            want.pattern.nibbles.len() / 2
        ),
    }
}

/// The whole report (see [`StfOutcome::render`]).
pub(super) fn render(o: &StfOutcome, color: bool) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "{}", o.summary());
    let mut ports: Vec<u32> = o
        .failures
        .iter()
        .filter_map(|f| match f {
            Failure::Packet { port, .. }
            | Failure::Missing { port, .. }
            | Failure::Unexpected { port, .. } => Some(*port),
            _ => None,
        })
        .collect();
    ports.dedup();
    for port in ports {
        let want = o.expected.get(&port).map_or(&[][..], Vec::as_slice);
        let got = o.received.get(&port).map_or(&[][..], Vec::as_slice);
        let _ = writeln!(
            s,
            "port {port}: {} packet(s) expected, {} received",
            want.len(),
            got.len()
        );
        for f in &o.failures {
            match *f {
                Failure::Packet {
                    port: p,
                    index,
                    mismatch,
                } if p == port => {
                    let (w, g) = (&want[index], &got[index]);
                    let _ = writeln!(
                        s,
                        "  #{}: expect at line {} vs packet from line {}: {}",
                        index + 1,
                        w.line,
                        g.packet_line,
                        what_differs(mismatch, w, g)
                    );
                    let first = match mismatch {
                        Mismatch::Nibble { nibble } => Some(nibble),
                        Mismatch::TooShort => Some(g.bytes.len() * 2),
                        Mismatch::TooLong => Some(w.pattern.nibbles.len()),
                    };
                    side_by_side(&mut s, Some(&w.pattern), Some(&g.bytes), first, color);
                }
                Failure::Missing { port: p, index } if p == port => {
                    let w = &want[index];
                    let _ = writeln!(
                        s,
                        "  #{}: expect at line {}: no packet received",
                        index + 1,
                        w.line
                    );
                    side_by_side(&mut s, Some(&w.pattern), None, None, color);
                }
                Failure::Unexpected { port: p, index } if p == port => {
                    let g = &got[index];
                    let _ = writeln!(
                        s,
                        "  #{}: unexpected packet (from the packet at line {})",
                        index + 1,
                        g.packet_line
                    );
                    side_by_side(&mut s, None, Some(&g.bytes), None, color);
                }
                _ => {}
            }
        }
    }
    for f in &o.failures {
        match f {
            Failure::NoPacket {
                line,
                port,
                sent,
                expected,
            } => {
                let _ = writeln!(
                    s,
                    "line {line}: no_packet: {sent} packet(s) had left port {port}, \
                     but only {expected} were expected above this line"
                );
            }
            Failure::Counter {
                line,
                check,
                actual,
            } => {
                let _ = writeln!(
                    s,
                    "line {line}: check_counter {check} failed: the value is {actual}"
                );
            }
            _ => {}
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stf::parse::pattern;

    #[test]
    fn marks_under_differences() {
        let p = pattern("0a 0b ** 0d").unwrap();
        let d = differing(&p, &[0x0a, 0x1b, 0xff, 0x0e]);
        assert_eq!(
            d,
            vec![false, false, true, false, false, false, false, true]
        );
        let mut s = String::new();
        side_by_side(
            &mut s,
            Some(&p),
            Some(&[0x0a, 0x1b, 0xff, 0x0e]),
            Some(2),
            false,
        );
        assert!(s.contains("expected: 0a 0b ** 0d"), "{s}");
        assert!(s.contains("received: 0a 1b ff 0e"), "{s}");
        let marks = s.lines().last().unwrap_or_default();
        assert_eq!(marks, format!("{}   ^      ^", " ".repeat(15)), "{s}");
    }

    #[test]
    fn long_packets_are_windowed() {
        let bytes = vec![0u8; 300];
        let mut want = "00".repeat(300);
        want.replace_range(400..401, "f");
        let p = pattern(&want).unwrap();
        let mut s = String::new();
        side_by_side(&mut s, Some(&p), Some(&bytes), Some(400), false);
        assert!(s.contains("(bytes 184..232 of 300 shown)"), "{s}");
        assert!(s.lines().all(|l| l.len() < 200), "{s}");
        assert_eq!(render_hex(&[1, 0xab]), "01 ab");
    }
}
