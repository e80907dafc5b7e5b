//! A P4Runtime client on names: connects, fetches the P4Info with
//! GetForwardingPipelineConfig, arbitrates on a StreamChannel, and builds
//! table entries, counter, register and extern requests from the names
//! and the BMv2 CLI's value syntax (`10.0.1.0/24`, `v&&&m`, `lo->hi`,
//! `00:00:00:00:01:01`, `*`). `netsparse ctl` and the tests use it.

use std::time::Duration;

use netsparse_engine::control::values;
use netsparse_externs::artifact::KeyMatch;
use tokio_stream::StreamExt as _;
use tonic::transport::Channel;
use tonic::Status;

use crate::convert;
use crate::p4info::{name_of, Entity, Schema};
use crate::proto::v1::p4_runtime_client::P4RuntimeClient;
use crate::proto::{cfg, v1};

/// Client errors.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The server could not be reached.
    #[error("cannot connect to {addr}: {detail}")]
    Connect {
        /// Address.
        addr: String,
        /// Why.
        detail: String,
    },
    /// The server answered with an error.
    #[error("{0}")]
    Rpc(#[from] Status),
    /// A name or value given by the user is wrong.
    #[error("{0}")]
    Input(String),
    /// No answer in time.
    #[error("no answer from the server within {0:?}")]
    Timeout(Duration),
}

/// A connected client.
pub struct Client {
    rpc: P4RuntimeClient<Channel>,
    /// Device id sent with every request.
    pub device_id: u64,
    /// Election id (after [`Client::arbitrate`]).
    pub election: Option<u128>,
    /// The role it arbitrates for and writes in (empty: the default role).
    pub role: String,
    /// The pipeline's P4Info.
    pub schema: Schema,
    timeout: Duration,
    stream: Option<(
        tokio::sync::mpsc::Sender<v1::StreamMessageRequest>,
        tonic::Streaming<v1::StreamMessageResponse>,
    )>,
}

fn uint128(v: u128) -> v1::Uint128 {
    v1::Uint128 {
        high: (v >> 64) as u64,
        low: v as u64,
    }
}

impl Client {
    /// Connect to `addr` (`HOST:PORT`) and fetch the P4Info.
    pub async fn connect(
        addr: &str,
        device_id: u64,
        timeout: Duration,
    ) -> Result<Client, ClientError> {
        let url = if addr.contains("://") {
            addr.to_owned()
        } else {
            format!("http://{addr}")
        };
        let conn_err = |d: String| ClientError::Connect {
            addr: addr.to_owned(),
            detail: d,
        };
        let ep = Channel::from_shared(url)
            .map_err(|e| conn_err(e.to_string()))?
            .connect_timeout(timeout)
            .timeout(timeout);
        let ch = ep.connect().await.map_err(|e| conn_err(e.to_string()))?;
        let rpc = P4RuntimeClient::new(ch)
            .max_decoding_message_size(64 << 20)
            .max_encoding_message_size(64 << 20);
        let mut c = Client {
            rpc,
            device_id,
            election: None,
            role: String::new(),
            schema: Schema::default(),
            timeout,
            stream: None,
        };
        c.refresh_p4info().await?;
        Ok(c)
    }

    /// Fetch the P4Info again (after a pipeline change).
    pub async fn refresh_p4info(&mut self) -> Result<(), ClientError> {
        let resp =
            self.rpc
                .get_forwarding_pipeline_config(v1::GetForwardingPipelineConfigRequest {
                    device_id: self.device_id,
                    response_type:
                        v1::get_forwarding_pipeline_config_request::ResponseType::P4infoAndCookie
                            as i32,
                })
                .await?
                .into_inner();
        let info = resp.config.and_then(|c| c.p4info).unwrap_or_default();
        self.schema = Schema::new(info);
        Ok(())
    }

