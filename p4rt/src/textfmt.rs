//! The protobuf text format of a P4Info (what p4c writes for
//! `--p4runtime-files X.p4info.txt`), and the choice between text and
//! binary by file extension. prost has no text format, so this writer
//! walks the P4Info fields NetSparse fills; as in proto3's text output,
//! fields holding their default value are left out.

use std::fmt::Write as _;

use prost::Message as _;

use crate::proto::cfg;

/// How to write a P4Info file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum P4InfoFormat {
    /// Protobuf text format (`.txt`, `.pbtxt`).
    Text,
    /// Binary protobuf (`.bin`, `.pb`).
    Binary,
    /// JSON (`.json`): not supported yet.
    Json,
}

/// The format a `--p4runtime-files` path asks for, by extension (`None`:
/// unknown extension).
pub fn format_for(path: &std::path::Path) -> Option<P4InfoFormat> {
    match path.extension().and_then(|e| e.to_str())? {
        "txt" | "pbtxt" => Some(P4InfoFormat::Text),
        "bin" | "pb" => Some(P4InfoFormat::Binary),
        "json" => Some(P4InfoFormat::Json),
        _ => None,
    }
}

/// Encode `info` in `format` (`None` for JSON, which is not supported).
pub fn encode(info: &cfg::P4Info, format: P4InfoFormat) -> Option<Vec<u8>> {
    match format {
        P4InfoFormat::Text => Some(to_text(info).into_bytes()),
        P4InfoFormat::Binary => Some(info.encode_to_vec()),
        P4InfoFormat::Json => None,
    }
}

struct W {
    out: String,
    depth: usize,
}

impl W {
    fn pad(&mut self) {
        for _ in 0..self.depth {
            self.out.push_str("  ");
        }
    }
    fn open(&mut self, name: &str) {
        self.pad();
        let _ = writeln!(self.out, "{name} {{");
        self.depth += 1;
    }
    fn close(&mut self) {
        self.depth -= 1;
        self.pad();
        self.out.push_str("}\n");
    }
    fn num(&mut self, name: &str, v: i64) {
        if v != 0 {
            self.pad();
            let _ = writeln!(self.out, "{name}: {v}");
        }
    }
    fn boolean(&mut self, name: &str, v: bool) {
        if v {
            self.pad();
            let _ = writeln!(self.out, "{name}: true");
        }
    }
    fn enumv(&mut self, name: &str, v: &str, is_default: bool) {
        if !is_default {
            self.pad();
            let _ = writeln!(self.out, "{name}: {v}");
        }
    }
    fn string(&mut self, name: &str, v: &str) {
        if !v.is_empty() {
            self.pad();
            let _ = writeln!(self.out, "{name}: \"{}\"", escape(v));
        }
    }
    fn preamble(&mut self, p: &Option<cfg::Preamble>) {
        let Some(p) = p else { return };
        self.open("preamble");
        self.num("id", i64::from(p.id));
        self.string("name", &p.name);
        self.string("alias", &p.alias);
        for a in &p.annotations {
            self.string("annotations", a);
        }
        self.close();
    }
}

impl W {
    /// A `type_spec` field (bit and int bitstrings, named structs).
    fn type_spec(&mut self, t: &Option<cfg::P4DataTypeSpec>) {
        use cfg::p4_data_type_spec::TypeSpec as T;
        let Some(cfg::P4DataTypeSpec { type_spec: Some(t) }) = t else {
            return;
        };
        self.open("type_spec");
        match t {
            T::Bitstring(b) => {
                self.open("bitstring");
                match &b.type_spec {
                    Some(cfg::p4_bitstring_like_type_spec::TypeSpec::Bit(t)) => {
                        self.open("bit");
                        self.num("bitwidth", i64::from(t.bitwidth));
                        self.close();
                    }
                    Some(cfg::p4_bitstring_like_type_spec::TypeSpec::Int(t)) => {
                        self.open("int");
                        self.num("bitwidth", i64::from(t.bitwidth));
                        self.close();
                    }
                    None => {}
                }
                self.close();
            }
            T::Struct(n) => {
                self.open("struct");
                self.string("name", &n.name);
                self.close();
            }
        }
        self.close();
    }
}

fn escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            '\n' => o.push_str("\\n"),
            c if c.is_control() => {
                let _ = write!(o, "\\{:03o}", c as u32);
            }
            c => o.push(c),
        }
    }
    o
}

