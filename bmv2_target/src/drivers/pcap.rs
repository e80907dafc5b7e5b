//! Deterministic pcap replay.
//!
//! For each `-i PORT@NAME`, `DIR/<NAME>_in.pcap` (if it exists) is read and
//! `DIR/<NAME>_out.pcap` is written (always, even for ports without input).
//!
//! * **Formats**: classic pcap in either byte order, microsecond or
//!   nanosecond timestamps; pcapng (enhanced and simple packet blocks,
//!   `if_tsresol` honoured). The link type must be Ethernet.
//! * **Time**: packet times are taken from the capture timestamps, relative
//!   to the earliest first timestamp of all inputs (so `Time` starts near 0).
//!   Inputs are merged by timestamp; ties go to the lower port number, then
//!   to record order. Time never goes backwards for the core: a record
//!   older than the current time is delivered at the current time.
//! * **Timers**: before each packet every deadline at or before its time is
//!   fired in order; at the end of all input the driver keeps calling
//!   `on_timer` at `next_deadline()` until there is none, at most
//!   [`PcapOptions::max_timer_steps`] times (a core that never settles is an
//!   error).
//! * **Outputs** are written with the time they were produced (the origin
//!   added back). Frames for ports without a binding are counted and
//!   dropped. The same inputs always give the same output bytes.
//! * **Corrupt input** (bad magic, truncated record, a record longer than
//!   [`PcapOptions::max_caplen`], a non-Ethernet link type, a bad
//!   timestamp) stops *that* input with an error naming the file and the
//!   record number; the other inputs run to the end, every output file is
//!   flushed and stays a valid pcap, and the run reports the errors (the CLI
//!   then exits with status 1).

use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use netsparse_externs::{Datapath, Outputs, Time};
use pcap_file::pcap::{PcapHeader, PcapWriter};
use pcap_file::pcapng::{Block, PcapNgReader};
use pcap_file::{DataLink, Endianness, TsResolution};

use super::PortSpec;

/// Buffer size of each input reader and output writer: large enough that
/// the system calls, not the copies, stay rare.
const IO_BUFFER: usize = 1 << 20;

/// Replay options.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PcapOptions {
    /// Records longer than this many bytes are corrupt (default 256 KiB).
    pub max_caplen: u32,
    /// Timer calls allowed after the end of input before giving up.
    pub max_timer_steps: u64,
    /// Timer calls allowed between two packets before giving up.
    pub max_steps_per_packet: u64,
}

impl Default for PcapOptions {
    fn default() -> Self {
        PcapOptions {
            max_caplen: 256 * 1024,
            max_timer_steps: 10_000_000,
            max_steps_per_packet: 10_000_000,
        }
    }
}

/// Why an input stopped, or the run failed.
#[derive(Debug, thiserror::Error)]
pub enum PcapError {
    /// A file could not be opened, created or written.
    #[error("{file}: {err}")]
    Io {
        /// The file.
        file: PathBuf,
        /// The OS error.
        err: io::Error,
    },
    /// The file does not start with a pcap or pcapng header.
    #[error("{file}: not a pcap file ({detail})")]
    BadHeader {
        /// The file.
        file: PathBuf,
        /// What was found.
        detail: String,
    },
    /// Not Ethernet.
    #[error("{file}: link type {linktype} is not Ethernet (1)")]
    LinkType {
        /// The file.
        file: PathBuf,
        /// The link type found.
        linktype: u32,
    },
    /// A record is cut short by the end of the file.
    #[error("{file}: record {record} is truncated ({detail})")]
    Truncated {
        /// The file.
        file: PathBuf,
        /// 1-based record number.
        record: u64,
        /// What was missing.
        detail: String,
    },
    /// A record claims an absurd length.
    #[error("{file}: record {record} has a capture length of {caplen} bytes (more than {max})")]
    Caplen {
        /// The file.
        file: PathBuf,
        /// 1-based record number.
        record: u64,
        /// The length found.
        caplen: u64,
        /// The limit.
        max: u32,
    },
    /// A record that is otherwise malformed.
    #[error("{file}: record {record}: {detail}")]
    BadRecord {
        /// The file.
        file: PathBuf,
        /// 1-based record number.
        record: u64,
        /// What is wrong.
        detail: String,
    },
    /// The core kept producing deadlines.
    #[error("the datapath did not settle: still timers pending after {steps} timer calls")]
    Unsettled {
        /// Timer calls made.
        steps: u64,
    },
}