    /// Open a StreamChannel and ask to be primary of [`Client::role`] with
    /// `election`. Returns
    /// the arbitration answer's status code (OK: primary; ALREADY_EXISTS:
    /// a backup). The stream stays open as long as the client lives.
    pub async fn arbitrate(&mut self, election: u128) -> Result<tonic::Code, ClientError> {
        let (tx, rx) = tokio::sync::mpsc::channel(8);
        tx.send(v1::StreamMessageRequest {
            update: Some(v1::stream_message_request::Update::Arbitration(
                v1::MasterArbitrationUpdate {
                    device_id: self.device_id,
                    role: (!self.role.is_empty()).then(|| v1::Role {
                        name: self.role.clone(),
                        ..Default::default()
                    }),
                    election_id: Some(uint128(election)),
                    status: None,
                },
            )),
        })
        .await
        .map_err(|_| ClientError::Input("stream closed".into()))?;
        let mut inbound = self
            .rpc
            .stream_channel(tokio_stream::wrappers::ReceiverStream::new(rx))
            .await?
            .into_inner();
        let first = tokio::time::timeout(self.timeout, inbound.next())
            .await
            .map_err(|_| ClientError::Timeout(self.timeout))?;
        let code = match first {
            Some(Ok(v1::StreamMessageResponse {
                update: Some(v1::stream_message_response::Update::Arbitration(a)),
            })) => tonic::Code::from(a.status.map_or(0, |s| s.code)),
            Some(Ok(_)) => {
                return Err(ClientError::Input(
                    "unexpected first message on the stream".into(),
                ))
            }
            Some(Err(s)) => return Err(ClientError::Rpc(s)),
            None => return Err(ClientError::Input("the server closed the stream".into())),
        };
        self.election = Some(election);
        self.stream = Some((tx, inbound));
        Ok(code)
    }

    /// The next message on the stream (arbitration changes, errors),
    /// waiting at most `wait`.
    pub async fn next_stream_message(
        &mut self,
        wait: Duration,
    ) -> Option<Result<v1::StreamMessageResponse, Status>> {
        let (_, inbound) = self.stream.as_mut()?;
        tokio::time::timeout(wait, inbound.next()).await.ok()?
    }

    /// Send a PacketOut on the arbitrated stream.
    pub async fn packet_out(&mut self, p: v1::PacketOut) -> Result<(), ClientError> {
        self.send_stream("PacketOut", v1::stream_message_request::Update::Packet(p))
            .await
    }

    /// Acknowledge a DigestList on the arbitrated stream.
    pub async fn digest_ack(&mut self, digest_id: u32, list_id: u64) -> Result<(), ClientError> {
        self.send_stream(
            "DigestListAck",
            v1::stream_message_request::Update::DigestAck(v1::DigestListAck { digest_id, list_id }),
        )
        .await
    }

    async fn send_stream(
        &mut self,
        what: &str,
        update: v1::stream_message_request::Update,
    ) -> Result<(), ClientError> {
        let Some((tx, _)) = self.stream.as_ref() else {
            return Err(ClientError::Input(format!(
                "{what} needs an arbitrated stream (arbitrate first)"
            )));
        };
        tx.send(v1::StreamMessageRequest {
            update: Some(update),
        })
        .await
        .map_err(|_| ClientError::Input("stream closed".into()))
    }

    /// The ids of the running program's Property Cache instances.
    pub fn property_caches(&self) -> Vec<u32> {
        self.schema
            .info
            .externs
            .iter()
            .filter(|x| x.extern_type_id == crate::p4info::PROPERTY_CACHE_TYPE_ID)
            .flat_map(|x| {
                x.instances
                    .iter()
                    .map(|i| crate::p4info::id_of(&i.preamble))
            })
            .collect()
    }

    /// The id of the running NIC program's Idx Filter, if it has one.
    pub fn idx_filter(&self) -> Option<u32> {
        self.schema
            .info
            .externs
            .iter()
            .filter(|x| x.extern_type_id == crate::p4info::IDX_FILTER_TYPE_ID)
            .flat_map(|x| x.instances.iter())
            .map(|i| crate::p4info::id_of(&i.preamble))
            .next()
    }

    /// Clear the NIC's Idx Filter `id` (a MODIFY of its `ExternEntry`),
    /// arbitrating first with `election` if this client has not.
    pub async fn clear_idx_filter(&mut self, id: u32, election: u128) -> Result<(), ClientError> {
        if self.election.is_none() {
            let code = self.arbitrate(election).await?;
            if code != tonic::Code::Ok {
                return Err(ClientError::Rpc(Status::permission_denied(format!(
                    "election id {election} is not primary (another controller holds a higher one)"
                ))));
            }
        }
        let u = update(
            v1::update::Type::Modify,
            v1::entity::Entity::ExternEntry(v1::ExternEntry {
                extern_type_id: crate::p4info::IDX_FILTER_TYPE_ID,
                extern_id: id,
                entry: None,
            }),
        );
        self.write(vec![u]).await.map_err(ClientError::Rpc)
    }

