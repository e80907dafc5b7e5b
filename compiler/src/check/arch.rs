//! The main package and the architecture rules.
//!
//! Architectures are table-driven ([`ARCHES`]): each names its package, the
//! kind and pipe of every package parameter, and the prefix of each pipe's
//! shared variables. Blocks of one pipe that receive the same package-level
//! type (`H`, `M`, `standard_metadata_t`) share that storage.

use netsparse_externs::artifact::Arch;

use super::types::{subst_apply, unify, Subst};
use super::{Checker, Sym};
use crate::ast::{self, Direction, Span};
use crate::codes;
use crate::diag::Diagnostic;
use crate::ir::{
    BlockKind, BlockRef, Builtin, Callee, InstanceKind, MainPackage, PackageArg, ParamDef,
    SharedVar, StmtKind, Type, VarKind,
};

/// One parameter of an architecture's package.
#[derive(Debug)]
pub struct ArchParam {
    /// Parameter name in the bundled declaration.
    pub name: &'static str,
    /// Parser or control.
    pub kind: BlockKind,
    /// Which pipe (index into [`ArchSpec::pipes`]).
    pub pipe: usize,
}

/// An architecture the compiler targets.
#[derive(Debug)]
pub struct ArchSpec {
    /// Package name (`V1Switch`).
    pub package: &'static str,
    /// The artifact's architecture tag.
    pub arch: Arch,
    /// Package parameters in order.
    pub params: &'static [ArchParam],
    /// Prefix of each pipe's shared variables (`"ingress."`).
    pub pipes: &'static [&'static str],
}

const fn p(name: &'static str, kind: BlockKind, pipe: usize) -> ArchParam {
    ArchParam { name, kind, pipe }
}

/// Every architecture this compiler targets.
pub static ARCHES: &[ArchSpec] = &[
    ArchSpec {
        package: "V1Switch",
        arch: Arch::V1Model,
        params: &[
            p("p", BlockKind::Parser, 0),
            p("vr", BlockKind::Control, 0),
            p("ig", BlockKind::Control, 0),
            p("eg", BlockKind::Control, 0),
            p("ck", BlockKind::Control, 0),
            p("dep", BlockKind::Control, 0),
        ],
        pipes: &[""],
    },
    ArchSpec {
        package: "NetSparseSwitch",
        arch: Arch::NetSparseSwitch,
        params: &[
            p("ingress_parser", BlockKind::Parser, 0),
            p("ingress", BlockKind::Control, 0),
            p("ingress_deparser", BlockKind::Control, 0),
            p("middle", BlockKind::Control, 1),
            p("egress_parser", BlockKind::Parser, 2),
            p("egress", BlockKind::Control, 2),
            p("egress_deparser", BlockKind::Control, 2),
        ],
        pipes: &["ingress.", "", "egress."],
    },
    ArchSpec {
        package: "NetSparseNic",
        arch: Arch::NetSparseNic,
        params: &[
            p("host_to_net", BlockKind::Control, 0),
            p("net_to_host", BlockKind::Control, 1),
        ],
        pipes: &["h2n.", "n2h."],
    },
    ArchSpec {
        package: "SpinNic",
        arch: Arch::SpinNic,
        params: &[
            p("header_handler", BlockKind::Control, 0),
            p("payload_handler", BlockKind::Control, 0),
            p("completion_handler", BlockKind::Control, 0),
        ],
        pipes: &["spin."],
    },
    // PSA: the blocks of the two pipeline packages, flattened (see `psa.rs`).
    ArchSpec {
        package: "PSA_Switch",
        arch: Arch::Psa,
        params: &[
            p("ip", BlockKind::Parser, 0),
            p("ig", BlockKind::Control, 0),
            p("id", BlockKind::Control, 0),
            p("ep", BlockKind::Parser, 1),
            p("eg", BlockKind::Control, 1),
            p("ed", BlockKind::Control, 1),
        ],
        pipes: &["ingress.", "egress."],
    },
];

/// The architecture whose package is named `package`.
pub fn arch_spec(package: &str) -> Option<&'static ArchSpec> {
    ARCHES.iter().find(|a| a.package == package)
}

fn kind_word(k: BlockKind) -> &'static str {
    match k {
        BlockKind::Parser => "parser",
        BlockKind::Control => "control",
        BlockKind::Package => "package",
    }
}

