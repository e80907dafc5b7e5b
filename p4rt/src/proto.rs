//! The generated P4Runtime messages and gRPC stubs (see `build.rs`).
#![allow(missing_docs, clippy::all, clippy::pedantic)]

/// `google.rpc`: the rich error status.
pub mod google {
    /// `google.rpc`.
    pub mod rpc {
        tonic::include_proto!("google.rpc");
    }
}

/// `p4.*`: P4Info and P4Runtime.
pub mod p4 {
    /// `p4.v1`: the P4Runtime service.
    pub mod v1 {
        tonic::include_proto!("p4.v1");
    }
    /// `p4.config.v1`: P4Info.
    pub mod config {
        /// `p4.config.v1`.
        pub mod v1 {
            tonic::include_proto!("p4.config.v1");
        }
    }
}

pub use p4::config::v1 as cfg;
pub use p4::v1;