/// `info` in protobuf text format.
pub fn to_text(info: &cfg::P4Info) -> String {
    let mut w = W {
        out: String::new(),
        depth: 0,
    };
    if let Some(p) = &info.pkg_info {
        w.open("pkg_info");
        w.string("name", &p.name);
        w.string("version", &p.version);
        w.string("arch", &p.arch);
        w.close();
    }
    for t in &info.tables {
        w.open("tables");
        w.preamble(&t.preamble);
        for m in &t.match_fields {
            w.open("match_fields");
            w.num("id", i64::from(m.id));
            w.string("name", &m.name);
            w.num("bitwidth", i64::from(m.bitwidth));
            match &m.r#match {
                Some(cfg::match_field::Match::MatchType(k)) => {
                    let name = cfg::match_field::MatchType::try_from(*k)
                        .map_or("UNSPECIFIED", |k| k.as_str_name());
                    w.enumv("match_type", name, false);
                }
                Some(cfg::match_field::Match::OtherMatchType(s)) => {
                    w.string("other_match_type", s);
                }
                None => {}
            }
            w.close();
        }
        for a in &t.action_refs {
            w.open("action_refs");
            w.num("id", i64::from(a.id));
            let scope = cfg::action_ref::Scope::try_from(a.scope)
                .unwrap_or(cfg::action_ref::Scope::TableAndDefault);
            w.enumv(
                "scope",
                scope.as_str_name(),
                scope == cfg::action_ref::Scope::TableAndDefault,
            );
            w.close();
        }
        w.num(
            "const_default_action_id",
            i64::from(t.const_default_action_id),
        );
        for d in &t.direct_resource_ids {
            w.num("direct_resource_ids", i64::from(*d));
        }
        w.num("size", t.size);
        w.boolean("is_const_table", t.is_const_table);
        w.boolean("has_initial_entries", t.has_initial_entries);
        w.close();
    }
    for a in &info.actions {
        w.open("actions");
        w.preamble(&a.preamble);
        for p in &a.params {
            w.open("params");
            w.num("id", i64::from(p.id));
            w.string("name", &p.name);
            w.num("bitwidth", i64::from(p.bitwidth));
            w.close();
        }
        w.close();
    }
    let counter_unit =
        |u: i32| cfg::counter_spec::Unit::try_from(u).map_or("UNSPECIFIED", |u| u.as_str_name());
    for c in &info.counters {
        w.open("counters");
        w.preamble(&c.preamble);
        if let Some(s) = &c.spec {
            w.open("spec");
            w.enumv("unit", counter_unit(s.unit), s.unit == 0);
            w.close();
        }
        w.num("size", c.size);
        w.close();
    }
    for c in &info.direct_counters {
        w.open("direct_counters");
        w.preamble(&c.preamble);
        if let Some(s) = &c.spec {
            w.open("spec");
            w.enumv("unit", counter_unit(s.unit), s.unit == 0);
            w.close();
        }
        w.num("direct_table_id", i64::from(c.direct_table_id));
        w.close();
    }
    let meter_unit =
        |u: i32| cfg::meter_spec::Unit::try_from(u).map_or("UNSPECIFIED", |u| u.as_str_name());
    for m in &info.meters {
        w.open("meters");
        w.preamble(&m.preamble);
        if let Some(s) = &m.spec {
            w.open("spec");
            w.enumv("unit", meter_unit(s.unit), s.unit == 0);
            w.close();
        }
        w.num("size", m.size);
        w.close();
    }
    for m in &info.direct_meters {
        w.open("direct_meters");
        w.preamble(&m.preamble);
        if let Some(s) = &m.spec {
            w.open("spec");
            w.enumv("unit", meter_unit(s.unit), s.unit == 0);
            w.close();
        }
        w.num("direct_table_id", i64::from(m.direct_table_id));
        w.close();
    }
    for c in &info.controller_packet_metadata {
        w.open("controller_packet_metadata");
        w.preamble(&c.preamble);
        for m in &c.metadata {
            w.open("metadata");
            w.num("id", i64::from(m.id));
            w.string("name", &m.name);
            w.num("bitwidth", i64::from(m.bitwidth));
            w.close();
        }
        w.close();
    }
    for r in &info.registers {
        w.open("registers");
        w.preamble(&r.preamble);
        w.type_spec(&r.type_spec);
        w.num("size", i64::from(r.size));
        w.close();
    }
    for d in &info.digests {
        w.open("digests");
        w.preamble(&d.preamble);
        w.type_spec(&d.type_spec);
        w.close();
    }
    for x in &info.externs {
        w.open("externs");
        w.num("extern_type_id", i64::from(x.extern_type_id));
        w.string("extern_type_name", &x.extern_type_name);
        for i in &x.instances {
            w.open("instances");
            w.preamble(&i.preamble);
            w.close();
        }
        w.close();
    }
    if let Some(ti) = &info.type_info {
        w.open("type_info");
        for (name, st) in &ti.structs {
            w.open("structs");
            w.string("key", name);
            w.open("value");
            for m in &st.members {
                w.open("members");
                w.string("name", &m.name);
                w.type_spec(&m.type_spec);
                w.close();
            }
            w.close();
            w.close();
        }
        w.close();
    }
    w.out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_skips_defaults_and_escapes() {
        let info = cfg::P4Info {
            pkg_info: Some(cfg::PkgInfo {
                arch: "v1model".into(),
                name: "a\"b".into(),
                ..Default::default()
            }),
            ..Default::default()
        };
        assert_eq!(
            to_text(&info),
            "pkg_info {\n  name: \"a\\\"b\"\n  arch: \"v1model\"\n}\n"
        );
    }

    #[test]
    fn format_by_extension() {
        use std::path::Path;
        assert_eq!(
            format_for(Path::new("x.p4info.txt")),
            Some(P4InfoFormat::Text)
        );
        assert_eq!(format_for(Path::new("x.bin")), Some(P4InfoFormat::Binary));
        assert_eq!(format_for(Path::new("x.pb")), Some(P4InfoFormat::Binary));
        assert_eq!(format_for(Path::new("x.yaml")), None);
    }
}