impl Checker<'_> {
    pub(super) fn main_decl(&mut self, i: &ast::Instantiation) {
        let ast::TypeRefKind::Named {
            name, dot_prefix, ..
        } = &i.ty.kind
        else {
            self.err(
                codes::MAIN_PACKAGE,
                "`main` must instantiate a package",
                i.ty.span,
            );
            return;
        };
        let Some(sym) = self.resolve(name, *dot_prefix) else {
            return;
        };
        let known: Vec<&str> = ARCHES.iter().map(|a| a.package).collect();
        let Sym::BlockType(pkg_h) = sym else {
            let d = Diagnostic::error(
                codes::MAIN_PACKAGE,
                format!(
                    "`main` must instantiate a package, but `{}` is {}",
                    name.name,
                    sym.describe()
                ),
                name.span,
            )
            .with_hint(format!("this compiler targets: {}", known.join(", ")));
            self.emit(d);
            return;
        };
        let pkg = self.m.block_types[pkg_h].clone();
        let spec = match arch_spec(&pkg.name) {
            Some(s) if pkg.kind == BlockKind::Package => s,
            _ => {
                let d = Diagnostic::error(
                    codes::MAIN_PACKAGE,
                    format!(
                        "`{}` is not an architecture this compiler targets",
                        name.name
                    ),
                    name.span,
                )
                .with_hint(format!(
                    "instantiate one of: {} (from <v1model.p4> / <netsparse.p4> / <spin.p4> / <psa.p4>)",
                    known.join(", ")
                ));
                self.emit(d);
                return;
            }
        };
        // PSA's pipelines are packages themselves: check their blocks.
        let flat: Vec<(ParamDef, ast::Argument)> = if spec.arch == Arch::Psa {
            match self.psa_flatten(i, &pkg) {
                Some(f) => f,
                None => return,
            }
        } else {
            pkg.params
                .iter()
                .cloned()
                .zip(i.args.iter().cloned())
                .collect()
        };
        let flat_params: Vec<&ParamDef> = if spec.arch == Arch::Psa {
            flat.iter().map(|(p, _)| p).collect()
        } else {
            pkg.params.iter().collect()
        };
        // The declaration must be the one the architecture expects.
        let decl_ok = flat_params.len() == spec.params.len()
            && flat_params
                .iter()
                .zip(spec.params)
                .all(|(pp, sp)| match &pp.ty {
                    Type::BlockType(bt, _) => self.m.block_types[*bt].kind == sp.kind,
                    _ => false,
                });
        if !decl_ok {
            let d = Diagnostic::error(
                codes::MAIN_PACKAGE,
                format!("package `{}` is declared differently from the architecture this target implements", pkg.name),
                pkg.span,
            )
            .with_hint("include the bundled declaration instead of writing your own");
            self.emit(d);
            return;
        }
        if spec.arch != Arch::Psa && i.args.len() != pkg.params.len() {
            let d = Diagnostic::error(
                codes::PACKAGE_ARG,
                format!(
                    "`{}` takes {} arguments, {} given",
                    pkg.name,
                    pkg.params.len(),
                    i.args.len()
                ),
                i.span,
            )
            .with_note(format!(
                "parameters: {}",
                pkg.params
                    .iter()
                    .map(|p| p.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
            self.emit(d);
            return;
        }
        let mut subst = Subst::new();
        let mut first_binding: Vec<(String, String)> = Vec::new(); // type var → block that bound it
        let mut shared: Vec<SharedVar> = Vec::new();
        let mut args: Vec<PackageArg> = Vec::new();
        let mut ok = true;
        for ((pp, arg), sp) in flat.iter().zip(spec.params) {
            let Some((block, block_name)) = self.package_arg_block(&arg.value) else {
                ok = false;
                continue;
            };
            if self.broken_blocks.contains(&block) {
                // Its parameters already have errors.
                ok = false;
                continue;
            }
            let Type::BlockType(bt_h, targs) = &pp.ty else {
                ok = false;
                continue;
            };
            let bt = self.m.block_types[*bt_h].clone();
            let (actual_kind, params) = match block {
                BlockRef::Parser(h) => (BlockKind::Parser, self.m.parsers[h].params.clone()),
                BlockRef::Control(h) => (BlockKind::Control, self.m.controls[h].params.clone()),
            };
            if actual_kind != sp.kind {
                let d = Diagnostic::error(
                    codes::PACKAGE_ARG,
                    format!(
                        "parameter `{}` of `{}` expects a {}, but `{block_name}` is a {}",
                        pp.name,
                        pkg.name,
                        kind_word(sp.kind),
                        kind_word(actual_kind)
                    ),
                    arg.span,
                );
                self.emit(d);
                ok = false;
                continue;
            }
            // The block type's parameters in terms of the package's type variables.
            let inner: Subst = bt
                .type_params
                .iter()
                .cloned()
                .zip(targs.iter().cloned())
                .collect();
            if params.len() != bt.params.len() {
                let d = Diagnostic::error(
                    codes::PACKAGE_ARG,
                    format!(
                        "`{block_name}` has {} parameter(s), but `{}` (type `{}`) needs {}",
                        params.len(),
                        pp.name,
                        bt.name,
                        bt.params.len()
                    ),
                    arg.span,
                )
                .with_note(format!(
                    "expected: {}",
                    bt.params
                        .iter()
                        .map(|p| format!(
                            "{}{} {}",
                            dir_str(p.direction),
                            self.m.type_name(&subst_apply(&p.ty, &inner)),
                            p.name
                        ))
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
                self.emit(d);
                ok = false;
                continue;
            }
            let mut bindings = Vec::new();
            for (bp, uv) in bt.params.iter().zip(&params) {
                let pattern = subst_apply(&bp.ty, &inner);
                let var = self.m.vars[*uv].clone();
                let udir = match var.kind {
                    VarKind::Param(d) => d,
                    VarKind::Local => None,
                };
                // A block may take as `in` what the architecture passes
                // `inout` (p4c's early v1model declared VerifyChecksum's
                // headers `in`): it only reads the value, so nothing changes.
                let narrower =
                    udir == Some(Direction::In) && bp.direction == Some(Direction::InOut);
                if udir != bp.direction && !narrower {
                    let d = Diagnostic::error(
                        codes::PACKAGE_ARG,
                        format!(
                            "parameter `{}` of `{block_name}` is `{}`, but `{}` requires `{}`",
                            var.name,
                            dir_str(udir).trim(),
                            bt.name,
                            dir_str(bp.direction).trim()
                        ),
                        var.span,
                    )
                    .with_secondary(arg.span, format!("passed as `{}` here", pp.name));
                    self.emit(d);
                    ok = false;
                    continue;
                }
                let before = subst_apply(&pattern, &subst);
                if !unify(&pattern, &var.ty, &mut subst) {
                    let mut d = Diagnostic::error(
                        codes::PACKAGE_ARG,
                        format!(
                            "parameter `{}` of `{block_name}` has type `{}`, but `{}` requires `{}`",
                            var.name,
                            self.m.type_name(&var.ty),
                            pkg.name,
                            self.m.type_name(&before)
                        ),
                        var.span,
                    )
                    .with_secondary(arg.span, format!("passed as `{}` here", pp.name));
                    if let Type::Var(v) = &pattern {
                        if let Some((_, who)) = first_binding.iter().find(|(n, _)| n == v) {
                            d = d.with_note(format!(
                                "`{v}` is `{}` because of `{who}`",
                                self.m.type_name(&before)
                            ));
                        }
                    }
                    self.emit(d);
                    ok = false;
                    continue;
                }
                if let Type::Var(v) = &pattern {
                    if !first_binding.iter().any(|(n, _)| n == v) {
                        first_binding.push((v.clone(), block_name.clone()));
                    }
                }
                // Shared storage: packets are not variables.
                if matches!(var.ty, Type::Extern(..)) {
                    bindings.push(None);
                    continue;
                }
                let key = match &pattern {
                    Type::Var(v) => v.clone(),
                    other => self.m.type_name(other),
                };
                let idx = match shared
                    .iter()
                    .position(|s| s.pipe == sp.pipe && s.key == key)
                {
                    Some(i) => i,
                    None => {
                        // Two storages of one pipe may come from parameters
                        // of the same name (PSA's `istd`s): name by type then.
                        let mut name = format!("{}{}", spec.pipes[sp.pipe], var.name);
                        if shared.iter().any(|s| s.name == name) {
                            name = format!("{}{}", spec.pipes[sp.pipe], key);
                        }
                        shared.push(SharedVar {
                            name,
                            ty: var.ty.clone(),
                            pipe: sp.pipe,
                            key,
                        });
                        shared.len() - 1
                    }
                };
                bindings.push(Some(idx));
            }
            args.push(PackageArg {
                param: pp.name.clone(),
                block,
                instance_name: block_name,
                bindings,
                span: arg.span,
            });
        }
        if !ok {
            return;
        }
        // Instance names: the declaration's name, or the parameter's if passed twice.
        let names: Vec<String> = args.iter().map(|a| a.instance_name.clone()).collect();
        for a in &mut args {
            if names.iter().filter(|n| **n == a.instance_name).count() > 1 {
                a.instance_name = a.param.clone();
            }
        }
        self.m.main = Some(MainPackage {
            arch: spec.arch,
            package: pkg.name.clone(),
            args,
            shared,
            span: i.span,
        });
    }

    /// The parser or control passed as a package argument.
    fn package_arg_block(&mut self, e: &ast::Expr) -> Option<(BlockRef, String)> {
        let bad = |me: &mut Self, span: Span| {
            let d = Diagnostic::error(
                codes::PACKAGE_ARG,
                "a package argument must be a parser or control instance such as `MyIngress()`",
                span,
            );
            me.emit(d);
            None
        };
        match &e.kind {
            ast::ExprKind::Call { callee, args, .. } => {
                let ast::ExprKind::Name { name, dot_prefix } = &callee.kind else {
                    return bad(self, e.span);
                };
                if !args.is_empty() {
                    self.err(
                        codes::UNSUPPORTED,
                        "constructor arguments are not supported here",
                        e.span,
                    );
                    return None;
                }
                match self.resolve(name, *dot_prefix)? {
                    Sym::Parser(h) => Some((BlockRef::Parser(h), name.name.clone())),
                    Sym::Control(h) => Some((BlockRef::Control(h), name.name.clone())),
                    other => {
                        let d = Diagnostic::error(
                            codes::PACKAGE_ARG,
                            format!(
                                "`{}` is {}, not a parser or control",
                                name.name,
                                other.describe()
                            ),
                            e.span,
                        );
                        self.emit(d);
                        None
                    }
                }
            }
            ast::ExprKind::Name { name, dot_prefix } => match self.resolve(name, *dot_prefix)? {
                Sym::Instance(i) => match self.m.instances[i].kind {
                    InstanceKind::Parser(h) => Some((BlockRef::Parser(h), name.name.clone())),
                    InstanceKind::Control(h) => Some((BlockRef::Control(h), name.name.clone())),
                    InstanceKind::Extern { .. } => bad(self, e.span),
                },
                Sym::Parser(_) | Sym::Control(_) => {
                    let d = Diagnostic::error(
                        codes::PACKAGE_ARG,
                        format!(
                            "`{}` is a declaration; pass an instance: `{}()`",
                            name.name, name.name
                        ),
                        e.span,
                    );
                    self.emit(d);
                    None
                }
                _ => bad(self, e.span),
            },
            _ => bad(self, e.span),
        }
    }

    /// Architecture-dependent rules, once `main` is known.
    pub(super) fn arch_checks(&mut self) {
        let Some(main) = self.m.main.clone() else {
            return;
        };
        let uses = std::mem::take(&mut self.builtin_uses);
        for u in &uses {
            if u.op.available_in(main.arch) {
                continue;
            }
            let name = builtin_label(u.op);
            let d = if main.arch == Arch::SpinNic && (u.op.is_rig() || u.op.is_netsparse()) {
                let what = if u.op.is_rig() {
                    "a RIG extern of the NetSparse SmartNIC"
                } else {
                    "a NetSparse switch construct"
                };
                Diagnostic::error(
                    codes::NS_IN_SPIN,
                    format!("`{name}` is {what}; a sPIN NIC (`SpinNic`) does not provide it"),
                    u.span,
                )
                .with_note("sPIN handlers run per message and per packet on HPUs; there are no PRs, RIG units or Property Cache")
                .with_hint("use the <spin.p4> externs (DmaToHost, HostFetchAdd, PutFromDevice, ...) or target `NetSparseNic`/`NetSparseSwitch` from <netsparse.p4>")
            } else if let Builtin::Spin(_) = u.op {
                Diagnostic::error(
                    codes::SPIN_PLACEMENT,
                    format!(
                        "`{name}` is a sPIN extern, but this program targets `{}`",
                        main.package
                    ),
                    u.span,
                )
                .with_hint("sPIN externs need `SpinNic(header_handler, payload_handler, completion_handler) main;` from <spin.p4>")
            } else if let Builtin::Coll(_) = u.op {
                Diagnostic::error(
                    codes::RIG_OUTSIDE_NIC,
                    format!(
                        "`{name}` is a collective extern of <collective.p4>, which only the NetSparse SmartNIC and the NetSparse switch's middle pipes provide, but this program targets `{}`",
                        main.package
                    ),
                    u.span,
                )
                .with_hint("collective externs need `NetSparseNic(host_to_net, net_to_host) main;` (see programs/omniccl_agg.p4) or a `NetSparseSwitch` middle control (see programs/omniccl_switch.p4)")
            } else if u.op.is_rig() {
                Diagnostic::error(
                    codes::RIG_OUTSIDE_NIC,
                    format!(
                        "`{name}` is a RIG extern of the NetSparse SmartNIC, but this program targets `{}`",
                        main.package
                    ),
                    u.span,
                )
                .with_hint("RIG externs need `NetSparseNic(host_to_net, net_to_host) main;` from <netsparse.p4>")
            } else if u.op.is_netsparse() && main.arch == Arch::NetSparseNic {
                Diagnostic::error(
                    codes::SWITCH_IN_NIC,
                    format!("`{name}` uses the Property Cache of a NetSparse switch; a SmartNIC has none"),
                    u.span,
                )
                .with_hint("filter and coalesce at the NIC with IdxFilterTest / PendingContains, or cache in the ToR program")
            } else if u.op.is_netsparse() {
                Diagnostic::error(
                    codes::NS_IN_V1MODEL,
                    format!(
                        "`{name}` is a NetSparse construct, but this program targets `{}`",
                        main.package
                    ),
                    u.span,
                )
                .with_hint(
                    "NetSparse constructs need `NetSparseSwitch(...) main;` from <netsparse.p4>",
                )
            } else {
                Diagnostic::error(
                    codes::V1MODEL_IN_NS,
                    format!(
                        "`{name}` is a v1model extern; this program targets `{}`",
                        main.package
                    ),
                    u.span,
                )
                .with_hint(match (u.op, main.arch) {
                    (Builtin::MarkToDrop, Arch::NetSparseNic) => {
                        "set `md.drop = true;` to drop a PR on the NetSparse SmartNIC"
                    }
                    (Builtin::MarkToDrop, Arch::SpinNic) => {
                        "set `md.rc = SPIN_DROP;` to drop a message or packet on a sPIN NIC"
                    }
                    (Builtin::MarkToDrop, Arch::Psa) => {
                        "call `ingress_drop(ostd);` / `egress_drop(ostd);` (or set `ostd.drop = true;`) to drop a packet in PSA"
                    }
                    (Builtin::MarkToDrop, _) => {
                        "set `md.drop = true;` to drop a packet on the NetSparse switch"
                    }
                    (_, Arch::NetSparseNic) => "the NetSparse SmartNIC does not provide it",
                    (_, Arch::SpinNic) => "a sPIN NIC does not provide it",
                    (_, Arch::Psa) => {
                        "PSA programs use the <psa.p4> externs and the output metadata (ostd.clone, ostd.resubmit, ...)"
                    }
                    _ => "the NetSparse switch does not provide it",
                })
            };
            self.emit(d);
        }
        if main.arch == Arch::NetSparseNic {
            self.nic_checks(&main, &uses);
            return;
        }
        if main.arch == Arch::SpinNic {
            self.spin_checks(&main, &uses);
            return;
        }
        if main.arch != Arch::NetSparseSwitch {
            return;
        }
        let Some(middle_arg) = main.args.iter().find(|a| a.param == "middle") else {
            return;
        };
        let BlockRef::Control(middle) = middle_arg.block else {
            return;
        };
        for u in &uses {
            if !matches!(u.op, Builtin::Deconcatenate | Builtin::Concatenate) {
                continue;
            }
            let name = builtin_label(u.op);
            if u.control != Some(middle) || u.in_action {
                let d = Diagnostic::error(
                    codes::NS_OUTSIDE_MIDDLE,
                    format!("`{name}` may only be used in the middle control"),
                    u.span,
                )
                .with_note(format!(
                    "the middle control is `{}`, passed as `middle` to NetSparseSwitch",
                    self.m.controls[middle].name
                ))
                .with_hint("move it to the top level of the middle control's apply block");
                self.emit(d);
            } else if !u.top_level {
                let d = Diagnostic::error(
                    codes::NS_STRUCTURE,
                    format!(
                        "`{name}` must be at the top level of the middle control's apply block"
                    ),
                    u.span,
                )
                .with_hint("it cannot be inside an `if`, `switch` or nested block");
                self.emit(d);
            }
        }
        // Order: ... Deconcatenate ... Concatenate (last).
        let stmts = self.m.controls[middle].apply.stmts.clone();
        let find = |op: Builtin| -> Vec<(usize, Span)> {
            stmts
                .iter()
                .enumerate()
                .filter_map(|(i, s)| match &s.kind {
                    StmtKind::Call(c) => match &c.callee {
                        Callee::Builtin { op: o, .. } if *o == op => Some((i, s.span)),
                        _ => None,
                    },
                    _ => None,
                })
                .collect()
        };
        let dec = find(Builtin::Deconcatenate);
        let con = find(Builtin::Concatenate);
        let cname = self.m.controls[middle].name.clone();
        for (list, name) in [(&dec, "Deconcatenate"), (&con, "Concatenate")] {
            if list.is_empty() {
                let d = Diagnostic::error(
                    codes::NS_STRUCTURE,
                    format!("the middle control `{cname}` never calls `{name}`"),
                    middle_arg.span,
                )
                .with_hint(
                    "write `Deconcatenate(pr, md);` ... `Concatenate(pr, md);` in its apply block",
                );
                self.emit(d);
            }
            for (_, span) in list.iter().skip(1) {
                let d = Diagnostic::error(
                    codes::NS_STRUCTURE,
                    format!("`{name}` may appear only once in the middle control"),
                    *span,
                )
                .with_secondary(list[0].1, "first call");
                self.emit(d);
            }
        }
        if let (Some(&(di, dspan)), Some(&(ci, cspan))) = (dec.first(), con.first()) {
            if ci < di {
                let d = Diagnostic::error(
                    codes::NS_STRUCTURE,
                    "`Concatenate` comes before `Deconcatenate`",
                    cspan,
                )
                .with_secondary(dspan, "Deconcatenate is here");
                self.emit(d);
            } else if ci + 1 != stmts.len() {
                let d = Diagnostic::error(
                    codes::NS_STRUCTURE,
                    "`Concatenate` must be the last statement of the middle control",
                    stmts[ci + 1].span,
                )
                .with_secondary(cspan, "Concatenate is here")
                .with_hint("per-PR work goes between Deconcatenate and Concatenate");
                self.emit(d);
            }
        }
    }
}

impl Checker<'_> {
    /// The shape of the two NIC path controls: host_to_net has no
    /// Deconcatenate and ends with Concatenate; net_to_host calls
    /// Deconcatenate once at the top level and ends with Concatenate.
    fn nic_checks(&mut self, main: &crate::ir::MainPackage, uses: &[super::BuiltinUse]) {
        let path = |param: &str| {
            main.args
                .iter()
                .find(|a| a.param == param)
                .and_then(|a| match a.block {
                    BlockRef::Control(c) => Some((c, a.span)),
                    BlockRef::Parser(_) => None,
                })
        };
        let (Some((h2n, h2n_span)), Some((n2h, n2h_span))) =
            (path("host_to_net"), path("net_to_host"))
        else {
            return;
        };
        if h2n == n2h {
            let d = Diagnostic::error(
                codes::NIC_STRUCTURE,
                "the same control is passed as host_to_net and as net_to_host",
                n2h_span,
            )
            .with_secondary(h2n_span, "also passed here")
            .with_hint("host_to_net runs once per idx (no Deconcatenate); net_to_host once per received packet: write two controls");
            self.emit(d);
            return;
        }
        for u in uses {
            if !matches!(u.op, Builtin::Deconcatenate | Builtin::Concatenate) {
                continue;
            }
            let name = builtin_label(u.op);
            let in_path = u.control == Some(h2n) || u.control == Some(n2h);
            if !in_path || u.in_action {
                let d = Diagnostic::error(
                    codes::NIC_STRUCTURE,
                    format!("`{name}` may only be used in the NIC's host_to_net and net_to_host controls"),
                    u.span,
                )
                .with_note(format!(
                    "the path controls are `{}` (host_to_net) and `{}` (net_to_host)",
                    self.m.controls[h2n].name, self.m.controls[n2h].name
                ))
                .with_hint("move it to the top level of a path control's apply block");
                self.emit(d);
            } else if !u.top_level {
                let d = Diagnostic::error(
                    codes::NIC_STRUCTURE,
                    format!("`{name}` must be at the top level of the path control's apply block"),
                    u.span,
                )
                .with_hint("it cannot be inside an `if`, `switch` or nested block");
                self.emit(d);
            } else if u.op == Builtin::Deconcatenate && u.control == Some(h2n) {
                let d = Diagnostic::error(
                    codes::NIC_STRUCTURE,
                    "host_to_net has no `Deconcatenate`: it already runs once per idx",
                    u.span,
                )
                .with_note("client RIG units run host_to_net for every idx they read; `pr` and `md` describe that idx's read PR")
                .with_hint("remove this call; end the control with `Concatenate(pr, md);`");
                self.emit(d);
            }
        }
        for (c, arg_span, want_dec) in [(h2n, h2n_span, false), (n2h, n2h_span, true)] {
            let stmts = self.m.controls[c].apply.stmts.clone();
            let find = |op: Builtin| -> Vec<(usize, Span)> {
                stmts
                    .iter()
                    .enumerate()
                    .filter_map(|(i, s)| match &s.kind {
                        StmtKind::Call(call) => match &call.callee {
                            Callee::Builtin { op: o, .. } if *o == op => Some((i, s.span)),
                            _ => None,
                        },
                        _ => None,
                    })
                    .collect()
            };
            let dec = find(Builtin::Deconcatenate);
            let con = find(Builtin::Concatenate);
            let cname = self.m.controls[c].name.clone();
            let mut wanted = vec![(&con, "Concatenate")];
            if want_dec {
                wanted.push((&dec, "Deconcatenate"));
            }
            for (list, name) in wanted {
                if list.is_empty() {
                    let d = Diagnostic::error(
                        codes::NIC_STRUCTURE,
                        format!("the NIC path control `{cname}` never calls `{name}`"),
                        arg_span,
                    )
                    .with_hint(if want_dec {
                        "write `Deconcatenate(pr, md);` ... `Concatenate(pr, md);` in net_to_host's apply block"
                    } else {
                        "end host_to_net's apply block with `Concatenate(pr, md);`"
                    });
                    self.emit(d);
                }
                for (_, span) in list.iter().skip(1) {
                    let d = Diagnostic::error(
                        codes::NIC_STRUCTURE,
                        format!("`{name}` may appear only once in `{cname}`"),
                        *span,
                    )
                    .with_secondary(list[0].1, "first call");
                    self.emit(d);
                }
            }
            let Some(&(ci, cspan)) = con.first() else {
                continue;
            };
            if let Some(&(di, dspan)) = dec.first().filter(|_| want_dec) {
                if ci < di {
                    let d = Diagnostic::error(
                        codes::NIC_STRUCTURE,
                        "`Concatenate` comes before `Deconcatenate`",
                        cspan,
                    )
                    .with_secondary(dspan, "Deconcatenate is here");
                    self.emit(d);
                    continue;
                }
            }
            if ci + 1 != stmts.len() {
                let d = Diagnostic::error(
                    codes::NIC_STRUCTURE,
                    format!("`Concatenate` must be the last statement of `{cname}`"),
                    stmts[ci + 1].span,
                )
                .with_secondary(cspan, "Concatenate is here")
                .with_hint("per-PR work goes before Concatenate");
                self.emit(d);
            }
        }
    }
}

impl Checker<'_> {
    /// sPIN rules: three distinct handler controls; externs that work on
    /// the current packet's payload only where there is one (the payload
    /// handler, or a control it applies).
    fn spin_checks(&mut self, main: &crate::ir::MainPackage, uses: &[super::BuiltinUse]) {
        let handler = |param: &str| {
            main.args
                .iter()
                .find(|a| a.param == param)
                .and_then(|a| match a.block {
                    BlockRef::Control(c) => Some((c, a.span)),
                    BlockRef::Parser(_) => None,
                })
        };
        let (Some((hh, _)), Some((ph, ph_span)), Some((ch, _))) = (
            handler("header_handler"),
            handler("payload_handler"),
            handler("completion_handler"),
        ) else {
            return;
        };
        if hh == ph || ph == ch || hh == ch {
            let d = Diagnostic::error(
                codes::SPIN_PLACEMENT,
                "the same control is passed as two sPIN handlers",
                ph_span,
            )
            .with_hint("write one control per handler: header (once per message), payload (once per packet), completion (once per message, last)");
            self.emit(d);
            return;
        }
        for u in uses {
            let Builtin::Spin(op) = u.op else {
                continue;
            };
            if !op.needs_payload() {
                continue;
            }
            let which = if u.control == Some(hh) {
                "header"
            } else if u.control == Some(ch) {
                "completion"
            } else {
                continue;
            };
            let d = Diagnostic::error(
                codes::SPIN_PLACEMENT,
                format!(
                    "`{}` works on the current packet's payload, but the {which} handler has none",
                    op.name()
                ),
                u.span,
            )
            .with_note(format!(
                "the payload handler is `{}`; it runs once per packet",
                self.m.controls[ph].name
            ))
            .with_hint(
                "move this call to the payload handler (or use PutFromHost / HostFetchAdd here)",
            );
            self.emit(d);
        }
    }
}

fn dir_str(d: Option<ast::Direction>) -> &'static str {
    match d {
        Some(ast::Direction::In) => "in ",
        Some(ast::Direction::Out) => "out ",
        Some(ast::Direction::InOut) => "inout ",
        None => "",
    }
}

/// The source name of a builtin, for messages.
pub fn builtin_label(op: Builtin) -> &'static str {
    use Builtin::*;
    match op {
        Extract | ExtractVarbit => "extract",
        Lookahead => "lookahead",
        Advance => "advance",
        Emit => "emit",
        Verify => "verify",
        SetValid => "setValid",
        SetInvalid => "setInvalid",
        PushFront => "push_front",
        PopFront => "pop_front",
        MarkToDrop => "mark_to_drop",
        Hash => "hash",
        VerifyChecksum(false) => "verify_checksum",
        VerifyChecksum(true) => "verify_checksum_with_payload",
        UpdateChecksum(false) => "update_checksum",
        UpdateChecksum(true) => "update_checksum_with_payload",
        Random => "random",
        Digest => "digest",
        LogMsg => "log_msg",
        Clone => "clone",
        ClonePreserving => "clone_preserving_field_list",
        Resubmit => "resubmit_preserving_field_list",
        Recirculate => "recirculate_preserving_field_list",
        Truncate => "truncate",
        Assert => "assert",
        Assume => "assume",
        RegisterReadValue | RegisterRead => "read",
        RegisterWrite => "write",
        Count | CountDirect => "count",
        ExecuteMeter => "execute_meter",
        MeterExecute | DirectMeterExecute => "execute",
        ReadDirectMeter => "read",
        Deconcatenate => "Deconcatenate",
        Concatenate => "Concatenate",
        Lookup => "Lookup",
        Insert => "Insert",
        IdxFilterTest => "IdxFilterTest",
        IdxFilterSet => "IdxFilterSet",
        PendingContains => "PendingContains",
        PendingInsert => "PendingInsert",
        PendingComplete => "PendingComplete",
        HostRead => "HostRead",
        HostWrite => "HostWrite",
        HashGet => "get_hash",
        ChecksumClear => "clear",
        ChecksumAdd => "add",
        ChecksumSubtract => "subtract",
        ChecksumGet => "get",
        ChecksumGetState => "get_state",
        ChecksumSetState => "set_state",
        RandomRead => "read",
        DigestPack => "pack",
        Spin(op) => op.name(),
        Coll(op) => op.name(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arch_table() {
        assert_eq!(arch_spec("V1Switch").map(|a| a.arch), Some(Arch::V1Model));
        assert_eq!(
            arch_spec("NetSparseSwitch").map(|a| a.params.len()),
            Some(7)
        );
        assert_eq!(
            arch_spec("NetSparseNic").map(|a| (a.arch, a.params.len())),
            Some((Arch::NetSparseNic, 2))
        );
        assert_eq!(
            arch_spec("SpinNic").map(|a| (a.arch, a.params.len())),
            Some((Arch::SpinNic, 3))
        );
        assert_eq!(
            arch_spec("PSA_Switch").map(|a| (a.arch, a.params.len(), a.pipes.len())),
            Some((Arch::Psa, 6, 2))
        );
        assert!(arch_spec("PSA").is_none());
        for a in ARCHES {
            assert!(a.params.iter().all(|p| p.pipe < a.pipes.len()));
        }
    }
}
