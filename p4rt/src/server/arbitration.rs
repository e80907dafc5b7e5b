//! Arbitration on `StreamChannel`, with roles. Every stream arbitrates for
//! a role (the default role has the empty name; a role is named by
//! `Role.name`, or by its deprecated numeric `id`); within a role the
//! highest election id is primary and is told OK, the others are backups
//! and are told ALREADY_EXISTS, and a second stream with the same election
//! id in the same role is refused. Roles do not restrict access here (no
//! role config is accepted): the primary of any role may Write, send
//! PacketOut and acknowledge digests, and every primary receives PacketIn
//! and DigestLists. SetForwardingPipelineConfig belongs to the default
//! role's primary, since it replaces what every role works on.

use std::collections::BTreeMap;

use tonic::Status;

use super::from_uint128;
use crate::proto::google::rpc;
use crate::proto::v1;

/// A role's key: its name (the default role: empty).
pub(crate) type RoleName = String;

/// One stream.
pub(crate) struct Conn {
    /// Its election id, once it arbitrated.
    pub election: Option<u128>,
    /// The role it arbitrated for.
    pub role: RoleName,
    /// Messages to the controller.
    pub tx: tokio::sync::mpsc::Sender<Result<v1::StreamMessageResponse, Status>>,
}

/// Every stream, by connection id.
#[derive(Default)]
pub(crate) struct Arbitration {
    pub next: u64,
    pub conns: BTreeMap<u64, Conn>,
}

/// The role named in a request's `role` (or deprecated `role_id`).
pub(crate) fn role_of_request(name: &str, id: u64) -> RoleName {
    if name.is_empty() && id != 0 {
        format!("#{id}")
    } else {
        name.to_owned()
    }
}

fn show(role: &str) -> String {
    if role.is_empty() {
        "the default role".to_owned()
    } else {
        format!("role `{role}`")
    }
}

impl Arbitration {
    /// The primary's election id in `role`.
    pub fn primary(&self, role: &str) -> Option<u128> {
        self.conns
            .values()
            .filter(|c| c.role == role)
            .filter_map(|c| c.election)
            .max()
    }

    /// Whether stream `id` is the primary of its role.
    pub fn is_primary(&self, id: u64) -> bool {
        self.conns
            .get(&id)
            .is_some_and(|c| c.election.is_some() && c.election == self.primary(&c.role))
    }

    /// The streams of every role's primary.
    pub fn primaries(
        &self,
    ) -> Vec<tokio::sync::mpsc::Sender<Result<v1::StreamMessageResponse, Status>>> {
        self.conns
            .values()
            .filter(|c| c.election.is_some() && c.election == self.primary(&c.role))
            .map(|c| c.tx.clone())
            .collect()
    }

    /// Tell every arbitrated stream of `role` who is primary.
    pub fn notify(&self, device_id: u64, role: &str) {
        let primary = self.primary(role);
        for c in self.conns.values().filter(|c| c.role == role) {
            let Some(e) = c.election else { continue };
            let _ =
                c.tx.try_send(Ok(arbitration_msg(device_id, role, primary, e)));
        }
    }

    /// Stream `id` arbitrates with `a` (device already checked).
    pub fn arbitrate(
        &mut self,
        device_id: u64,
        id: u64,
        a: &v1::MasterArbitrationUpdate,
    ) -> Result<(), Status> {
        let role = match &a.role {
            None => RoleName::new(),
            Some(r) if r.config.is_some() => return Err(Status::unimplemented(
                "arbitration: role configs are not supported (a role has access to every entity)",
            )),
            Some(r) => role_of_request(&r.name, r.id),
        };
        let Some(e) = from_uint128(&a.election_id) else {
            return Err(Status::invalid_argument("arbitration: election_id missing"));
        };
        if self
            .conns
            .iter()
            .any(|(other, c)| *other != id && c.role == role && c.election == Some(e))
        {
            return Err(Status::invalid_argument(format!(
                "arbitration: election_id {e} is used by another controller of {}",
                show(&role)
            )));
        }
        let Some(c) = self.conns.get_mut(&id) else {
            return Err(Status::internal("arbitration: unknown stream"));
        };
        let old = std::mem::replace(&mut c.role, role.clone());
        c.election = Some(e);
        if old != role {
            self.notify(device_id, &old);
        }
        self.notify(device_id, &role);
        Ok(())
    }

    /// Stream `id` went away: its role may get a new primary.
    pub fn remove(&mut self, device_id: u64, id: u64) {
        let Some(c) = self.conns.get(&id) else { return };
        let role = c.role.clone();
        let before = self.primary(&role);
        self.conns.remove(&id);
        if self.primary(&role) != before {
            self.notify(device_id, &role);
        }
    }