    /// Invalidate the Property Caches `ids` (the NetSparse extension: a
    /// MODIFY of their `ExternEntry`), arbitrating first with `election` if
    /// this client has not; one Write of all of them.
    pub async fn invalidate_caches(
        &mut self,
        ids: &[u32],
        election: u128,
    ) -> Result<(), ClientError> {
        if self.election.is_none() {
            let code = self.arbitrate(election).await?;
            if code != tonic::Code::Ok {
                return Err(ClientError::Rpc(Status::permission_denied(format!(
                    "election id {election} is not primary (another controller holds a higher one)"
                ))));
            }
        }
        let updates = ids
            .iter()
            .map(|&id| {
                update(
                    v1::update::Type::Modify,
                    v1::entity::Entity::ExternEntry(v1::ExternEntry {
                        extern_type_id: crate::p4info::PROPERTY_CACHE_TYPE_ID,
                        extern_id: id,
                        entry: None,
                    }),
                )
            })
            .collect();
        self.write(updates).await.map_err(ClientError::Rpc)
    }

    /// The switch counters (the `--stats-json` document), read through the
    /// NetSparse statistics extension.
    pub async fn stats_json(&mut self) -> Result<serde_json::Value, ClientError> {
        use v1::entity::Entity as En;
        let got = self
            .read(vec![v1::Entity {
                entity: Some(En::ExternEntry(v1::ExternEntry {
                    extern_type_id: crate::server::STATS_TYPE_ID,
                    extern_id: 0,
                    entry: None,
                })),
            }])
            .await?;
        for e in got {
            if let Some(En::ExternEntry(x)) = e.entity {
                if let Some(any) = x
                    .entry
                    .filter(|a| a.type_url == crate::server::STATS_TYPE_URL)
                {
                    return serde_json::from_slice(&any.value).map_err(|e| {
                        ClientError::Input(format!("the statistics are not JSON: {e}"))
                    });
                }
            }
        }
        Err(ClientError::Input(
            "the switch did not answer the statistics read".into(),
        ))
    }

    /// Send a Write of `updates`.
    pub async fn write(&mut self, updates: Vec<v1::Update>) -> Result<(), Status> {
        self.rpc
            .write(v1::WriteRequest {
                device_id: self.device_id,
                election_id: self.election.map(uint128),
                role: self.role.clone(),
                updates,
                ..Default::default()
            })
            .await
            .map(|_| ())
    }

    /// Send a Write of one table entry update of type `ty`.
    pub async fn write_entry(
        &mut self,
        ty: v1::update::Type,
        entry: v1::TableEntry,
    ) -> Result<(), Status> {
        self.write(vec![update(ty, v1::entity::Entity::TableEntry(entry))])
            .await
    }

    /// Read `entities` (wildcards allowed); all answers concatenated.
    pub async fn read(&mut self, entities: Vec<v1::Entity>) -> Result<Vec<v1::Entity>, Status> {
        let mut s = self
            .rpc
            .read(v1::ReadRequest {
                device_id: self.device_id,
                entities,
                ..Default::default()
            })
            .await?
            .into_inner();
        let mut out = Vec::new();
        while let Some(r) = s.next().await {
            out.extend(r?.entities);
        }
        Ok(out)
    }

    /// Push a pipeline (device config = an artifact's JSON or P4 source;
    /// P4Info optional) with VERIFY_AND_COMMIT.
    pub async fn set_pipeline(
        &mut self,
        device_config: Vec<u8>,
        p4info: Option<cfg::P4Info>,
    ) -> Result<(), Status> {
        self.rpc
            .set_forwarding_pipeline_config(v1::SetForwardingPipelineConfigRequest {
                device_id: self.device_id,
                election_id: self.election.map(uint128),
                role: self.role.clone(),
                action: v1::set_forwarding_pipeline_config_request::Action::VerifyAndCommit as i32,
                config: Some(v1::ForwardingPipelineConfig {
                    p4info,
                    p4_device_config: device_config,
                    cookie: None,
                }),
                ..Default::default()
            })
            .await
            .map(|_| ())
    }

    /// The raw gRPC client, for requests this type has no helper for.
    pub fn raw(&mut self) -> &mut P4RuntimeClient<Channel> {
        &mut self.rpc
    }

