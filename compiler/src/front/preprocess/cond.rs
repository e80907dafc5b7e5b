//! Conditionals: `#if`/`#elif` conditions after `defined` and macro
//! replacement, evaluated as C integer constant expressions.

use super::macros::expand_name;
use super::*;

impl Pp<'_> {
    /// Evaluate an `#if`/`#elif` condition.
    pub(super) fn eval_if(&mut self, expr: &str, file: u32, at: usize) -> bool {
        let expr_span = {
            let t = expr.trim_start();
            let s = at + (expr.len() - t.len());
            sp(file, s, s + t.trim_end().len())
        };
        // Replace `defined X` / `defined(X)`, expand macros.
        let b = expr.as_bytes();
        let mut text = String::with_capacity(expr.len());
        let mut i = 0;
        let mut budget = MAX_EXPANSION_BYTES.saturating_sub(self.expansion_bytes);
        while i < b.len() {
            let c = b[i];
            if is_ident_start(c) {
                let e = word_end(b, i);
                let w = &expr[i..e];
                if w == "defined" {
                    let mut k = e;
                    while k < b.len() && b[k].is_ascii_whitespace() {
                        k += 1;
                    }
                    let paren = b.get(k) == Some(&b'(');
                    if paren {
                        k += 1;
                        while k < b.len() && b[k].is_ascii_whitespace() {
                            k += 1;
                        }
                    }
                    let ie = word_end(b, k);
                    let id = &expr[k..ie];
                    let mut k2 = ie;
                    if paren {
                        while k2 < b.len() && b[k2].is_ascii_whitespace() {
                            k2 += 1;
                        }
                        if b.get(k2) != Some(&b')') || id.is_empty() {
                            self.error("E0032", "malformed `defined(...)` in `#if`", expr_span)
                                .with_hint_mut("write `defined(NAME)` or `defined NAME`");
                            return false;
                        }
                        k2 += 1;
                    } else if id.is_empty() {
                        self.error("E0032", "`defined` needs a macro name", expr_span);
                        return false;
                    }
                    text.push_str(if self.macros.contains_key(id) {
                        " 1 "
                    } else {
                        " 0 "
                    });
                    i = k2;
                    continue;
                }
                if self.macros.contains_key(w) {
                    let mut active = Vec::new();
                    text.push(' ');
                    if let Err(msg) =
                        expand_name(&self.macros, w, &mut active, &mut text, &mut budget, 0)
                    {
                        self.error("E0022", msg, expr_span);
                        return false;
                    }
                    text.push(' ');
                } else {
                    text.push_str(w);
                }
                i = e;
            } else if c.is_ascii_digit() {
                let e = word_end(b, i);
                text.push_str(&expr[i..e]);
                i = e;
            } else {
                let ch_len = expr[i..].chars().next().map_or(1, char::len_utf8);
                text.push_str(&expr[i..i + ch_len]);
                i += ch_len;
            }
        }
        match ifexpr::eval(&text) {
            Ok(v) => v != 0,
            Err(msg) => {
                self.error(
                    "E0032",
                    format!("invalid `#if` expression: {msg}"),
                    expr_span,
                );
                false
            }
        }
    }
}

/// `#if` expressions: C integer constant expressions after `defined` and
/// macro replacement. Unknown identifiers are 0 (as in C); `true` is 1.
mod ifexpr {
    use super::super::MAX_IF_DEPTH;

    #[derive(Clone, Debug, PartialEq)]
    enum Tok {
        Num(i128),
        Op(&'static str),
        LParen,
        RParen,
    }

    const OPS: &[&str] = &[
        "||", "&&", "==", "!=", "<=", ">=", "<<", ">>", "<", ">", "+", "-", "*", "/", "%", "&",
        "|", "^", "!", "~", "?", ":",
    ];

    fn lex(s: &str) -> Result<Vec<Tok>, String> {
        let b = s.as_bytes();
        let mut i = 0;
        let mut toks = Vec::new();
        while i < b.len() {
            let c = b[i];
            if c.is_ascii_whitespace() {
                i += 1;
            } else if c.is_ascii_digit() {
                let e = super::word_end(b, i);
                toks.push(Tok::Num(number(&s[i..e])?));
                i = e;
            } else if super::is_ident_start(c) {
                let e = super::word_end(b, i);
                toks.push(Tok::Num(i128::from(&s[i..e] == "true")));
                i = e;
            } else if c == b'(' {
                toks.push(Tok::LParen);
                i += 1;
            } else if c == b')' {
                toks.push(Tok::RParen);
                i += 1;
            } else if let Some(op) = OPS.iter().find(|op| s[i..].starts_with(**op)) {
                toks.push(Tok::Op(op));
                i += op.len();
            } else {
                let ch = s[i..].chars().next().unwrap_or('?');
                return Err(format!("unexpected `{ch}`"));
            }
        }
        Ok(toks)
    }

    fn number(t: &str) -> Result<i128, String> {
        let t2 = t.trim_end_matches(['u', 'U', 'l', 'L']);
        let (digits, radix) = if let Some(h) = t2.strip_prefix("0x").or(t2.strip_prefix("0X")) {
            (h, 16)
        } else if let Some(h) = t2.strip_prefix("0b").or(t2.strip_prefix("0B")) {
            (h, 2)
        } else if t2.len() > 1 && t2.starts_with('0') {
            (&t2[1..], 8)
        } else {
            (t2, 10)
        };
        i128::from_str_radix(digits, radix).map_err(|_| format!("invalid number `{t}`"))
    }

    struct P {
        toks: Vec<Tok>,
        pos: usize,
        depth: usize,
    }

