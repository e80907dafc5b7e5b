//! `#include`: resolution against the including file's directory, the
//! search path and the bundled headers, include guards, limits, and reading
//! sources as UTF-8.

use std::path::{Path, PathBuf};

use crate::ast::Span;

use crate::front::bundled_include;

use super::*;

impl Pp<'_> {
    /// `#include <x>` / `#include "x"`.
    pub(super) fn include(&mut self, rest: &str, file: u32, rest_at: usize, dir_span: Span) {
        let t = rest.trim_start();
        let lead = rest.len() - t.len();
        let (target, angle, tlen) = if let Some(r) = t.strip_prefix('<') {
            match r.find('>') {
                Some(e) => (&r[..e], true, e + 2),
                None => ("", true, 0),
            }
        } else if let Some(r) = t.strip_prefix('"') {
            match r.find('"') {
                Some(e) => (&r[..e], false, e + 2),
                None => ("", false, 0),
            }
        } else {
            ("", false, 0)
        };
        if target.is_empty() {
            self.error("E0015", "malformed `#include`", dir_span)
                .with_hint_mut("write `#include <core.p4>` or `#include \"file.p4\"`");
            return;
        }
        let site = sp(file, rest_at + lead, rest_at + lead + tlen);
        if self.stack.len() >= MAX_INCLUDE_DEPTH {
            self.error(
                "E0014",
                format!("`#include` nested more than {MAX_INCLUDE_DEPTH} levels deep"),
                site,
            )
            .with_label_mut("this include exceeds the limit");
            return;
        }
        if self.inclusions >= MAX_INCLUSIONS {
            self.error(
                "E0014",
                format!("more than {MAX_INCLUSIONS} file inclusions in one compilation"),
                site,
            );
            return;
        }
        // Resolve.
        let mut searched: Vec<String> = Vec::new();
        let mut found: Option<(FileKey, String)> = None;
        let bundled = bundled_include(target).map(|_| target);
        if angle {
            if let Some(b) = bundled {
                found = Some((FileKey::Bundled(static_name(b)), format!("<{b}>")));
            }
        } else if let Some(dir) = self.stack.last().and_then(|f| f.dir.clone()) {
            let p = dir.join(target);
            searched.push(display_dir(&dir));
            if p.is_file() {
                found = Some((FileKey::Path(canon(&p)), p.display().to_string()));
            }
        }
        if found.is_none() {
            for d in &self.opts.include_dirs {
                let p = d.join(target);
                searched.push(display_dir(d));
                if p.is_file() {
                    found = Some((FileKey::Path(canon(&p)), p.display().to_string()));
                    break;
                }
            }
        }
        if found.is_none() {
            if let Some(b) = bundled {
                found = Some((FileKey::Bundled(static_name(b)), format!("<{b}>")));
            }
        }
        let Some((key, name)) = found else {
            let shown = if angle {
                format!("<{target}>")
            } else {
                format!("\"{target}\"")
            };
            let d = self
                .error("E0010", format!("cannot find include file {shown}"), site)
                .with_label_mut("not found");
            if searched.is_empty() {
                d.notes
                    .push("no include directories were given (use -I DIR)".to_owned());
            } else {
                d.notes.push(format!("searched: {}", searched.join(", ")));
            }
            let bundled: Vec<String> = crate::front::BUNDLED_INCLUDES
                .iter()
                .map(|(n, _)| format!("<{n}>"))
                .collect();
            d.notes
                .push(format!("bundled includes: {}", bundled.join(", ")));
            return;
        };
        if self.pragma_once.contains(&key) {
            return;
        }
        if let Some(g) = self.guards.get(&key) {
            if self.macros.contains_key(g) {
                return;
            }
        }
        if let Some(pos) = self.stack.iter().position(|f| f.key == key) {
            let chain: Vec<String> = self.stack[pos..]
                .iter()
                .map(|f| f.name.clone())
                .chain(std::iter::once(name.clone()))
                .collect();
            let first = self.stack[pos].site;
            let d = self
                .error(
                    "E0013",
                    format!("include cycle: `{name}` includes itself"),
                    site,
                )
                .with_label_mut("this include closes the cycle");
            d.notes.push(format!("cycle: {}", chain.join(" -> ")));
            if let Some(first) = first {
                d.labels.push(crate::diag::SpanLabel {
                    span: first,
                    message: format!("`{name}` was first included here"),
                    primary: false,
                });
            }
            d.hint = Some("add an include guard (`#ifndef X` / `#define X` / `#endif`) or `#pragma once`, or remove the include".to_owned());
            return;
        }
        // Load.
        let text: String = match &key {
            FileKey::Bundled(b) => bundled_include(b).unwrap_or("").to_owned(),
            FileKey::Path(_) => {
                let path = PathBuf::from(&name);
                match read_source(&path) {
                    Ok(t) => t,
                    Err(ReadError::Io(e)) => {
                        self.error(
                            "E0011",
                            format!("cannot read include file `{name}`: {e}"),
                            site,
                        );
                        return;
                    }
                    Err(ReadError::Utf8 { lossy, at }) => {
                        let id = self.sources.add(name.clone(), lossy);
                        self.error(
                            "E0012",
                            format!("`{name}` is not valid UTF-8"),
                            sp(id, at, at + 3),
                        )
                        .with_label_mut("invalid byte sequence here")
                        .with_secondary_mut(site, "included here");
                        return;
                    }
                }
            }
        };
        self.inclusions += 1;
        let id = self.sources.add(name.clone(), text);
        let dir = match &key {
            FileKey::Bundled(_) => None,
            FileKey::Path(_) => Some(
                Path::new(&name)
                    .parent()
                    .map(Path::to_path_buf)
                    .unwrap_or_default(),
            ),
        };
        self.stack.push(Frame {
            key: key.clone(),
            dir,
            site: Some(site),
            name,
        });
        self.cond_bases.push(self.conds.len());
        self.run_file(id, key);
        self.cond_bases.pop();
        self.stack.pop();
    }
}

impl GuardState {
    pub(super) fn note_significant(&mut self) {
        self.seen_significant = true;
        if self.closed {
            self.spoiled = true;
        }
    }
}

pub(super) fn canon(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}

pub(super) fn display_dir(d: &Path) -> String {
    if d.as_os_str().is_empty() {
        ".".to_owned()
    } else {
        d.display().to_string()
    }
}

/// Why a source file could not be loaded.
pub(crate) enum ReadError {
    /// The file could not be read.
    Io(std::io::Error),
    /// Not UTF-8: the lossy text and the byte offset of the first bad byte.
    Utf8 { lossy: String, at: usize },
}

/// Read a source file as UTF-8.
pub(crate) fn read_source(path: &Path) -> Result<String, ReadError> {
    let bytes = std::fs::read(path).map_err(ReadError::Io)?;
    match String::from_utf8(bytes) {
        Ok(s) => Ok(s),
        Err(e) => {
            let at = e.utf8_error().valid_up_to();
            let lossy = String::from_utf8_lossy(e.as_bytes()).into_owned();
            Err(ReadError::Utf8 { lossy, at })
        }
    }
}
