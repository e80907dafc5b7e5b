//! The NetSparse compiler: a P4_16-style language with NetSparse extensions,
//! compiled to the pipeline artifact that the switch and the NIC run.
//!
//! Stages (naga style): `front` (preprocessor, pest grammar → [`ast`]) →
//! `check` (names, types, directions → IR) → `back` (pipeline artifact,
//! Graphviz dot). Every error is a [`diag::Diagnostic`] with a code.
#![warn(missing_docs)]

pub mod ast;
pub mod diag;
pub mod source;
