//! The P4Runtime gRPC server of a running switch: the `p4.v1.P4Runtime`
//! service over a [`Poster`] into the datapath's [`Mailbox`](crate::mailbox::Mailbox).
//! This file owns start-up, the pipeline (P4Info, device config, cookie),
//! the `StreamChannel` (arbitration per role is `arbitration`'s: primary
//! = highest election id in the role; backups are told ALREADY_EXISTS,
//! their writes get PERMISSION_DENIED), and
//! `Set`/`GetForwardingPipelineConfig`; `write` turns Write batches into
//! one datapath job, [`read`] serves Read.
//!
//! NetSparse extension (documented in the README): the Property Cache is
//! a P4Info `Extern` (type id [`PROPERTY_CACHE_TYPE_ID`]); a Write MODIFY of
//! an `ExternEntry` of that type invalidates it. The switch counters are
//! read as an `ExternEntry` of type [`STATS_TYPE_ID`] (instance 0) whose
//! `entry` is an `Any` with type URL [`STATS_TYPE_URL`] carrying the
//! `--stats-json` document as UTF-8 JSON.

mod arbitration;
mod atomic;
pub mod digest;
pub mod read;
pub mod write;

use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use netsparse_externs::artifact::Artifact;
use prost::Message as _;
use tokio_stream::wrappers::ReceiverStream;
use tokio_stream::{Stream, StreamExt as _};
use tonic::{Request, Response, Status};

use crate::mailbox::Poster;
use crate::p4info::{self, ControllerHeader, Schema};
use crate::packetio::{self, CpuPortCounters, PacketInQueue};
use crate::proto::google::rpc;
use crate::proto::v1::{self, p4_runtime_server::P4Runtime};
use crate::proto::{cfg, v1::p4_runtime_server::P4RuntimeServer};
use crate::target::Target;

pub use crate::p4info::PROPERTY_CACHE_TYPE_ID;

/// `extern_type_id` of the NetSparse statistics pseudo-extern.
pub const STATS_TYPE_ID: u32 = 0x82;
/// Type URL of the statistics document in a Read answer.
pub const STATS_TYPE_URL: &str = "type.googleapis.com/netsparse.StatsJson";
/// The P4Runtime version this server implements.
pub const API_VERSION: &str = "1.3.0";

/// A controller header's wire layout and the P4Info metadata id of each
/// field.
pub(crate) type ControllerLayout = Arc<(ControllerHeader, Vec<u32>)>;

/// The pipeline the switch runs, as the control plane sees it.
#[derive(Clone)]
pub(crate) struct Pipeline {
    pub schema: Arc<Schema>,
    pub artifact: Arc<Artifact>,
    pub device_config: Vec<u8>,
    pub cookie: Option<u64>,
    /// `@controller_header("packet_in")`, if the program has one.
    pub packet_in: Option<ControllerLayout>,
    /// `@controller_header("packet_out")`, if the program has one.
    pub packet_out: Option<ControllerLayout>,
}

impl Pipeline {
    /// The pipeline of `artifact`, its P4Info built here.
    pub fn of(artifact: Artifact, device_config: Vec<u8>) -> Pipeline {
        let mut p = Pipeline {
            schema: Arc::new(Schema::new(p4info::build(&artifact))),
            artifact: Arc::new(artifact),
            device_config,
            cookie: None,
            packet_in: None,
            packet_out: None,
        };
        p.index_controller_headers();
        p
    }

    /// Use the ids of `info` (a P4Info that describes this program).
    pub fn with_p4info(mut self, info: cfg::P4Info) -> Pipeline {
        self.schema = Arc::new(Schema::new(info));
        self.index_controller_headers();
        self
    }