/// What happened on one port.
#[derive(Debug, Default)]
pub struct PortReport {
    /// The binding.
    pub spec: Option<PortSpec>,
    /// The input file, if it existed.
    pub input: Option<PathBuf>,
    /// Records delivered from it.
    pub packets_in: u64,
    /// Records written to the output file.
    pub packets_out: u64,
    /// Why the input stopped early.
    pub error: Option<PcapError>,
}

/// The outcome of a replay.
#[derive(Debug, Default)]
pub struct PcapReport {
    /// Per port, in port order.
    pub ports: Vec<PortReport>,
    /// Frames the core sent to ports without a binding.
    pub unbound_port_frames: u64,
    /// Timer calls made.
    pub timer_calls: u64,
    /// Time of the last event (relative to the origin).
    pub end_time: Time,
}

impl PcapReport {
    /// The input errors, in port order.
    pub fn errors(&self) -> impl Iterator<Item = &PcapError> {
        self.ports.iter().filter_map(|p| p.error.as_ref())
    }
}

enum Format {
    Classic { big_endian: bool, nanos: bool },
    Ng(Box<PcapNgReader<BufReader<File>>>),
}

/// A streaming reader of one input file. Classic pcap records are parsed in
/// place in one block buffer (refilled with large reads, the unread tail
/// moved to the front): the current record's bytes are a range of it, not
/// a copy. pcapng records are copied out of pcap-file's blocks into `data`.
struct Input {
    file: PathBuf,
    r: Option<File>,
    fmt: Format,
    record: u64,
    max_caplen: u32,
    /// Block buffer (classic) and its unread part `pos..len`.
    block: Vec<u8>,
    pos: usize,
    len: usize,
    /// The current record: a range of `block` (classic) or of `data` (ng).
    cur: std::ops::Range<usize>,
    data: Vec<u8>,
}

