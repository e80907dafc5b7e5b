//! Back ends: the pipeline artifact ([`artifact`]) and Graphviz dot ([`dot`]).

pub mod artifact;
pub mod dot;