    /// Match the program's controller headers with the P4Info's
    /// `controller_packet_metadata` (by name; a field the P4Info does not
    /// list keeps its position + 1 as id).
    fn index_controller_headers(&mut self) {
        let info = &self.schema.info;
        let layout = |name: &str| {
            let h = p4info::controller_headers(&self.artifact)
                .into_iter()
                .find(|h| h.name == name)?;
            let meta = info
                .controller_packet_metadata
                .iter()
                .find(|m| m.preamble.as_ref().is_some_and(|p| p.name == name));
            let ids = h
                .fields
                .iter()
                .enumerate()
                .map(|(i, f)| {
                    meta.and_then(|m| m.metadata.iter().find(|x| x.name == f.name))
                        .map_or(i as u32 + 1, |x| x.id)
                })
                .collect();
            Some(Arc::new((h, ids)))
        };
        self.packet_in = layout("packet_in");
        self.packet_out = layout("packet_out");
    }
}

/// A `Uint128` as a number.
pub fn from_uint128(v: &Option<v1::Uint128>) -> Option<u128> {
    v.as_ref()
        .map(|v| (u128::from(v.high) << 64) | u128::from(v.low))
}

/// The server's shared state.
pub(crate) struct Shared<T> {
    pub poster: Poster<T>,
    pub device_id: u64,
    pub pipeline: Mutex<Pipeline>,
    /// A pipeline saved by VERIFY_AND_SAVE, waiting for COMMIT.
    saved: Mutex<Option<Pipeline>>,
    arb: Mutex<arbitration::Arbitration>,
    /// The CPU port's counters, when the datapath has one.
    cpu: Option<Arc<CpuPortCounters>>,
    /// Digest configuration, batching and counters.
    pub digests: Mutex<digest::Digests>,
}

impl<T: Target> Shared<T> {
    pub fn pipeline(&self) -> Pipeline {
        self.pipeline
            .lock()
            .map(|p| p.clone())
            .unwrap_or_else(|e| e.into_inner().clone())
    }

    /// The streams of every role's primary controller.
    pub fn primary_txs(
        &self,
    ) -> Vec<tokio::sync::mpsc::Sender<Result<v1::StreamMessageResponse, Status>>> {
        self.arb.lock().map(|a| a.primaries()).unwrap_or_default()
    }

    fn check_device(&self, device_id: u64) -> Result<(), Status> {
        if device_id != self.device_id {
            return Err(Status::not_found(format!(
                "device_id {device_id}: this switch is device {}",
                self.device_id
            )));
        }
        Ok(())
    }

    /// A request that changes state must come from the primary of its
    /// role (`role`, or the deprecated `role_id`).
    pub fn check_primary(
        &self,
        election: &Option<v1::Uint128>,
        role: &str,
        role_id: u64,
    ) -> Result<(), Status> {
        self.arb
            .lock()
            .map_err(|_| Status::internal("poisoned"))?
            .check_primary(
                from_uint128(election),
                &arbitration::role_of_request(role, role_id),
            )
    }
}

/// A running server.
#[derive(Debug)]
pub struct ServerHandle {
    /// The address it listens on (with the port the system chose for
    /// port 0).
    pub addr: SocketAddr,
}

/// Start the P4Runtime server on `addr` for a datapath reached through
/// `poster`, running `artifact` (whose source, for Get, is
/// `device_config`). The server runs on its own thread with a
/// single-worker tokio runtime until the process exits; once the datapath
/// stops, requests get UNAVAILABLE.
pub fn spawn<T: Target>(
    addr: SocketAddr,
    poster: Poster<T>,
    artifact: Artifact,
    device_config: Vec<u8>,
    device_id: u64,
) -> std::io::Result<ServerHandle> {
    spawn_with_cpu_port(addr, poster, artifact, device_config, device_id, None)
}