fn read_full(r: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

impl Input {
    fn open(file: &Path, max_caplen: u32) -> Result<Input, PcapError> {
        let io_err = |err| PcapError::Io {
            file: file.to_owned(),
            err,
        };
        let mut r = File::open(file).map_err(io_err)?;
        let mut magic = [0u8; 4];
        let n = read_full(&mut r, &mut magic).map_err(io_err)?;
        if n < 4 {
            return Err(PcapError::BadHeader {
                file: file.to_owned(),
                detail: format!("only {n} bytes"),
            });
        }
        if magic == [0x0a, 0x0d, 0x0d, 0x0a] {
            // pcapng: reopen and let pcap-file parse the blocks.
            let r = BufReader::with_capacity(IO_BUFFER, File::open(file).map_err(io_err)?);
            let ng = PcapNgReader::new(r).map_err(|e| PcapError::BadHeader {
                file: file.to_owned(),
                detail: format!("pcapng section header: {e}"),
            })?;
            return Ok(Input {
                file: file.to_owned(),
                r: None,
                fmt: Format::Ng(Box::new(ng)),
                record: 0,
                max_caplen,
                block: Vec::new(),
                pos: 0,
                len: 0,
                cur: 0..0,
                data: Vec::new(),
            });
        }
        let mut hdr = [0u8; 24];
        hdr[..4].copy_from_slice(&magic);
        let n = read_full(&mut r, &mut hdr[4..]).map_err(io_err)?;
        if n < 20 {
            return Err(PcapError::BadHeader {
                file: file.to_owned(),
                detail: format!("the global header is {} bytes, not 24", n + 4),
            });
        }
        let (_, h) = PcapHeader::from_slice(&hdr).map_err(|e| PcapError::BadHeader {
            file: file.to_owned(),
            detail: format!(
                "magic {:02x}{:02x}{:02x}{:02x}: {e}",
                magic[0], magic[1], magic[2], magic[3]
            ),
        })?;
        if h.datalink != DataLink::ETHERNET {
            return Err(PcapError::LinkType {
                file: file.to_owned(),
                linktype: u32::from(h.datalink),
            });
        }
        Ok(Input {
            file: file.to_owned(),
            r: Some(r),
            fmt: Format::Classic {
                big_endian: h.endianness == Endianness::Big,
                nanos: h.ts_resolution == TsResolution::NanoSecond,
            },
            record: 0,
            max_caplen,
            // Room for the largest record with its header, and then some.
            block: vec![0; IO_BUFFER.max(max_caplen as usize + 16)],
            pos: 0,
            len: 0,
            cur: 0..0,
            data: Vec::new(),
        })
    }

    /// The current record's bytes (after [`Input::next`] returned a record).
    fn frame(&self) -> &[u8] {
        match self.fmt {
            Format::Classic { .. } => &self.block[self.cur.clone()],
            Format::Ng(_) => &self.data[self.cur.clone()],
        }
    }

    /// Make at least `need` unread bytes available in the block buffer if
    /// the file has them; returns how many are available.
    fn fill(&mut self, need: usize) -> io::Result<usize> {
        if self.len - self.pos >= need {
            return Ok(self.len - self.pos);
        }
        let Some(r) = self.r.as_mut() else {
            return Ok(self.len - self.pos);
        };
        self.block.copy_within(self.pos..self.len, 0);
        self.len -= self.pos;
        self.pos = 0;
        while self.len < need {
            match r.read(&mut self.block[self.len..]) {
                Ok(0) => break,
                Ok(k) => self.len += k,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(self.len)
    }

    /// Advance to the next record (its bytes: [`Input::frame`]) and return
    /// its timestamp; `None` at a clean end of file.
    fn next(&mut self) -> Result<Option<u128>, PcapError> {
        self.record += 1;
        let record = self.record;
        let io_err = |file: &Path, err| PcapError::Io {
            file: file.to_owned(),
            err,
        };
        match &self.fmt {
            Format::Classic { big_endian, nanos } => {
                let (big_endian, nanos) = (*big_endian, *nanos);
                let n = self.fill(16).map_err(|e| io_err(&self.file, e))?;
                if n == 0 {
                    return Ok(None);
                }
                if n < 16 {
                    return Err(PcapError::Truncated {
                        file: self.file.clone(),
                        record,
                        detail: format!("{n} of 16 header bytes"),
                    });
                }
                let h = &self.block[self.pos..self.pos + 16];
                let word = |i: usize| {
                    let b = [h[i], h[i + 1], h[i + 2], h[i + 3]];
                    if big_endian {
                        u32::from_be_bytes(b)
                    } else {
                        u32::from_le_bytes(b)
                    }
                };
                let (sec, frac, caplen) = (word(0), word(4), word(8));
                if caplen > self.max_caplen {
                    return Err(PcapError::Caplen {
                        file: self.file.clone(),
                        record,
                        caplen: u64::from(caplen),
                        max: self.max_caplen,
                    });
                }
                let limit = if nanos { 1_000_000_000 } else { 1_000_000 };
                if frac >= limit {
                    return Err(PcapError::BadRecord {
                        file: self.file.clone(),
                        record,
                        detail: format!("timestamp fraction {frac} is out of range"),
                    });
                }
                let total = 16 + caplen as usize;
                let got = self.fill(total).map_err(|e| io_err(&self.file, e))?;
                if got < total {
                    return Err(PcapError::Truncated {
                        file: self.file.clone(),
                        record,
                        detail: format!("{} of {caplen} data bytes", got - 16),
                    });
                }
                self.cur = self.pos + 16..self.pos + total;
                self.pos += total;
                let frac_ns = if nanos {
                    u128::from(frac)
                } else {
                    u128::from(frac) * 1000
                };
                Ok(Some(u128::from(sec) * 1_000_000_000 + frac_ns))
            }
            Format::Ng(_) => self.next_ng(record),
        }
    }

    /// [`Input::next`] for pcapng.
    fn next_ng(&mut self, record: u64) -> Result<Option<u128>, PcapError> {
        let Input {
            file,
            fmt,
            max_caplen,
            data,
            cur,
            ..
        } = self;
        let file: &Path = file;
        let max_caplen = *max_caplen;
        match fmt {
            Format::Classic { .. } => Ok(None),
            Format::Ng(ng) => loop {
                let block = match ng.next_block() {
                    None => return Ok(None),
                    Some(Err(e)) => {
                        return Err(match e {
                            pcap_file::PcapError::IncompleteBuffer
                            | pcap_file::PcapError::IoError(_) => PcapError::Truncated {
                                file: file.to_owned(),
                                record,
                                detail: e.to_string(),
                            },
                            other => PcapError::BadRecord {
                                file: file.to_owned(),
                                record,
                                detail: other.to_string(),
                            },
                        })
                    }
                    Some(Ok(b)) => b,
                };
                let (iface, ts_raw) = match block {
                    Block::EnhancedPacket(p) => {
                        data.clear();
                        data.extend_from_slice(&p.data);
                        (p.interface_id, Some(p.timestamp.as_nanos()))
                    }
                    Block::SimplePacket(p) => {
                        data.clear();
                        data.extend_from_slice(&p.data);
                        (0, None)
                    }
                    _ => continue,
                };
                let Some(desc) = ng.interfaces().get(iface as usize) else {
                    return Err(PcapError::BadRecord {
                        file: file.to_owned(),
                        record,
                        detail: format!("packet on undeclared interface {iface}"),
                    });
                };
                if desc.linktype != DataLink::ETHERNET {
                    return Err(PcapError::LinkType {
                        file: file.to_owned(),
                        linktype: u32::from(desc.linktype),
                    });
                }
                if data.len() > max_caplen as usize {
                    return Err(PcapError::Caplen {
                        file: file.to_owned(),
                        record,
                        caplen: data.len() as u64,
                        max: max_caplen,
                    });
                }
                // pcap-file hands the raw tick count over as nanoseconds;
                // scale by the interface's resolution (default 10^-6 s).
                let resol = desc
                    .options
                    .iter()
                    .find_map(|o| match o {
                        pcap_file::pcapng::blocks::interface_description::InterfaceDescriptionOption::IfTsResol(r) => Some(*r),
                        _ => None,
                    })
                    .unwrap_or(6);
                let ts_ns = match ts_raw {
                    None => 0,
                    Some(ticks) => {
                        if resol & 0x80 == 0 {
                            let e = u32::from(resol);
                            if e <= 9 {
                                ticks * 10u128.pow(9 - e)
                            } else {
                                ticks / 10u128.pow((e - 9).min(30))
                            }
                        } else {
                            let e = u32::from(resol & 0x7f).min(100);
                            (ticks * 1_000_000_000) >> e
                        }
                    }
                };
                *cur = 0..data.len();
                return Ok(Some(ts_ns));
            },
        }
    }
}

/// An output file: the global header written by pcap-file, then records
/// written here straight into the buffered file (little-endian, the
/// resolution of the header).
struct Output {
    file: PathBuf,
    w: Option<BufWriter<File>>,
    nanos: bool,
    /// The header's snapshot length: no record may be longer.
    snaplen: u32,
    packets: u64,
}

impl Output {
    fn write(&mut self, ts_ns: u128, data: &[u8]) -> Result<(), PcapError> {
        let Some(w) = self.w.as_mut() else {
            return Ok(());
        };
        let secs = (ts_ns / 1_000_000_000).min(u128::from(u32::MAX)) as u32;
        let nanos = (ts_ns % 1_000_000_000) as u32;
        let frac = if self.nanos { nanos } else { nanos / 1000 };
        let len = match u32::try_from(data.len()) {
            Ok(l) if l <= self.snaplen => l,
            _ => {
                return Err(PcapError::Io {
                    file: self.file.clone(),
                    err: io::Error::other(format!(
                        "a {}-byte frame is longer than the file's snapshot length {}",
                        data.len(),
                        self.snaplen
                    )),
                })
            }
        };
        let mut h = [0u8; 16];
        h[0..4].copy_from_slice(&secs.to_le_bytes());
        h[4..8].copy_from_slice(&frac.to_le_bytes());
        h[8..12].copy_from_slice(&len.to_le_bytes());
        h[12..16].copy_from_slice(&len.to_le_bytes());
        w.write_all(&h)
            .and_then(|()| w.write_all(data))
            .map_err(|err| PcapError::Io {
                file: self.file.clone(),
                err,
            })?;
        self.packets += 1;
        Ok(())
    }

    fn close(&mut self) -> Result<(), PcapError> {
        if let Some(mut w) = self.w.take() {
            w.flush().map_err(|err| PcapError::Io {
                file: self.file.clone(),
                err,
            })?;
        }
        Ok(())
    }
}

/// Input path for a port.
pub fn input_path(dir: &Path, spec: &PortSpec) -> PathBuf {
    dir.join(format!("{}_in.pcap", spec.name))
}

/// Output path for a port.
pub fn output_path(dir: &Path, spec: &PortSpec) -> PathBuf {
    dir.join(format!("{}_out.pcap", spec.name))
}

struct Replay<'a, D: Datapath> {
    dp: &'a mut D,
    out: Outputs,
    outputs: Vec<Output>,
    /// Output index by port number.
    by_port: Vec<Option<usize>>,
    origin_ns: u128,
    now: Time,
    report: PcapReport,
}

impl<D: Datapath> Replay<'_, D> {
    fn flush_outputs(&mut self) -> Result<(), PcapError> {
        let ts = self.origin_ns + u128::from(self.now.as_ps() / 1000);
        for (port, bytes) in self.out.iter() {
            match self.by_port.get(port as usize).copied().flatten() {
                Some(i) => self.outputs[i].write(ts, bytes)?,
                None => self.report.unbound_port_frames += 1,
            }
        }
        self.out.clear();
        Ok(())
    }

    /// Fire every deadline at or before `until` (all of them when `None`).
    fn timers(&mut self, until: Option<Time>, max_steps: u64) -> Result<(), PcapError> {
        let mut steps = 0u64;
        while let Some(d) = self.dp.next_deadline() {
            if until.is_some_and(|u| d > u) {
                break;
            }
            steps += 1;
            if steps > max_steps {
                return Err(PcapError::Unsettled { steps });
            }
            self.now = self.now.max(d);
            self.dp.on_timer(self.now, &mut self.out);
            self.report.timer_calls += 1;
            self.flush_outputs()?;
        }
        Ok(())
    }
}

/// Replay the inputs of `ports` from `dir` through `dp`, writing the outputs
/// to `dir`. Input errors are in the report (the other inputs still run);
/// `Err` means the run itself failed (an output could not be written, or
/// the core never settled) — outputs written so far are still flushed.
pub fn run<D: Datapath>(
    dp: &mut D,
    ports: &[PortSpec],
    dir: &Path,
    opts: &PcapOptions,
) -> Result<PcapReport, PcapError> {
    let mut specs = ports.to_vec();
    specs.sort();
    // Open inputs (a missing file is a port without input).
    let mut inputs: Vec<Option<Input>> = Vec::with_capacity(specs.len());
    let mut reports: Vec<PortReport> = Vec::with_capacity(specs.len());
    for s in &specs {
        let path = input_path(dir, s);
        let mut rep = PortReport {
            spec: Some(s.clone()),
            ..PortReport::default()
        };
        let input = if path.exists() {
            rep.input = Some(path.clone());
            match Input::open(&path, opts.max_caplen) {
                Ok(i) => Some(i),
                Err(e) => {
                    rep.error = Some(e);
                    None
                }
            }
        } else {
            None
        };
        inputs.push(input);
        reports.push(rep);
    }
    // Outputs: nanosecond resolution if any classic input is nanosecond.
    let nanos = inputs.iter().flatten().any(|i| {
        matches!(i.fmt, Format::Classic { nanos: true, .. }) || matches!(i.fmt, Format::Ng(_))
    });
    let mut outputs = Vec::with_capacity(specs.len());
    let mut by_port: Vec<Option<usize>> = Vec::new();
    for (i, s) in specs.iter().enumerate() {
        let path = output_path(dir, s);
        let f = File::create(&path).map_err(|err| PcapError::Io {
            file: path.clone(),
            err,
        })?;
        let header = PcapHeader {
            snaplen: opts.max_caplen,
            ts_resolution: if nanos {
                TsResolution::NanoSecond
            } else {
                TsResolution::MicroSecond
            },
            endianness: Endianness::Little,
            ..PcapHeader::default()
        };
        let w = PcapWriter::with_header(BufWriter::with_capacity(IO_BUFFER, f), header)
            .map_err(|e| PcapError::Io {
                file: path.clone(),
                err: io::Error::other(e.to_string()),
            })?
            .into_writer();
        outputs.push(Output {
            file: path,
            w: Some(w),
            nanos,
            snaplen: opts.max_caplen,
            packets: 0,
        });
        let p = s.port as usize;
        if by_port.len() <= p {
            by_port.resize(p + 1, None);
        }
        by_port[p] = Some(i);
    }
    // Prime: first record of each input (timestamps in `heads`, bytes in
    // `bufs`, one reused buffer per input).
    let mut heads: Vec<Option<u128>> = Vec::with_capacity(specs.len());
    for (i, input) in inputs.iter_mut().enumerate() {
        let head = match input {
            Some(inp) => match inp.next() {
                Ok(r) => r,
                Err(e) => {
                    reports[i].error = Some(e);
                    None
                }
            },
            None => None,
        };
        heads.push(head);
    }
    let origin_ns = heads.iter().flatten().copied().min().unwrap_or(0);
    let mut rp = Replay {
        dp,
        out: Outputs::new(),
        outputs,
        by_port,
        origin_ns,
        now: Time::ZERO,
        report: PcapReport::default(),
    };
    let result = (|| -> Result<(), PcapError> {
        loop {
            // The earliest head; ties to the lower port (specs are sorted).
            let next = heads
                .iter()
                .enumerate()
                .filter_map(|(i, h)| h.map(|ts| (ts, i)))
                .min();
            let Some((ts_ns, i)) = next else { break };
            let t = Time::from_ps(
                u64::try_from(ts_ns.saturating_sub(origin_ns).saturating_mul(1000))
                    .unwrap_or(u64::MAX),
            );
            rp.timers(Some(t), opts.max_steps_per_packet)?;
            rp.now = rp.now.max(t);
            if heads[i].take().is_some() {
                if let Some(inp) = inputs[i].as_ref() {
                    rp.dp
                        .on_packet(rp.now, specs[i].port, inp.frame(), &mut rp.out);
                }
                reports[i].packets_in += 1;
                rp.flush_outputs()?;
            }
            if let Some(inp) = inputs[i].as_mut() {
                match inp.next() {
                    Ok(r) => heads[i] = r,
                    Err(e) => {
                        reports[i].error = Some(e);
                        inputs[i] = None;
                    }
                }
            }
        }
        rp.timers(None, opts.max_timer_steps)
    })();
    // Always flush and close every output, even after an error.
    let mut close_err = None;
    for o in rp.outputs.iter_mut() {
        if let Err(e) = o.close() {
            close_err.get_or_insert(e);
        }
    }
    result?;
    if let Some(e) = close_err {
        return Err(e);
    }
    for (rep, o) in reports.iter_mut().zip(&rp.outputs) {
        rep.packets_out = o.packets;
    }
    let mut report = rp.report;
    report.ports = reports;
    report.end_time = rp.now;
    Ok(report)
}
