//! What the live drivers share, whichever socket layer they run on: the
//! options of a run, the per-port counters and the report, the errors, and
//! the per-port bookkeeping (pcap recorders for `--pcap`, the port-number
//! map, the counters) that [`super::live`] (one socket per port) and
//! [`super::tpacket`] (memory-mapped rings) set up the same way.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, BufWriter};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
use pcap_file::{Endianness, TsResolution};

use super::PortSpec;

/// Ring geometry options.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RingOptions {
    /// Upper bound on one port's receive ring, in bytes (the slot count is
    /// this divided by the slot size, at least 64 slots).
    pub ring_bytes: usize,
}

impl Default for RingOptions {
    fn default() -> Self {
        RingOptions {
            ring_bytes: 8 << 20,
        }
    }
}

/// Why a live driver calls its hook.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wake {
    /// [`LiveOptions::dump`] was raised (write the counters).
    Dump,
    /// [`LiveOptions::control`] was raised (run the control plane's jobs).
    Control,
}

/// Live options.
#[derive(Clone, Debug)]
pub struct LiveOptions {
    /// Receive buffer per frame (longer frames are counted as truncated and dropped).
    pub snaplen: usize,
    /// Longest wait between checks of the stop flag.
    pub poll: Duration,
    /// Record every port's input and output to `DIR/<name>_in.pcap` /
    /// `DIR/<name>_out.pcap` (wall-clock timestamps).
    pub record_dir: Option<PathBuf>,
    /// When raised, the driver calls its hook between packets and lowers
    /// the flag (see [`dump_on_sigusr1`](crate::drivers::live::dump_on_sigusr1)).
    pub dump: Option<Arc<AtomicBool>>,
    /// Raised by a control plane (the P4Runtime server) that has posted
    /// work for the datapath: the driver lowers it and calls its hook with
    /// [`Wake::Control`] between two packets (one relaxed load per loop
    /// turn when nothing is pending).
    pub control: Option<Arc<AtomicBool>>,
    /// Receive-ring geometry of the fast driver.
    pub ring: RingOptions,
}

impl Default for LiveOptions {
    fn default() -> Self {
        LiveOptions {
            snaplen: 65536,
            poll: Duration::from_millis(50),
            record_dir: None,
            dump: None,
            control: None,
            ring: RingOptions::default(),
        }
    }
}

/// Driver counters of one port.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LivePortStats {
    /// The binding.
    pub spec: Option<PortSpec>,
    /// Frames received and delivered to the core.
    pub rx_frames: u64,
    /// Bytes received.
    pub rx_bytes: u64,
    /// Frames sent.
    pub tx_frames: u64,
    /// Bytes sent.
    pub tx_bytes: u64,
    /// Sends that failed.
    pub tx_errors: u64,
    /// Frames longer than the receive buffer (dropped).
    pub rx_truncated: u64,
    /// Frames the kernel dropped because the receive ring was full (fast
    /// driver only; 0 for the socket driver).
    pub rx_kernel_drops: u64,
}

/// The outcome of a live run.
#[derive(Clone, Debug, Default)]
pub struct LiveReport {
    /// Per port, in port order.
    pub ports: Vec<LivePortStats>,
    /// Frames the core sent to unbound ports.
    pub unbound_port_frames: u64,
    /// How long the loop ran.
    pub duration: Duration,
    /// A receiver that failed (the run stopped because of it).
    pub receiver_error: Option<String>,
    /// Which driver ran: `"tpacket"` (rings) or `"socket"`.
    pub driver: &'static str,
}

/// Why a live run could not start or continue.
#[derive(Debug, thiserror::Error)]
pub enum LiveError {
    /// An interface could not be opened.
    #[error("cannot open {port}: {err}")]
    Open {
        /// The binding.
        port: PortSpec,
        /// The error.
        err: io::Error,
    },
    /// A recording file could not be written.
    #[error("{file}: {detail}")]
    Record {
        /// The file.
        file: PathBuf,
        /// What failed.
        detail: String,
    },
    /// A receiver thread could not be started.
    #[error("cannot start a receiver thread: {0}")]
    Thread(io::Error),
}

/// A pcap file the live drivers record a port's input or output to.
pub(crate) struct Recorder {
    file: PathBuf,
    w: PcapWriter<BufWriter<File>>,
}

impl Recorder {
    /// Create `dir/name`.
    pub(crate) fn create(dir: &Path, name: &str, snaplen: usize) -> Result<Recorder, LiveError> {
        let file = dir.join(name);
        let err = |detail: String| LiveError::Record {
            file: file.clone(),
            detail,
        };
        let f = File::create(&file).map_err(|e| err(e.to_string()))?;
        let header = PcapHeader {
            snaplen: snaplen as u32,
            ts_resolution: TsResolution::NanoSecond,
            endianness: Endianness::Little,
            ..PcapHeader::default()
        };
        let w =
            PcapWriter::with_header(BufWriter::new(f), header).map_err(|e| err(e.to_string()))?;
        Ok(Recorder { file, w })
    }

    /// Append a frame with the wall-clock time.
    pub(crate) fn write(&mut self, data: &[u8]) -> Result<(), LiveError> {
        let ts = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap_or_default();
        self.w
            .write_packet(&PcapPacket::new(ts, data.len() as u32, data))
            .map(|_| ())
            .map_err(|e| LiveError::Record {
                file: self.file.clone(),
                detail: e.to_string(),
            })
    }
}

impl Recorder {
    /// Flush and close.
    pub(crate) fn finish(self) -> Result<(), LiveError> {
        let file = self.file;
        let mut inner = self.w.into_writer();
        io::Write::flush(&mut inner).map_err(|e| LiveError::Record {
            file,
            detail: e.to_string(),
        })
    }
}

/// The pcap recorders (in, out) of each live port.
pub(crate) type Recorders = Vec<(Option<Recorder>, Option<Recorder>)>;

/// What [`port_book`] sets up: recorders, port number → index, counters.
pub(crate) type PortBook = (Recorders, BTreeMap<u32, usize>, Vec<LivePortStats>);

/// Per-port bookkeeping shared by the live drivers, for ports sorted by
/// number: the recorders (`--pcap`), the port-number → index map and the
/// counters.
pub(crate) fn port_book<T>(
    ports: &[(PortSpec, T)],
    opts: &LiveOptions,
) -> Result<PortBook, LiveError> {
    let mut recorders = Vec::with_capacity(ports.len());
    for (s, _) in ports {
        recorders.push(match &opts.record_dir {
            Some(d) => (
                Some(Recorder::create(
                    d,
                    &format!("{}_in.pcap", s.name),
                    opts.snaplen,
                )?),
                Some(Recorder::create(
                    d,
                    &format!("{}_out.pcap", s.name),
                    opts.snaplen,
                )?),
            ),
            None => (None, None),
        });
    }
    let by_port = ports
        .iter()
        .enumerate()
        .map(|(i, (s, _))| (s.port, i))
        .collect();
    let stats = ports
        .iter()
        .map(|(s, _)| LivePortStats {
            spec: Some(s.clone()),
            ..LivePortStats::default()
        })
        .collect();
    Ok((recorders, by_port, stats))
}

/// Close every recorder; the first error wins.
pub(crate) fn finish_recorders(recorders: Recorders) -> Result<(), LiveError> {
    let mut result = Ok(());
    for (i, o) in recorders {
        for r in [i, o].into_iter().flatten() {
            if let Err(e) = r.finish() {
                result = result.and(Err(e));
            }
        }
    }
    result
}
