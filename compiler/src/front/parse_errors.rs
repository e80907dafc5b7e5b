//! Syntax errors: a pest error turned into a diagnostic that says what was
//! expected and what was found, in P4 terms (an unclosed `{`, a reserved
//! word used as a name, the likeliest token).

use super::*;

impl Builder<'_> {
    // ------------------------------------------------------------ errors

    pub(super) fn syntax_error(&self, e: pest::error::Error<Rule>) -> Diagnostic {
        let pos = match e.location {
            InputLocation::Pos(p) => p,
            InputLocation::Span((s, _)) => s,
        };
        let pos = pos.min(self.text.len());
        let (found, tok_len) = describe_found(self.text, pos);
        let at_end = self.text[pos..].trim().is_empty();
        let span = if at_end {
            // Point at the last character of the program, not past it.
            let last = self.text[..pos].trim_end().len();
            let first = self.text[..last]
                .chars()
                .next_back()
                .map_or(last, |c| last - c.len_utf8());
            self.map.span(first, last)
        } else {
            self.map.span(pos, pos + tok_len)
        };
        let found = if at_end {
            "end of input".to_owned()
        } else {
            found
        };
        match e.variant {
            ErrorVariant::CustomError { message } => {
                if message.contains("limit") {
                    Diagnostic::error("E0003", "program nested too deeply to parse", span)
                        .with_label("the parser's nesting limit is exceeded here")
                        .with_hint("split the construct into smaller parts")
                } else {
                    Diagnostic::error("E0001", format!("syntax error: {message}"), span)
                }
            }
            ErrorVariant::ParsingError { positives, .. } => {
                let mut items: Vec<(u8, &'static str)> =
                    positives.iter().filter_map(|r| describe_rule(*r)).collect();
                items.sort();
                items.dedup();
                let has_specific = items.iter().any(|(c, _)| *c < 2);
                if has_specific {
                    items.retain(|(c, _)| *c < 2);
                }
                let names: Vec<&str> = items.iter().map(|(_, n)| *n).collect();
                let expected = join_or(&names);
                let msg = if expected.is_empty() {
                    format!("unexpected {found}")
                } else {
                    format!("expected {expected}")
                };
                let mut d =
                    Diagnostic::error("E0001", msg, span).with_label(format!("unexpected {found}"));
                let word = &self.text[pos..pos + tok_len];
                if names.contains(&"a name") && is_reserved(word) {
                    d = d.with_note(format!(
                        "`{word}` is a reserved keyword and cannot be used as a name"
                    ));
                }
                if names == ["`;`"] {
                    d = d.with_hint("a `;` is probably missing at the end of the previous declaration or statement");
                }
                if names.contains(&"`}`") {
                    if let Some(open) = unclosed_brace(&self.text[..pos]) {
                        d = d.with_secondary(
                            self.map.span(open, open + 1),
                            "this `{` is not closed",
                        );
                    }
                }
                if at_end {
                    d.labels[0].message = "the program ends here".to_owned();
                }
                d
            }
        }
    }
}

/// Offset of the innermost `{` in `text` that is not closed, skipping
/// comments and strings.
fn unclosed_brace(text: &str) -> Option<usize> {
    let b = text.as_bytes();
    let mut stack = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                i = b[i..]
                    .iter()
                    .position(|&c| c == b'\n')
                    .map_or(b.len(), |p| i + p);
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i = text[i + 2..].find("*/").map_or(b.len(), |p| i + 4 + p);
            }
            b'"' => {
                i += 1;
                while i < b.len() && b[i] != b'"' && b[i] != b'\n' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            b'{' => {
                stack.push(i);
                i += 1;
            }
            b'}' => {
                stack.pop();
                i += 1;
            }
            _ => i += 1,
        }
    }
    stack.pop()
}

/// Is `w` a reserved word of the language?
fn is_reserved(w: &str) -> bool {
    matches!(
        w,
        "abstract"
            | "action"
            | "bit"
            | "bool"
            | "break"
            | "const"
            | "continue"
            | "control"
            | "default"
            | "else"
            | "enum"
            | "error"
            | "exit"
            | "extern"
            | "false"
            | "for"
            | "header_union"
            | "header"
            | "if"
            | "inout"
            | "int"
            | "in"
            | "match_kind"
            | "out"
            | "package"
            | "parser"
            | "return"
            | "select"
            | "string"
            | "struct"
            | "switch"
            | "table"
            | "this"
            | "transition"
            | "true"
            | "tuple"
            | "typedef"
            | "value_set"
            | "varbit"
            | "void"
    )
}

