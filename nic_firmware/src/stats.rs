//! Counters per NIC and per RIG command (issue 5, item 4).

use netsparse_externs::Time;
use serde::Serialize;

use crate::filtermem::FilterMemoryStats;

/// Counters of one RIG command.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CommandStats {
    /// Client unit that served it.
    pub unit: u16,
    /// Idxs run through host_to_net.
    pub idxs_read: u64,
    /// Dropped by the Idx Filter (`NS_FILTERED`).
    pub filtered: u64,
    /// Dropped because a PR for the idx was outstanding (`NS_COALESCED`).
    pub coalesced: u64,
    /// Dropped because the property is local (`NS_LOCAL`).
    pub local: u64,
    /// Dropped because no node owns the idx (`NS_UNROUTABLE`).
    pub unroutable: u64,
    /// Dropped for another reason (another outcome value, program errors).
    pub dropped_other: u64,
    /// Read PRs issued.
    pub issued: u64,
    /// Responses that retired one of its PRs.
    pub responses: u64,
    /// Properties written into its destination buffer.
    pub written: u64,
    /// Cycles its unit stalled on a full Pending PR Table while serving it.
    pub stall_cycles_pending: u64,
    /// Cycles its unit stalled on a full TX buffer while serving it.
    pub stall_cycles_tx: u64,
    /// When it was posted.
    pub posted_at: Time,
    /// When its unit started it.
    pub started_at: Time,
    /// When it completed or failed.
    pub finished_at: Time,
}

/// Counters of a NIC.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct NicStats {
    /// Commands accepted by `post_rig`.
    pub commands_posted: u64,
    /// Commands `post_rig` rejected.
    pub commands_rejected: u64,
    /// Commands completed successfully.
    pub commands_completed: u64,
    /// Commands that failed (watchdog, bad address, unroutable idxs).
    pub commands_failed: u64,
    /// Of which by watchdog.
    pub watchdog_failures: u64,
    /// Idxs read by client units (= filtered + coalesced + local +
    /// unroutable + dropped_other + issued).
    pub idxs_read: u64,
    /// Idxs dropped by the Idx Filter.
    pub prs_filtered: u64,
    /// Idxs dropped by coalescing.
    pub prs_coalesced: u64,
    /// Idxs whose property is local.
    pub prs_local: u64,
    /// Idxs no node owns.
    pub prs_unroutable: u64,
    /// Idxs dropped otherwise (other outcome values, program errors).
    pub prs_dropped_other: u64,
    /// Read PRs issued.
    pub prs_issued: u64,
    /// Responses that retired a pending PR.
    pub responses_received: u64,
    /// Properties written to host memory.
    pub properties_written: u64,
    /// Reads served from the local slice (responses sent).
    pub reads_served: u64,
    /// Reads for idxs outside the local slice (or of the wrong property
    /// length), dropped.
    pub reads_outside_slice: u64,
    /// Responses with an unknown unit id or request id.
    pub responses_unknown: u64,
    /// Responses for a request already answered.
    pub responses_duplicate: u64,
    /// Responses whose property length is not their command's property size.
    pub responses_wrong_length: u64,
    /// Responses whose idx is not the idx of their request.
    pub responses_wrong_idx: u64,
    /// HostWrite calls with no command to write for, or outside its buffer.
    pub writes_refused: u64,
    /// Received packets the program dropped whole (e.g. not for this node).
    pub packets_dropped: u64,
    /// PRs the program left inconsistent (a response without a payload, a
    /// read with one, an unknown type, an issued PR never registered with
    /// PendingInsert), dropped.
    pub program_errors: u64,
    /// Idx Filter accesses beyond its columns.
    pub filter_out_of_range: u64,
    /// Received frames that are not NetSparse.
    pub rx_foreign: u64,
    /// Received NetSparse frames that are malformed (every kind).
    pub rx_malformed: u64,
    /// Received NetSparse packets.
    pub rx_packets: u64,
    /// PRs in them.
    pub rx_prs: u64,
    /// Received frame bytes (valid NetSparse packets).
    pub rx_bytes: u64,
    /// Of which property payload.
    pub rx_payload_bytes: u64,
    /// Sent packets.
    pub tx_packets: u64,
    /// PRs in them.
    pub tx_prs: u64,
    /// Sent frame bytes.
    pub tx_bytes: u64,
    /// Of which property payload (goodput).
    pub tx_payload_bytes: u64,
    /// Client-unit cycles stalled on a full Pending PR Table.
    pub stall_cycles_pending: u64,
    /// Client-unit cycles stalled on a full TX buffer.
    pub stall_cycles_tx: u64,
    /// Largest TX buffer occupancy seen, in bytes.
    pub tx_buffer_peak: u64,
    /// Where Idx Filter lookups were served and the cycles they added.
    pub filter_memory: FilterMemoryStats,
    /// Times the control plane cleared the Idx Filter (`filter_clear`,
    /// P4Runtime's `NetSparseIdxFilter` extern).
    pub filter_clears: u64,
    /// Triggered operations registered (`post_triggered` accepted).
    pub triggered_registered: u64,
    /// Registrations refused (table full, tag table full, threshold 0, bad
    /// operation).
    pub triggered_rejected: u64,
    /// Triggered operations fired (their tag's counter reached the threshold).
    pub triggered_fired: u64,
    /// Of which fired at registration: the threshold had been reached by
    /// triggers that arrived before it (the early-trigger rule).
    pub triggered_early: u64,
    /// Triggers that reached the NIC.
    pub triggers_received: u64,
    /// Of which dropped: a new tag while every tag counter was in use.
    pub triggers_dropped: u64,
    /// Puts performed (fired triggered puts).
    pub puts: u64,
}

