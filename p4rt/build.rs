//! Compiles the P4Runtime `.proto` files under `proto/` (written here from
//! the P4Runtime specification) with a pure-Rust protobuf compiler
//! (`protox`), so no system `protoc` is needed, then generates the prost
//! messages and the tonic client and server.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let files = [
        "proto/google/rpc/status.proto",
        "proto/p4/config/v1/p4info.proto",
        "proto/p4/v1/p4runtime.proto",
    ];
    for f in files {
        println!("cargo:rerun-if-changed={f}");
    }
    let fds = protox::compile(files, ["proto"])?;
    tonic_prost_build::configure()
        .build_client(true)
        .build_server(true)
        // Deterministic order for the text P4Info.
        .btree_map(".p4.config.v1.P4TypeInfo.structs")
        .compile_fds(fds)?;
    Ok(())
}