/// "a, b or c".
fn join_or(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [a] => (*a).to_owned(),
        [rest @ .., last] => {
            let shown: Vec<&str> = rest.iter().take(7).copied().collect();
            let more = if rest.len() > 7 { ", ..." } else { "" };
            format!("{}{more} or {last}", shown.join(", "))
        }
    }
}

/// What is at `pos`, for "unexpected ..." messages, and its length in bytes.
fn describe_found(text: &str, pos: usize) -> (String, usize) {
    let rest = &text[pos..];
    let Some(c) = rest.chars().next() else {
        return ("end of input".to_owned(), 0);
    };
    if c.is_ascii_alphanumeric() || c == '_' {
        let n = rest
            .bytes()
            .position(|b| !(b.is_ascii_alphanumeric() || b == b'_'))
            .unwrap_or(rest.len());
        let n = n.min(64);
        return (format!("`{}`", &rest[..n]), n);
    }
    if c == '"' {
        return ("a string".to_owned(), 1);
    }
    if c.is_control() || c == '\u{FFFD}' {
        return (format!("character U+{:04X}", c as u32), c.len_utf8());
    }
    (format!("`{c}`"), c.len_utf8())
}

/// Human name of a grammar rule, with a class: 0 punctuation/keywords,
/// 1 constructs, 2 operators and optional continuations (dropped when a
/// more specific expectation exists).
fn describe_rule(r: Rule) -> Option<(u8, &'static str)> {
    use Rule::*;
    Some(match r {
        p_semi => (0, "`;`"),
        p_comma => (0, "`,`"),
        p_colon => (0, "`:`"),
        p_lbrace => (0, "`{`"),
        p_rbrace => (0, "`}`"),
        p_lparen => (0, "`(`"),
        p_rparen => (0, "`)`"),
        p_lbracket => (2, "`[`"),
        p_rbracket => (0, "`]`"),
        p_langle => (2, "`<`"),
        p_rangle => (0, "`>`"),
        p_assign => (0, "`=`"),
        kw_apply => (0, "`apply`"),
        kw_transition | transition => (0, "`transition`"),
        kw_state | parser_state => (1, "a parser state"),
        kw_else => (2, "`else`"),
        kw_default => (0, "`default`"),
        kw_const => (2, "`const`"),
        name | ident | prefixed_name => (1, "a name"),
        member_name => (1, "a member name"),
        number => (1, "an integer"),
        string_lit => (1, "a string"),
        expr | bin_expr | postfix_expr | paren_expr | list_expr | struct_init | error_name
        | kw_true | kw_false | dontcare | op_not | op_bnot | op_neg | op_pos => {
            (1, "an expression")
        }
        expr_list => (1, "an expression"),
        type_ref | named_type | bit_type | int_type | varbit_type | bool_type | string_type
        | void_type | error_type | match_kind_type | dontcare_type | tuple_type => (1, "a type"),
        width => (1, "a width"),
        decl => (1, "a declaration"),
        stmt | block => (1, "a statement"),
        parser_local => (1, "a parser local declaration"),
        control_local => (1, "a control local declaration"),
        keyset | simple_keyset | tuple_keyset | select_case => (1, "a keyset"),
        key_prop | actions_prop | default_action_prop | entries_prop | other_prop => {
            (1, "a table property")
        }
        key_element => (1, "a key element (`expression : match_kind;`)"),
        action_ref => (1, "an action"),
        entry | entry_priority => (1, "a table entry"),
        param | params | direction => (1, "a parameter"),
        ctor_params => (2, "constructor parameters"),
        method_decl => (1, "a method declaration"),
        field => (1, "a field"),
        enum_member => (1, "an enum member"),
        name_list => (1, "a name"),
        switch_case => (1, "a switch case"),
        args | argument => (1, "an argument"),
        parser_body | control_body => (1, "a body `{ ... }`"),
        EOI => (1, "end of input"),
        _ => (2, "an operator"),
    })
}