    /// The table called `name` (full name or alias).
    pub fn table(&self, name: &str) -> Result<&cfg::Table, ClientError> {
        self.schema.find(name, |s, id| s.table(id)).ok_or_else(|| {
            ClientError::Input(format!(
                "no table {name} (tables: {})",
                self.schema
                    .info
                    .tables
                    .iter()
                    .map(|t| name_of(&t.preamble))
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        })
    }

    /// Build a table entry from the BMv2 CLI's syntax: one match per key
    /// in key order, an action name and its parameters, a priority for
    /// ternary/range/optional tables. The action is optional (delete).
    pub fn table_entry(
        &self,
        table: &str,
        keys: &[&str],
        action: Option<(&str, &[&str])>,
        priority: Option<i32>,
    ) -> Result<v1::TableEntry, ClientError> {
        let t = self.table(table)?;
        let tname = name_of(&t.preamble);
        if keys.len() != t.match_fields.len() {
            return Err(ClientError::Input(format!(
                "table {tname}: {} match values given, the table has {} keys ({})",
                keys.len(),
                t.match_fields.len(),
                t.match_fields
                    .iter()
                    .map(|m| m.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        let mut ms = Vec::new();
        for (text, mf) in keys.iter().zip(&t.match_fields) {
            let w = u16::try_from(mf.bitwidth).unwrap_or(u16::MAX);
            let m = values::parse_match(text, w)
                .map_err(|e| ClientError::Input(format!("table {tname}, key {}: {e}", mf.name)))?;
            ms.push(m);
        }
        let r#match = to_field_matches(t, &ms);
        let action = match action {
            None => None,
            Some((aname, params)) => {
                let a = t
                    .action_refs
                    .iter()
                    .filter_map(|r| self.schema.action(r.id))
                    .find(|a| {
                        let p = a.preamble.as_ref();
                        p.is_some_and(|p| p.name == aname || p.alias == aname)
                    })
                    .ok_or_else(|| {
                        ClientError::Input(format!("table {tname}: no action {aname}"))
                    })?;
                if params.len() != a.params.len() {
                    return Err(ClientError::Input(format!(
                        "action {}: {} parameters given, it takes {}",
                        name_of(&a.preamble),
                        params.len(),
                        a.params.len()
                    )));
                }
                let mut ps = Vec::new();
                for (text, p) in params.iter().zip(&a.params) {
                    let w = u16::try_from(p.bitwidth).unwrap_or(u16::MAX);
                    let v = values::parse_value(text, w).map_err(|e| {
                        ClientError::Input(format!(
                            "action {}, parameter {}: {e}",
                            name_of(&a.preamble),
                            p.name
                        ))
                    })?;
                    ps.push(v1::action::Param {
                        param_id: p.id,
                        value: convert::to_bytes(v),
                    });
                }
                Some(v1::TableAction {
                    r#type: Some(v1::table_action::Type::Action(v1::Action {
                        action_id: crate::p4info::id_of(&a.preamble),
                        params: ps,
                    })),
                })
            }
        };
        Ok(v1::TableEntry {
            table_id: crate::p4info::id_of(&t.preamble),
            r#match,
            action,
            priority: priority.unwrap_or(0),
            ..Default::default()
        })
    }

    /// The id of the counter, meter, register or Property Cache called
    /// `name`.
    pub fn extern_id(&self, name: &str) -> Result<(u32, &Entity), ClientError> {
        self.schema
            .ids_named(name)
            .iter()
            .find_map(|id| match self.schema.entity(*id) {
                Some(
                    e @ (Entity::Counter(_)
                    | Entity::Meter(_)
                    | Entity::Register(_)
                    | Entity::PropertyCache(_)),
                ) => Some((*id, e)),
                _ => None,
            })
            .ok_or_else(|| {
                ClientError::Input(format!("no counter, meter, register or cache {name}"))
            })
    }
}

/// Matches to P4Runtime field matches for `table` (LPM values masked to
/// their prefix; don't-care keys left out).
pub fn to_field_matches(table: &cfg::Table, ms: &[KeyMatch]) -> Vec<v1::FieldMatch> {
    let masked: Vec<KeyMatch> = ms
        .iter()
        .zip(&table.match_fields)
        .map(|(m, mf)| match m {
            KeyMatch::Lpm { value, prefix_len } => {
                let w = mf.bitwidth.clamp(0, 128) as u32;
                let host = w.saturating_sub(u32::from(*prefix_len));
                let keep = if host >= 128 { 0 } else { u128::MAX << host };
                KeyMatch::Lpm {
                    value: value & keep,
                    prefix_len: *prefix_len,
                }
            }
            other => other.clone(),
        })
        .collect();
    convert::field_matches(table, &masked)
}

/// An update of `ty` on `entity`.
pub fn update(ty: v1::update::Type, entity: v1::entity::Entity) -> v1::Update {
    v1::Update {
        r#type: ty as i32,
        entity: Some(v1::Entity {
            entity: Some(entity),
        }),
    }
}