impl NicStats {
    /// Average PRs per sent packet.
    pub fn prs_per_packet_out(&self) -> f64 {
        ratio(self.tx_prs, self.tx_packets)
    }

    /// Average PRs per received packet.
    pub fn prs_per_packet_in(&self) -> f64 {
        ratio(self.rx_prs, self.rx_packets)
    }

    /// Header bytes sent (everything but property payloads).
    pub fn tx_header_bytes(&self) -> u64 {
        self.tx_bytes - self.tx_payload_bytes.min(self.tx_bytes)
    }

    /// Header bytes received.
    pub fn rx_header_bytes(&self) -> u64 {
        self.rx_bytes - self.rx_payload_bytes.min(self.rx_bytes)
    }

    /// Idxs accounted for by an outcome.
    pub fn idxs_accounted(&self) -> u64 {
        self.prs_filtered
            + self.prs_coalesced
            + self.prs_local
            + self.prs_unroutable
            + self.prs_dropped_other
            + self.prs_issued
    }

    /// A two-column table for terminals.
    pub fn summary(&self) -> String {
        let rows: Vec<(&str, String)> = vec![
            ("commands posted", self.commands_posted.to_string()),
            ("commands completed", self.commands_completed.to_string()),
            ("commands failed", self.commands_failed.to_string()),
            ("  by watchdog", self.watchdog_failures.to_string()),
            ("commands rejected", self.commands_rejected.to_string()),
            ("idxs read", self.idxs_read.to_string()),
            ("PRs filtered", self.prs_filtered.to_string()),
            ("PRs coalesced", self.prs_coalesced.to_string()),
            ("PRs local", self.prs_local.to_string()),
            ("PRs unroutable", self.prs_unroutable.to_string()),
            ("PRs dropped (other)", self.prs_dropped_other.to_string()),
            ("PRs issued", self.prs_issued.to_string()),
            ("responses received", self.responses_received.to_string()),
            ("properties written", self.properties_written.to_string()),
            ("reads served", self.reads_served.to_string()),
            ("reads outside slice", self.reads_outside_slice.to_string()),
            ("responses unknown", self.responses_unknown.to_string()),
            ("responses duplicate", self.responses_duplicate.to_string()),
            (
                "responses wrong length",
                self.responses_wrong_length.to_string(),
            ),
            ("responses wrong idx", self.responses_wrong_idx.to_string()),
            ("writes refused", self.writes_refused.to_string()),
            ("program errors", self.program_errors.to_string()),
            (
                "rx packets / PRs",
                format!("{} / {}", self.rx_packets, self.rx_prs),
            ),
            (
                "rx PRs per packet",
                format!("{:.2}", self.prs_per_packet_in()),
            ),
            (
                "rx bytes (header / payload)",
                format!("{} / {}", self.rx_header_bytes(), self.rx_payload_bytes),
            ),
            (
                "rx foreign / malformed",
                format!("{} / {}", self.rx_foreign, self.rx_malformed),
            ),
            ("rx packets dropped", self.packets_dropped.to_string()),
            (
                "tx packets / PRs",
                format!("{} / {}", self.tx_packets, self.tx_prs),
            ),
            (
                "tx PRs per packet",
                format!("{:.2}", self.prs_per_packet_out()),
            ),
            (
                "tx bytes (header / payload)",
                format!("{} / {}", self.tx_header_bytes(), self.tx_payload_bytes),
            ),
            (
                "stall cycles (pending / tx)",
                format!("{} / {}", self.stall_cycles_pending, self.stall_cycles_tx),
            ),
            ("tx buffer peak bytes", self.tx_buffer_peak.to_string()),
            (
                "filter lookups L1 / L2 / LLC / DRAM",
                format!(
                    "{} / {} / {} / {}",
                    self.filter_memory.l1_hits,
                    self.filter_memory.l2_hits,
                    self.filter_memory.llc_hits,
                    self.filter_memory.dram
                ),
            ),
            (
                "filter lookup cycles",
                self.filter_memory.cycles.to_string(),
            ),
        ];
        let w = rows.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
        let mut out = String::new();
        for (k, v) in rows {
            out.push_str(&format!("{k:<w$}  {v}\n"));
        }
        out
    }
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}