    /// Binary operator precedence (C), higher binds tighter.
    fn prec(op: &str) -> Option<u8> {
        Some(match op {
            "||" => 1,
            "&&" => 2,
            "|" => 3,
            "^" => 4,
            "&" => 5,
            "==" | "!=" => 6,
            "<" | ">" | "<=" | ">=" => 7,
            "<<" | ">>" => 8,
            "+" | "-" => 9,
            "*" | "/" | "%" => 10,
            _ => return None,
        })
    }

    impl P {
        fn peek(&self) -> Option<&Tok> {
            self.toks.get(self.pos)
        }

        fn enter(&mut self) -> Result<(), String> {
            self.depth += 1;
            if self.depth > MAX_IF_DEPTH {
                Err("expression nested too deeply".to_owned())
            } else {
                Ok(())
            }
        }

        fn cond(&mut self) -> Result<i128, String> {
            self.enter()?;
            let c = self.binary(1)?;
            let r = if self.peek() == Some(&Tok::Op("?")) {
                self.pos += 1;
                let a = self.cond()?;
                if self.peek() != Some(&Tok::Op(":")) {
                    return Err("expected `:` in `?:`".to_owned());
                }
                self.pos += 1;
                let b = self.cond()?;
                if c != 0 {
                    a
                } else {
                    b
                }
            } else {
                c
            };
            self.depth -= 1;
            Ok(r)
        }

        fn binary(&mut self, min: u8) -> Result<i128, String> {
            let mut lhs = self.unary()?;
            while let Some(Tok::Op(op)) = self.peek().cloned() {
                let Some(p) = prec(op) else { break };
                if p < min {
                    break;
                }
                self.pos += 1;
                let rhs = self.binary(p + 1)?;
                lhs = apply(op, lhs, rhs)?;
            }
            Ok(lhs)
        }

        fn unary(&mut self) -> Result<i128, String> {
            self.enter()?;
            let r = match self.peek().cloned() {
                Some(Tok::Num(n)) => {
                    self.pos += 1;
                    n
                }
                Some(Tok::LParen) => {
                    self.pos += 1;
                    let v = self.cond()?;
                    if self.peek() != Some(&Tok::RParen) {
                        return Err("expected `)`".to_owned());
                    }
                    self.pos += 1;
                    v
                }
                Some(Tok::Op(op @ ("!" | "~" | "-" | "+"))) => {
                    self.pos += 1;
                    let v = self.unary()?;
                    match op {
                        "!" => i128::from(v == 0),
                        "~" => !v,
                        "-" => v.wrapping_neg(),
                        _ => v,
                    }
                }
                Some(t) => return Err(format!("unexpected {}", describe(&t))),
                None => return Err("expected a value".to_owned()),
            };
            self.depth -= 1;
            Ok(r)
        }
    }

    fn describe(t: &Tok) -> String {
        match t {
            Tok::Num(n) => format!("`{n}`"),
            Tok::Op(o) => format!("`{o}`"),
            Tok::LParen => "`(`".to_owned(),
            Tok::RParen => "`)`".to_owned(),
        }
    }

    fn apply(op: &str, a: i128, b: i128) -> Result<i128, String> {
        Ok(match op {
            "||" => i128::from(a != 0 || b != 0),
            "&&" => i128::from(a != 0 && b != 0),
            "|" => a | b,
            "^" => a ^ b,
            "&" => a & b,
            "==" => i128::from(a == b),
            "!=" => i128::from(a != b),
            "<" => i128::from(a < b),
            ">" => i128::from(a > b),
            "<=" => i128::from(a <= b),
            ">=" => i128::from(a >= b),
            "<<" => u32::try_from(b)
                .ok()
                .and_then(|s| a.checked_shl(s))
                .unwrap_or(0),
            ">>" => u32::try_from(b)
                .ok()
                .and_then(|s| a.checked_shr(s))
                .unwrap_or(0),
            "+" => a.wrapping_add(b),
            "-" => a.wrapping_sub(b),
            "*" => a.wrapping_mul(b),
            "/" | "%" if b == 0 => return Err("division by zero".to_owned()),
            "/" => a.wrapping_div(b),
            "%" => a.wrapping_rem(b),
            _ => return Err(format!("unsupported operator `{op}`")),
        })
    }

    /// Evaluate `s`.
    pub(super) fn eval(s: &str) -> Result<i128, String> {
        let toks = lex(s)?;
        if toks.is_empty() {
            return Err("empty expression".to_owned());
        }
        let mut p = P {
            toks,
            pos: 0,
            depth: 0,
        };
        let v = p.cond()?;
        if let Some(t) = p.peek().cloned() {
            return Err(format!("unexpected {} after the expression", describe(&t)));
        }
        Ok(v)
    }

    #[cfg(test)]
    mod tests {
        use super::eval;

        #[test]
        fn arithmetic_and_logic() {
            assert_eq!(eval("1 + 2 * 3"), Ok(7));
            assert_eq!(eval("(1 + 2) * 3 == 9 && !0"), Ok(1));
            assert_eq!(eval("0x10 | 0b1"), Ok(17));
            assert_eq!(eval("UNKNOWN"), Ok(0));
            assert_eq!(eval("1 ? 2 : 3"), Ok(2));
            assert_eq!(eval("4 >= 5 || 3 < 4"), Ok(1));
            assert!(eval("1 / 0").is_err());
            assert!(eval("(1").is_err());
            assert!(eval("").is_err());
            assert!(eval(&"(".repeat(200)).is_err());
            assert!(eval(&"!".repeat(200)).is_err());
        }
    }
}