/// [`spawn`] for a datapath with a CPU port
/// ([`CpuPort`](crate::packetio::CpuPort)): frames from `packet_in` go to
/// the primary controller as PacketIn, and PacketOut reaches the datapath
/// through [`Target::packet_out`].
pub fn spawn_with_cpu_port<T: Target>(
    addr: SocketAddr,
    poster: Poster<T>,
    artifact: Artifact,
    device_config: Vec<u8>,
    device_id: u64,
    packet_in: Option<PacketInQueue>,
) -> std::io::Result<ServerHandle> {
    let listener = std::net::TcpListener::bind(addr)?;
    listener.set_nonblocking(true)?;
    let bound = listener.local_addr()?;
    let shared = Arc::new(Shared {
        poster,
        device_id,
        pipeline: Mutex::new(Pipeline::of(artifact, device_config)),
        saved: Mutex::new(None),
        arb: Mutex::new(arbitration::Arbitration::default()),
        cpu: packet_in.as_ref().map(|q| Arc::clone(&q.counters)),
        digests: Mutex::new(digest::Digests::default()),
    });
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .thread_name("p4runtime")
        .enable_all()
        .build()?;
    std::thread::Builder::new()
        .name("p4runtime-server".into())
        .spawn(move || {
            rt.block_on(async move {
                let listener = match tokio::net::TcpListener::from_std(listener) {
                    Ok(l) => l,
                    Err(e) => {
                        eprintln!("error: P4Runtime server: {e}");
                        return;
                    }
                };
                if let Some(q) = packet_in {
                    tokio::spawn(forward_packet_in(Arc::clone(&shared), q));
                }
                tokio::spawn(digest::pump(Arc::clone(&shared)));
                let incoming = tokio_stream::wrappers::TcpListenerStream::new(listener);
                let svc = P4RuntimeServer::new(Service { shared })
                    .max_decoding_message_size(64 << 20)
                    .max_encoding_message_size(64 << 20);
                if let Err(e) = tonic::transport::Server::builder()
                    .add_service(svc)
                    .serve_with_incoming(incoming)
                    .await
                {
                    eprintln!("error: P4Runtime server: {e}");
                }
            });
        })?;
    Ok(ServerHandle { addr: bound })
}

struct Service<T> {
    shared: Arc<Shared<T>>,
}

/// The datapath stopped.
pub(crate) fn gone() -> Status {
    Status::unavailable("the switch's datapath has stopped")
}

/// Decode a device config: a pipeline artifact (JSON) or P4 source.
fn parse_device_config(bytes: &[u8]) -> Result<Artifact, Status> {
    let text = std::str::from_utf8(bytes).map_err(|_| {
        Status::invalid_argument(
            "config.p4_device_config: not UTF-8 (expected a NetSparse pipeline artifact (JSON) or P4 source)",
        )
    })?;
    if text.trim().is_empty() {
        return Err(Status::invalid_argument("config.p4_device_config: empty"));
    }
    if text.trim_start().starts_with('{') {
        return Artifact::from_json(text).map_err(|e| {
            Status::invalid_argument(format!(
                "config.p4_device_config: not a NetSparse pipeline artifact: {e}"
            ))
        });
    }
    let mut sources = netsparse_compiler::source::SourceMap::new();
    match netsparse_compiler::compile_source(
        &mut sources,
        "device_config.p4",
        text,
        &netsparse_compiler::CompileOptions::default(),
    ) {
        Ok(c) => Ok(c.artifact),
        Err(diags) => Err(Status::invalid_argument(format!(
            "config.p4_device_config: the P4 source does not compile:\n{}",
            netsparse_compiler::diag::render_all(&diags, &sources)
        ))),
    }
}

