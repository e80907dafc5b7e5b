//! Source files known to a compilation: user files and bundled includes.
//!
//! Every [`crate::ast::Span`] names a file by its index here. Bundled includes
//! (`<core.p4>`, `<v1model.p4>`, `<netsparse.p4>`) are registered with a
//! `<name>` path so diagnostics inside them are recognisable.

use std::ops::Range;

use codespan_reporting::files::{self, Files};

/// One source file.
#[derive(Clone, Debug)]
pub struct SourceFile {
    /// Path as shown in diagnostics (`programs/ipv4_forward.p4`, `<v1model.p4>`).
    pub name: String,
    /// Full text.
    pub text: String,
    /// Byte offset of the start of every line.
    line_starts: Vec<usize>,
}

impl SourceFile {
    /// A file with its text.
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> SourceFile {
        let text = text.into();
        let line_starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        SourceFile {
            name: name.into(),
            text,
            line_starts,
        }
    }

    /// Zero-based line index containing `byte`.
    pub fn line_index(&self, byte: usize) -> usize {
        match self.line_starts.binary_search(&byte) {
            Ok(i) => i,
            Err(i) => i.saturating_sub(1),
        }
    }

    /// One-based (line, column) of `byte`, for plain-text messages.
    pub fn line_col(&self, byte: usize) -> (usize, usize) {
        let line = self.line_index(byte);
        let start = self.line_starts.get(line).copied().unwrap_or(0);
        let byte = byte.min(self.text.len());
        let col = self.text.get(start..byte).map_or(0, |s| s.chars().count());
        (line + 1, col + 1)
    }
}

/// All files of one compilation.
#[derive(Clone, Debug, Default)]
pub struct SourceMap {
    files: Vec<SourceFile>,
}

impl SourceMap {
    /// An empty map.
    pub fn new() -> SourceMap {
        SourceMap::default()
    }

    /// Register a file and return its index. Registering the same name with
    /// the same text again returns the existing index (bundled includes are
    /// stored once); the same name with different text is a new file, so a
    /// diagnostic never shows stale text.
    pub fn add(&mut self, name: impl Into<String>, text: impl Into<String>) -> u32 {
        let name = name.into();
        let text = text.into();
        if let Some(i) = self
            .files
            .iter()
            .position(|f| f.name == name && f.text == text)
        {
            return i as u32;
        }
        self.files.push(SourceFile::new(name, text));
        (self.files.len() - 1) as u32
    }

    /// The file with index `id`.
    pub fn file(&self, id: u32) -> Option<&SourceFile> {
        self.files.get(id as usize)
    }

    /// The text a span covers (empty if the span is out of range).
    pub fn snippet(&self, span: crate::ast::Span) -> &str {
        self.file(span.file)
            .and_then(|f| f.text.get(span.start as usize..span.end as usize))
            .unwrap_or("")
    }

    /// Number of files.
    pub fn len(&self) -> usize {
        self.files.len()
    }

    /// No files registered.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }
}

impl<'a> Files<'a> for SourceMap {
    type FileId = u32;
    type Name = &'a str;
    type Source = &'a str;

    fn name(&'a self, id: u32) -> Result<&'a str, files::Error> {
        self.file(id)
            .map(|f| f.name.as_str())
            .ok_or(files::Error::FileMissing)
    }

    fn source(&'a self, id: u32) -> Result<&'a str, files::Error> {
        self.file(id)
            .map(|f| f.text.as_str())
            .ok_or(files::Error::FileMissing)
    }

    fn line_index(&'a self, id: u32, byte_index: usize) -> Result<usize, files::Error> {
        Ok(self
            .file(id)
            .ok_or(files::Error::FileMissing)?
            .line_index(byte_index))
    }

    fn line_range(&'a self, id: u32, line_index: usize) -> Result<Range<usize>, files::Error> {
        let f = self.file(id).ok_or(files::Error::FileMissing)?;
        let start = *f
            .line_starts
            .get(line_index)
            .ok_or(files::Error::LineTooLarge {
                given: line_index,
                max: f.line_starts.len().saturating_sub(1),
            })?;
        let end = f
            .line_starts
            .get(line_index + 1)
            .copied()
            .unwrap_or(f.text.len());
        Ok(start..end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col() {
        let f = SourceFile::new("a.p4", "ab\ncd\n\nx");
        assert_eq!(f.line_col(0), (1, 1));
        assert_eq!(f.line_col(4), (2, 2));
        assert_eq!(f.line_col(7), (4, 1));
        assert_eq!(f.line_col(100), (4, 2));
    }

    #[test]
    fn re_adding_a_name_with_new_text_is_a_new_file() {
        let mut m = SourceMap::new();
        let a = m.add("x.p4", "one");
        assert_eq!(m.add("x.p4", "one"), a);
        let b = m.add("x.p4", "two");
        assert_ne!(a, b);
        assert_eq!(m.file(b).map(|f| f.text.as_str()), Some("two"));
    }
}
