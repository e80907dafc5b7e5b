//! PSA's nested packages. `PSA_Switch` takes two pipeline packages and two
//! fixed-function externs:
//!
//! ```p4
//! IngressPipeline(MyIP(), MyIg(), MyID()) ip;
//! EgressPipeline(MyEP(), MyEg(), MyED()) ep;
//! PSA_Switch(ip, PacketReplicationEngine(), ep, BufferingQueueingEngine()) main;
//! ```
//!
//! [`Checker::psa_flatten`] turns that into the six blocks the architecture
//! table lists (`ip ig id ep eg ed`), each parameter's type written in
//! `PSA_Switch`'s type variables, so the generic package check binds `NM`,
//! `CI2EM`, `RECIRCM`, ... once for both pipelines. Pipeline packages may
//! be named instances (above) or written inline in `main`'s arguments.

use super::types::{subst_apply, Subst};
use super::{Checker, Sym};
use crate::ast::{self, Span};
use crate::codes;
use crate::diag::Diagnostic;
use crate::ir::{BlockKind, BlockTypeDef, ParamDef, Type};

impl Checker<'_> {
    /// Whether `ty` names a package type (a top-level instantiation of it
    /// is a pipeline package for `main`, not an object).
    pub(super) fn names_package(&self, ty: &ast::TypeRef) -> bool {
        let ast::TypeRefKind::Named {
            name, dot_prefix, ..
        } = &ty.kind
        else {
            return false;
        };
        matches!(
            self.lookup(&name.name, *dot_prefix),
            Some(Sym::BlockType(h)) if self.m.block_types[*h].kind == BlockKind::Package
        )
    }

    /// `main`'s arguments flattened to the pipelines' blocks: each block
    /// parameter (typed in `pkg`'s type variables) with its argument.
    pub(super) fn psa_flatten(
        &mut self,
        i: &ast::Instantiation,
        pkg: &BlockTypeDef,
    ) -> Option<Vec<(ParamDef, ast::Argument)>> {
        if i.args.len() != pkg.params.len() {
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
            .with_note(
                "PSA_Switch(IngressPipeline(...), PacketReplicationEngine(), \
                 EgressPipeline(...), BufferingQueueingEngine())",
            );
            self.emit(d);
            return None;
        }
        let mut out = Vec::new();
        let mut ok = true;
        for (pp, arg) in pkg.params.iter().zip(&i.args) {
            match &pp.ty {
                Type::BlockType(bt, targs) => {
                    let inner = self.m.block_types[*bt].clone();
                    let Some((ty_name, args, span)) = self.pipeline_arg(&arg.value) else {
                        let d = Diagnostic::error(
                            codes::PACKAGE_ARG,
                            format!(
                                "parameter `{}` of `{}` expects an `{}` package",
                                pp.name, pkg.name, inner.name
                            ),
                            arg.span,
                        )
                        .with_hint(format!(
                            "write `{}(parser(), control(), deparser())` here, or declare it \
                             as `{}(...) name;` and pass `name`",
                            inner.name, inner.name
                        ));
                        self.emit(d);
                        ok = false;
                        continue;
                    };
                    if ty_name != inner.name {
                        let d = Diagnostic::error(
                            codes::PACKAGE_ARG,
                            format!(
                                "parameter `{}` of `{}` expects an `{}`, but this is an `{ty_name}`",
                                pp.name, pkg.name, inner.name
                            ),
                            span,
                        );
                        self.emit(d);
                        ok = false;
                        continue;
                    }
                    if args.len() != inner.params.len() {
                        let d = Diagnostic::error(
                            codes::PACKAGE_ARG,
                            format!(
                                "`{}` takes {} arguments, {} given",
                                inner.name,
                                inner.params.len(),
                                args.len()
                            ),
                            span,
                        )
                        .with_note(format!(
                            "parameters: {}",
                            inner
                                .params
                                .iter()
                                .map(|p| p.name.as_str())
                                .collect::<Vec<_>>()
                                .join(", ")
                        ));
                        self.emit(d);
                        ok = false;
                        continue;
                    }
                    let subst: Subst = inner
                        .type_params
                        .iter()
                        .cloned()
                        .zip(targs.iter().cloned())
                        .collect();
                    for (ip, a) in inner.params.iter().zip(args) {
                        let mut p = ip.clone();
                        p.ty = subst_apply(&ip.ty, &subst);
                        out.push((p, a));
                    }
                }
                Type::Extern(def, _) => {
                    let want = self.m.extern_objects[*def].name.clone();
                    let fine = match &arg.value.kind {
                        ast::ExprKind::Call { callee, args, .. } => {
                            args.is_empty()
                                && matches!(&callee.kind,
                                    ast::ExprKind::Name { name, .. } if name.name == want)
                        }
                        _ => false,
                    };
                    if !fine {
                        let d = Diagnostic::error(
                            codes::PACKAGE_ARG,
                            format!(
                                "parameter `{}` of `{}` must be `{want}()`",
                                pp.name, pkg.name
                            ),
                            arg.span,
                        )
                        .with_hint("the replication and queueing engines are fixed-function: pass a fresh instance");
                        self.emit(d);
                        ok = false;
                    }
                }
                _ => ok = false,
            }
        }
        ok.then_some(out)
    }

    /// A pipeline package argument: `IngressPipeline(a(), b(), c())` inline,
    /// or the name of a top-level package instance. Returns the package
    /// type's name, its arguments and a span.
    fn pipeline_arg(&self, e: &ast::Expr) -> Option<(String, Vec<ast::Argument>, Span)> {
        match &e.kind {
            ast::ExprKind::Call { callee, args, .. } => match &callee.kind {
                ast::ExprKind::Name { name, .. } => Some((name.name.clone(), args.clone(), e.span)),
                _ => None,
            },
            ast::ExprKind::Name { name, .. } => {
                let inst = self.pkg_insts.iter().find(|i| i.name.name == name.name)?;
                let ast::TypeRefKind::Named { name: tn, .. } = &inst.ty.kind else {
                    return None;
                };
                Some((tn.name.clone(), inst.args.clone(), e.span))
            }
            _ => None,
        }
    }
}
