//! Mapping from the preprocessed text back to the original files.
//!
//! The preprocessor copies runs of original text verbatim and inserts macro
//! expansions and separators. Every output byte belongs to one segment: a
//! verbatim segment maps byte for byte into one original file; a fixed
//! segment (a macro expansion, a synthetic separator) maps as a whole to one
//! original span (the macro use, the directive).

use crate::ast::Span;

/// Where the bytes of one segment come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Origin {
    /// Byte-for-byte copy of `file` starting at byte `src`.
    Text { file: u32, src: usize },
    /// Everything maps to this span (macro use site, directive).
    Fixed(Span),
}

#[derive(Clone, Copy, Debug)]
struct Segment {
    out: usize,
    len: usize,
    origin: Origin,
}

/// Output range → original span map, built by the preprocessor.
#[derive(Clone, Debug, Default)]
pub(crate) struct SpanMap {
    segments: Vec<Segment>,
    /// File used when the output is empty.
    fallback_file: u32,
}

fn to_u32(x: usize) -> u32 {
    u32::try_from(x).unwrap_or(u32::MAX)
}

impl SpanMap {
    /// An empty map whose positions default to file `fallback_file`.
    pub(crate) fn new(fallback_file: u32) -> SpanMap {
        SpanMap {
            segments: Vec::new(),
            fallback_file,
        }
    }

    /// Output bytes `out..out+len` are a copy of `file[src..src+len]`.
    pub(crate) fn push_text(&mut self, out: usize, file: u32, src: usize, len: usize) {
        if len == 0 {
            return;
        }
        if let Some(last) = self.segments.last_mut() {
            if let Origin::Text { file: f, src: s } = last.origin {
                if f == file && last.out + last.len == out && s + last.len == src {
                    last.len += len;
                    return;
                }
            }
        }
        self.segments.push(Segment {
            out,
            len,
            origin: Origin::Text { file, src },
        });
    }

    /// Output bytes `out..out+len` all map to `span`.
    pub(crate) fn push_fixed(&mut self, out: usize, len: usize, span: Span) {
        if len == 0 {
            return;
        }
        self.segments.push(Segment {
            out,
            len,
            origin: Origin::Fixed(span),
        });
    }

    /// Index of the segment containing output byte `pos`, or of the last
    /// segment starting before it.
    fn find(&self, pos: usize) -> Option<usize> {
        let i = self.segments.partition_point(|s| s.out <= pos);
        i.checked_sub(1)
    }

    /// (file, byte) of the start of output position `pos`.
    fn start_point(&self, pos: usize) -> (u32, u32) {
        let Some(i) = self.find(pos).or(if self.segments.is_empty() {
            None
        } else {
            Some(0)
        }) else {
            return (self.fallback_file, 0);
        };
        let s = self.segments[i];
        let inside = pos >= s.out && pos < s.out + s.len;
        match s.origin {
            Origin::Text { file, src } if inside => (file, to_u32(src + (pos - s.out))),
            Origin::Text { file, src } if pos < s.out => (file, to_u32(src)),
            Origin::Text { file, src } => (file, to_u32(src + s.len)),
            Origin::Fixed(sp) if inside || pos < s.out => (sp.file, sp.start),
            Origin::Fixed(sp) => (sp.file, sp.end),
        }
    }

    /// (file, byte) of the end of an output range ending at `end` (exclusive).
    fn end_point(&self, end: usize) -> (u32, u32) {
        let pos = end.saturating_sub(1);
        let Some(i) = self.find(pos) else {
            return self.start_point(end);
        };
        let s = self.segments[i];
        match s.origin {
            Origin::Text { file, src } => {
                let off = (pos - s.out).min(s.len.saturating_sub(1));
                (file, to_u32(src + off + 1))
            }
            Origin::Fixed(sp) => (sp.file, sp.end),
        }
    }

    /// The original span of output bytes `start..end`.
    pub(crate) fn span(&self, start: usize, end: usize) -> Span {
        let (file, s) = self.start_point(start);
        if end <= start {
            // A point: inside a fixed segment it is the whole use site.
            if let Some(i) = self.find(start) {
                let seg = self.segments[i];
                if let Origin::Fixed(sp) = seg.origin {
                    if start < seg.out + seg.len {
                        return sp;
                    }
                }
            }
            return Span {
                file,
                start: s,
                end: s,
            };
        }
        let (efile, e) = self.end_point(end);
        if efile == file && e >= s {
            Span {
                file,
                start: s,
                end: e,
            }
        } else {
            // The range crosses files (an include inside it): keep the start.
            let (_, e2) = self.end_point(start + 1);
            Span {
                file,
                start: s,
                end: e2.max(s),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_and_fixed_segments() {
        let mut m = SpanMap::new(0);
        // out 0..5 = file 0 bytes 10..15; out 5..8 = macro use at file 0 20..23;
        // out 8..10 = file 1 bytes 0..2
        m.push_text(0, 0, 10, 3);
        m.push_text(3, 0, 13, 2); // merges
        m.push_fixed(
            5,
            3,
            Span {
                file: 0,
                start: 20,
                end: 23,
            },
        );
        m.push_text(8, 1, 0, 2);
        assert_eq!(m.segments.len(), 3);
        assert_eq!(
            m.span(1, 4),
            Span {
                file: 0,
                start: 11,
                end: 14
            }
        );
        assert_eq!(
            m.span(6, 7),
            Span {
                file: 0,
                start: 20,
                end: 23
            }
        );
        assert_eq!(
            m.span(2, 7),
            Span {
                file: 0,
                start: 12,
                end: 23
            }
        );
        assert_eq!(
            m.span(8, 10),
            Span {
                file: 1,
                start: 0,
                end: 2
            }
        );
        // Crossing into another file keeps the start file.
        assert_eq!(m.span(4, 10).file, 0);
        // End of input maps to the end of the last segment.
        assert_eq!(
            m.span(10, 10),
            Span {
                file: 1,
                start: 2,
                end: 2
            }
        );
        assert_eq!(
            SpanMap::new(3).span(0, 0),
            Span {
                file: 3,
                start: 0,
                end: 0
            }
        );
    }
}