    /// A request of `role` with `election` that changes state: it must
    /// come from that role's primary.
    pub fn check_primary(&self, election: Option<u128>, role: &str) -> Result<(), Status> {
        match (election, self.primary(role)) {
            (Some(e), Some(p)) if e == p => Ok(()),
            (None, _) => Err(Status::permission_denied(
                "election_id missing: open a StreamChannel, arbitrate, and send its election id",
            )),
            (Some(e), Some(p)) => Err(Status::permission_denied(format!(
                "election_id {e} is not the primary's ({p}) in {}",
                show(role)
            ))),
            (Some(e), None) => Err(Status::permission_denied(format!(
                "election_id {e}: no controller has arbitrated for {} on a StreamChannel",
                show(role)
            ))),
        }
    }
}

fn uint128(v: u128) -> v1::Uint128 {
    v1::Uint128 {
        high: (v >> 64) as u64,
        low: v as u64,
    }
}

fn arbitration_msg(
    device_id: u64,
    role: &str,
    primary: Option<u128>,
    mine: u128,
) -> v1::StreamMessageResponse {
    let (code, message) = match primary {
        Some(p) if p == mine => (tonic::Code::Ok, "you are the primary controller".to_owned()),
        Some(_) => (
            tonic::Code::AlreadyExists,
            "a controller with a higher election id is primary".to_owned(),
        ),
        None => (tonic::Code::NotFound, "no primary controller".to_owned()),
    };
    v1::StreamMessageResponse {
        update: Some(v1::stream_message_response::Update::Arbitration(
            v1::MasterArbitrationUpdate {
                device_id,
                role: (!role.is_empty()).then(|| v1::Role {
                    name: role.to_owned(),
                    ..Default::default()
                }),
                election_id: primary.map(uint128),
                status: Some(rpc::Status {
                    code: code as i32,
                    message,
                    details: Vec::new(),
                }),
            },
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conn(
        arb: &mut Arbitration,
    ) -> (
        u64,
        tokio::sync::mpsc::Receiver<Result<v1::StreamMessageResponse, Status>>,
    ) {
        let (tx, rx) = tokio::sync::mpsc::channel(16);
        arb.next += 1;
        arb.conns.insert(
            arb.next,
            Conn {
                election: None,
                role: RoleName::new(),
                tx,
            },
        );
        (arb.next, rx)
    }

    fn upd(role: Option<&str>, e: u128) -> v1::MasterArbitrationUpdate {
        v1::MasterArbitrationUpdate {
            device_id: 1,
            role: role.map(|r| v1::Role {
                name: r.into(),
                ..Default::default()
            }),
            election_id: Some(uint128(e)),
            status: None,
        }
    }

    #[test]
    fn each_role_has_its_own_primary() {
        let mut arb = Arbitration::default();
        let (a, _ra) = conn(&mut arb);
        let (b, _rb) = conn(&mut arb);
        let (c, _rc) = conn(&mut arb);
        arb.arbitrate(1, a, &upd(None, 5)).unwrap();
        arb.arbitrate(1, b, &upd(Some("acl"), 3)).unwrap();
        arb.arbitrate(1, c, &upd(Some("acl"), 4)).unwrap();
        assert!(arb.is_primary(a) && !arb.is_primary(b) && arb.is_primary(c));
        assert_eq!(arb.primaries().len(), 2);
        // The same election id in another role is fine, not in the same.
        let (d, _rd) = conn(&mut arb);
        arb.arbitrate(1, d, &upd(Some("x"), 5)).unwrap();
        let (e, _re) = conn(&mut arb);
        assert_eq!(
            arb.arbitrate(1, e, &upd(Some("acl"), 4))
                .unwrap_err()
                .code(),
            tonic::Code::InvalidArgument
        );
        assert!(arb.check_primary(Some(4), "acl").is_ok());
        assert!(arb.check_primary(Some(3), "acl").is_err());
        assert!(arb.check_primary(Some(4), "").is_err());
        // The acl primary leaves: the backup takes over.
        arb.remove(1, c);
        assert!(arb.is_primary(b));
        let mut cfg = upd(Some("acl"), 9);
        cfg.role.as_mut().unwrap().config = Some(prost_types::Any::default());
        assert_eq!(
            arb.arbitrate(1, e, &cfg).unwrap_err().code(),
            tonic::Code::Unimplemented
        );
        assert_eq!(role_of_request("", 7), "#7");
    }
}