/// Check that a controller's P4Info describes `ours` (same names, match
/// fields, parameters); its ids are then used.
fn check_p4info(given: &cfg::P4Info, ours: &cfg::P4Info) -> Result<(), String> {
    for t in &given.tables {
        let name = p4info::name_of(&t.preamble);
        let Some(o) = ours
            .tables
            .iter()
            .find(|o| p4info::name_of(&o.preamble) == name)
        else {
            return Err(format!("table {name} is not in the program"));
        };
        let shape = |t: &cfg::Table| {
            t.match_fields
                .iter()
                .map(|m| (m.name.clone(), m.bitwidth, m.r#match.clone()))
                .collect::<Vec<_>>()
        };
        if shape(t) != shape(o) {
            return Err(format!(
                "table {name}: match fields differ from the program's"
            ));
        }
    }
    for a in &given.actions {
        let name = p4info::name_of(&a.preamble);
        let Some(o) = ours
            .actions
            .iter()
            .find(|o| p4info::name_of(&o.preamble) == name)
        else {
            return Err(format!("action {name} is not in the program"));
        };
        let shape = |a: &cfg::Action| {
            a.params
                .iter()
                .map(|p| (p.name.clone(), p.bitwidth))
                .collect::<Vec<_>>()
        };
        if shape(a) != shape(o) {
            return Err(format!(
                "action {name}: parameters differ from the program's"
            ));
        }
    }
    let ours_names: Vec<&str> = ours
        .registers
        .iter()
        .map(|r| p4info::name_of(&r.preamble))
        .chain(ours.counters.iter().map(|c| p4info::name_of(&c.preamble)))
        .chain(
            ours.direct_counters
                .iter()
                .map(|c| p4info::name_of(&c.preamble)),
        )
        .chain(ours.meters.iter().map(|c| p4info::name_of(&c.preamble)))
        .chain(
            ours.direct_meters
                .iter()
                .map(|c| p4info::name_of(&c.preamble)),
        )
        .collect();
    for n in given
        .registers
        .iter()
        .map(|r| p4info::name_of(&r.preamble))
        .chain(given.counters.iter().map(|c| p4info::name_of(&c.preamble)))
        .chain(
            given
                .direct_counters
                .iter()
                .map(|c| p4info::name_of(&c.preamble)),
        )
    {
        if !ours_names.contains(&n) {
            return Err(format!("extern {n} is not in the program"));
        }
    }
    Ok(())
}

type StreamOut = Pin<Box<dyn Stream<Item = Result<v1::StreamMessageResponse, Status>> + Send>>;
type ReadOut = Pin<Box<dyn Stream<Item = Result<v1::ReadResponse, Status>> + Send>>;

#[tonic::async_trait]
impl<T: Target> P4Runtime for Service<T> {
    async fn write(
        &self,
        req: Request<v1::WriteRequest>,
    ) -> Result<Response<v1::WriteResponse>, Status> {
        let req = req.into_inner();
        self.shared.check_device(req.device_id)?;
        self.shared
            .check_primary(&req.election_id, &req.role, req.role_id)?;
        write::write(&self.shared, req).await?;
        Ok(Response::new(v1::WriteResponse {}))
    }

    type ReadStream = ReadOut;

    async fn read(
        &self,
        req: Request<v1::ReadRequest>,
    ) -> Result<Response<Self::ReadStream>, Status> {
        let req = req.into_inner();
        self.shared.check_device(req.device_id)?;
        let entities = read::read(&self.shared, req.entities).await?;
        let out = tokio_stream::once(Ok(v1::ReadResponse { entities }));
        Ok(Response::new(Box::pin(out)))
    }

    async fn set_forwarding_pipeline_config(
        &self,
        req: Request<v1::SetForwardingPipelineConfigRequest>,
    ) -> Result<Response<v1::SetForwardingPipelineConfigResponse>, Status> {
        use v1::set_forwarding_pipeline_config_request::Action as A;
        let req = req.into_inner();
        self.shared.check_device(req.device_id)?;
        if !arbitration::role_of_request(&req.role, req.role_id).is_empty() {
            return Err(Status::permission_denied(
                "SetForwardingPipelineConfig: only the default role's primary may replace the pipeline",
            ));
        }
        self.shared.check_primary(&req.election_id, "", 0)?;
        let action = A::try_from(req.action).unwrap_or(A::Unspecified);
        let commit = |p: Pipeline| async move {
            let art = Arc::clone(&p.artifact);
            let res = self
                .shared
                .poster
                .run(move |t: &mut T| {
                    if t.arch() != art.arch {
                        return Err(format!(
                            "config.p4_device_config: a {} program; this switch runs {} programs",
                            p4info::arch_name(art.arch),
                            p4info::arch_name(t.arch())
                        ));
                    }
                    t.load(&art)
                })
                .await
                .map_err(|_| gone())?;
            res.map_err(Status::invalid_argument)?;
            *self
                .shared
                .pipeline
                .lock()
                .map_err(|_| Status::internal("poisoned"))? = p;
            if let Ok(mut d) = self.shared.digests.lock() {
                d.reset();
            }
            Ok::<_, Status>(())
        };
        if action == A::Commit {
            let saved = self
                .shared
                .saved
                .lock()
                .map_err(|_| Status::internal("poisoned"))?
                .take();
            let Some(p) = saved else {
                return Err(Status::failed_precondition(
                    "COMMIT: no pipeline was saved with VERIFY_AND_SAVE",
                ));
            };
            commit(p).await?;
            return Ok(Response::new(v1::SetForwardingPipelineConfigResponse {}));
        }
        if matches!(action, A::Unspecified | A::ReconcileAndCommit) {
            return Err(if action == A::Unspecified {
                Status::invalid_argument("action: unspecified")
            } else {
                Status::unimplemented("action RECONCILE_AND_COMMIT is not supported")
            });
        }
        let Some(config) = req.config else {
            return Err(Status::invalid_argument("config: missing"));
        };
        let artifact = parse_device_config(&config.p4_device_config)?;
        let mut pipeline = Pipeline::of(artifact, config.p4_device_config);
        if let Some(given) = config.p4info {
            check_p4info(&given, &pipeline.schema.info)
                .map_err(|e| Status::invalid_argument(format!("config.p4info: {e}")))?;
            pipeline = pipeline.with_p4info(given);
        }
        pipeline.cookie = config.cookie.map(|c| c.cookie);
        match action {
            A::Verify => {}
            A::VerifyAndSave => {
                *self
                    .shared
                    .saved
                    .lock()
                    .map_err(|_| Status::internal("poisoned"))? = Some(pipeline);
            }
            _ => commit(pipeline).await?,
        }
        Ok(Response::new(v1::SetForwardingPipelineConfigResponse {}))
    }

    async fn get_forwarding_pipeline_config(
        &self,
        req: Request<v1::GetForwardingPipelineConfigRequest>,
    ) -> Result<Response<v1::GetForwardingPipelineConfigResponse>, Status> {
        use v1::get_forwarding_pipeline_config_request::ResponseType as R;
        let req = req.into_inner();
        self.shared.check_device(req.device_id)?;
        let p = self.shared.pipeline();
        let rt = R::try_from(req.response_type).unwrap_or(R::All);
        let cookie = p
            .cookie
            .map(|c| v1::forwarding_pipeline_config::Cookie { cookie: c });
        let config = v1::ForwardingPipelineConfig {
            p4info: matches!(rt, R::All | R::P4infoAndCookie).then(|| p.schema.info.clone()),
            p4_device_config: if matches!(rt, R::All | R::DeviceConfigAndCookie) {
                p.device_config.clone()
            } else {
                Vec::new()
            },
            cookie,
        };
        Ok(Response::new(v1::GetForwardingPipelineConfigResponse {
            config: Some(config),
        }))
    }

    type StreamChannelStream = StreamOut;

    async fn stream_channel(
        &self,
        req: Request<tonic::Streaming<v1::StreamMessageRequest>>,
    ) -> Result<Response<Self::StreamChannelStream>, Status> {
        let mut inbound = req.into_inner();
        let (tx, rx) = tokio::sync::mpsc::channel(64);
        let shared = Arc::clone(&self.shared);
        let id = {
            let mut arb = shared
                .arb
                .lock()
                .map_err(|_| Status::internal("poisoned"))?;
            arb.next += 1;
            let id = arb.next;
            arb.conns.insert(
                id,
                arbitration::Conn {
                    election: None,
                    role: String::new(),
                    tx: tx.clone(),
                },
            );
            id
        };
        tokio::spawn(async move {
            while let Some(msg) = inbound.next().await {
                let Ok(msg) = msg else { break };
                match msg.update {
                    Some(v1::stream_message_request::Update::Arbitration(a)) => {
                        if let Err(s) = arbitrate(&shared, id, &a) {
                            let _ = tx.send(Err(s)).await;
                            break;
                        }
                    }
                    Some(v1::stream_message_request::Update::Packet(p)) => {
                        if let Err(e) = packet_out(&shared, id, &p) {
                            if let Some(c) = &shared.cpu {
                                c.packet_out_refused
                                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                            }
                            let mut err = stream_error(e.code(), e.message());
                            if let Some(v1::stream_message_response::Update::Error(se)) =
                                &mut err.update
                            {
                                se.details = Some(v1::stream_error::Details::PacketOut(
                                    v1::PacketOutError {
                                        packet_out: Some(p),
                                    },
                                ));
                            }
                            let _ = tx.send(Ok(err)).await;
                        }
                    }
                    Some(v1::stream_message_request::Update::DigestAck(a)) => {
                        let primary = shared.arb.lock().ok().is_some_and(|arb| arb.is_primary(id));
                        if !primary {
                            let _ = tx
                                .send(Ok(stream_error(
                                    tonic::Code::PermissionDenied,
                                    "DigestListAck: only the primary controller may acknowledge digests",
                                )))
                                .await;
                        } else if let Ok(mut d) = shared.digests.lock() {
                            d.ack(&a);
                        }
                    }
                    Some(_) => {
                        let _ = tx
                            .send(Ok(stream_error(
                                tonic::Code::Unimplemented,
                                "stream messages of type `other` are not supported",
                            )))
                            .await;
                    }
                    None => {}
                }
            }
            // The client went away: forget it; a new primary may be chosen.
            if let Ok(mut arb) = shared.arb.lock() {
                arb.remove(shared.device_id, id);
            }
        });
        Ok(Response::new(Box::pin(ReceiverStream::new(rx))))
    }

    async fn capabilities(
        &self,
        _req: Request<v1::CapabilitiesRequest>,
    ) -> Result<Response<v1::CapabilitiesResponse>, Status> {
        Ok(Response::new(v1::CapabilitiesResponse {
            p4runtime_api_version: API_VERSION.to_owned(),
        }))
    }
}

/// A PacketOut from stream `id`: from the primary only, on a switch with a
/// CPU port, for a program with a `packet_out` controller header; queued
/// into the datapath without waiting.
fn packet_out<T: Target>(shared: &Shared<T>, id: u64, p: &v1::PacketOut) -> Result<(), Status> {
    {
        let arb = shared
            .arb
            .lock()
            .map_err(|_| Status::internal("poisoned"))?;
        if !arb.is_primary(id) {
            return Err(Status::permission_denied(
                "PacketOut: only the primary controller may send packets",
            ));
        }
    }
    if shared.cpu.is_none() {
        return Err(Status::failed_precondition(
            "PacketOut: this switch has no CPU port (start it with --cpu-port N)",
        ));
    }
    let Some(layout) = shared.pipeline().packet_out else {
        return Err(Status::failed_precondition(
            "PacketOut: the program has no @controller_header(\"packet_out\") header",
        ));
    };
    let frame = packetio::decode_packet_out(&layout.0, &layout.1, p)
        .map_err(|e| Status::invalid_argument(format!("PacketOut: {e}")))?;
    shared
        .poster
        .post(move |t: &mut T| {
            if let Err(e) = t.packet_out(frame) {
                tracing::warn!("PacketOut dropped: {e}");
            }
        })
        .map_err(|_| gone())
}

/// Frames the program sent to the CPU port, to the primary controller as
/// PacketIn (dropped and counted when there is none, when the program has
/// no `packet_in` header or the frame is shorter, or when its stream is
/// full).
async fn forward_packet_in<T: Target>(shared: Arc<Shared<T>>, mut q: PacketInQueue) {
    use std::sync::atomic::Ordering::Relaxed;
    let c = Arc::clone(&q.counters);
    while let Some(frame) = q.rx.recv().await {
        let layout = shared.pipeline().packet_in;
        let msg = match &layout {
            Some(l) => packetio::encode_packet_in(&l.0, &l.1, &frame),
            // No header: the whole frame is the payload.
            None => Some(v1::PacketIn {
                payload: frame,
                metadata: Vec::new(),
            }),
        };
        let Some(msg) = msg else {
            c.packet_in_too_short.fetch_add(1, Relaxed);
            continue;
        };
        let txs = shared.primary_txs();
        if txs.is_empty() {
            c.packet_in_no_controller.fetch_add(1, Relaxed);
            continue;
        }
        // Every role's primary gets it (roles have no filters here).
        let m = v1::StreamMessageResponse {
            update: Some(v1::stream_message_response::Update::Packet(msg)),
        };
        for tx in txs {
            if tx.try_send(Ok(m.clone())).is_err() {
                c.packet_in_stream_full.fetch_add(1, Relaxed);
            } else {
                c.packet_in.fetch_add(1, Relaxed);
            }
        }
    }
}

fn stream_error(code: tonic::Code, message: &str) -> v1::StreamMessageResponse {
    v1::StreamMessageResponse {
        update: Some(v1::stream_message_response::Update::Error(
            v1::StreamError {
                canonical_code: code as i32,
                message: message.to_owned(),
                ..Default::default()
            },
        )),
    }
}

fn arbitrate<T: Target>(
    shared: &Shared<T>,
    id: u64,
    a: &v1::MasterArbitrationUpdate,
) -> Result<(), Status> {
    shared.check_device(a.device_id)?;
    shared
        .arb
        .lock()
        .map_err(|_| Status::internal("poisoned"))?
        .arbitrate(shared.device_id, id, a)
}

/// The gRPC status of a failed Write: UNKNOWN with one `p4.v1.Error` per
/// update in the details (OK for the updates that were applied).
pub(crate) fn batch_status(results: &[Result<(), Status>]) -> Option<Status> {
    let failed = results.iter().filter(|r| r.is_err()).count();
    if failed == 0 {
        return None;
    }
    let details = results
        .iter()
        .map(|r| {
            let err = match r {
                Ok(()) => v1::Error::default(),
                Err(s) => v1::Error {
                    canonical_code: s.code() as i32,
                    message: s.message().to_owned(),
                    ..Default::default()
                },
            };
            prost_types::Any {
                type_url: "type.googleapis.com/p4.v1.Error".to_owned(),
                value: err.encode_to_vec(),
            }
        })
        .collect();
    let first = results
        .iter()
        .enumerate()
        .find_map(|(i, r)| r.as_ref().err().map(|s| (i, s)))
        .map(|(i, s)| format!("; update {i}: {}", s.message()))
        .unwrap_or_default();
    let message = format!("{failed} of {} updates failed{first}", results.len());
    let st = rpc::Status {
        code: tonic::Code::Unknown as i32,
        message: message.clone(),
        details,
    };
    Some(Status::with_details(
        tonic::Code::Unknown,
        message,
        st.encode_to_vec().into(),
    ))
}

/// The per-update errors of a failed Write (from its status details).
pub fn update_errors(status: &Status) -> Vec<v1::Error> {
    rpc::Status::decode(status.details())
        .map(|s| {
            s.details
                .iter()
                .filter_map(|a| v1::Error::decode(a.value.as_slice()).ok())
                .collect()
        })
        .unwrap_or_default()
}
