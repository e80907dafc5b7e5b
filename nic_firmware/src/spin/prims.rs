//! The sPIN externs as the engine's target primitives: host memory by DMA,
//! host and HPU atomics, puts, counters and the bounded element-wise
//! externs, each with its cost in HPU cycles and the handler's cycle budget
//! checked before it acts.

use netsparse_engine::program::{TargetCall, TargetPrims, TargetResult};
use netsparse_engine::PacketState;
use netsparse_externs::artifact::{Prim, SpinOp};
use netsparse_externs::Time;

use super::config::{SpinConfig, SpinStats};

/// A send a handler asked for; the NIC frames it when the handler ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Send {
    /// Forward the current packet's payload.
    FromDevice { dst: u32, match_bits: u64 },
    /// A new message from host memory.
    FromHost {
        dst: u32,
        match_bits: u64,
        addr: u64,
        len: u32,
    },
}

/// The NIC's DMA engine towards host memory: writes are queued in order,
/// each occupying it for (bytes + per-write overhead) / bandwidth (PCIe
/// transaction headers make many small writes slower than one large one).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct DmaEngine {
    /// When the last queued write is done.
    pub free_at: Time,
    /// Bytes per ns.
    pub bytes_per_ns: u64,
    /// Overhead bytes per write.
    pub overhead: u64,
}

impl DmaEngine {
    /// Queue a write of `len` bytes issued at `now`.
    pub fn write(&mut self, now: Time, len: u64) {
        let ps = (len + self.overhead).saturating_mul(1000) / self.bytes_per_ns.max(1);
        self.free_at = self.free_at.max(now) + Time::from_ps(ps);
    }
}

/// What a handler sees while it runs.
pub(crate) struct Env<'a> {
    pub cfg: &'a SpinConfig,
    pub host: &'a mut [u8],
    pub hpu_mem: &'a mut [u64],
    pub counters: &'a mut [u64],
    pub stats: &'a mut SpinStats,
    /// The current packet's payload (payload handlers), else `None`.
    pub payload: Option<&'a [u8]>,
    /// Sends issued, in order.
    pub sends: &'a mut Vec<Send>,
    /// Cycles spent in externs so far.
    pub ext_cycles: u64,
    /// The run's budget in cycles.
    pub budget: u64,
    /// The DMA engine.
    pub dma: &'a mut DmaEngine,
    /// When the handler started.
    pub now: Time,
    /// The budget stopped the run.
    pub stopped: bool,
}

/// Cycles of `ns` nanoseconds at `mhz`.
pub(crate) fn ns_to_cycles(ns: u64, mhz: u64) -> u64 {
    ns.saturating_mul(mhz) / 1000
}

impl Env<'_> {
    fn dma_cycles(&self, bytes: u64) -> u64 {
        let ns = self.cfg.dma_latency_ns + bytes.div_ceil(self.cfg.dma_bytes_per_ns);
        ns_to_cycles(ns, self.cfg.hpu_clock_mhz)
    }

    fn host_range(&mut self, addr: u128, len: u64) -> Option<std::ops::Range<usize>> {
        let end = addr.checked_add(u128::from(len))?;
        if end > self.host.len() as u128 {
            self.stats.extern_errors += 1;
            return None;
        }
        Some(addr as usize..end as usize)
    }

    fn host_word(&mut self, addr: u128) -> Option<usize> {
        self.host_range(addr, 8).map(|r| r.start)
    }

    fn read_u64(&self, at: usize) -> u64 {
        let mut b = [0u8; 8];
        b.copy_from_slice(&self.host[at..at + 8]);
        u64::from_le_bytes(b)
    }

    fn run(&mut self, op: SpinOp, a: &[u128]) -> u128 {
        let arg = |i: usize| a.get(i).copied().unwrap_or(0);
        match op {
            SpinOp::DmaToHost | SpinOp::DmaToHostNb => {
                let Some(pl) = self.payload else {
                    self.stats.extern_errors += 1;
                    return 0;
                };
                let (off, len) = (arg(1) as usize, arg(2) as usize);
                if off.checked_add(len).is_none_or(|e| e > pl.len()) {
                    self.stats.extern_errors += 1;
                    return 0;
                }
                if let Some(r) = self.host_range(arg(0), len as u64) {
                    self.host[r].copy_from_slice(&pl[off..off + len]);
                    self.stats.dma_writes += 1;
                    self.stats.dma_write_bytes += len as u64;
                    self.dma.write(self.now, len as u64);
                }
                0
            }
            SpinOp::DmaFromHost => {
                self.stats.dma_reads += 1;
                self.host_word(arg(0))
                    .map_or(0, |at| u128::from(self.read_u64(at)))
            }
            SpinOp::HostFetchAdd | SpinOp::HostCompareSwap => {
                let Some(at) = self.host_word(arg(0)) else {
                    return 0;
                };
                self.stats.host_atomics += 1;
                let old = self.read_u64(at);
                let new = if op == SpinOp::HostFetchAdd {
                    old.wrapping_add(arg(1) as u64)
                } else if old == arg(1) as u64 {
                    arg(2) as u64
                } else {
                    old
                };
                self.host[at..at + 8].copy_from_slice(&new.to_le_bytes());
                u128::from(old)
            }
            SpinOp::HpuFetchAdd | SpinOp::HpuCompareSwap => {
                let Some(w) = self.hpu_mem.get_mut(arg(0) as usize) else {
                    self.stats.extern_errors += 1;
                    return 0;
                };
                let old = *w;
                *w = if op == SpinOp::HpuFetchAdd {
                    old.wrapping_add(arg(1) as u64)
                } else if old == arg(1) as u64 {
                    arg(2) as u64
                } else {
                    old
                };
                self.stats.hpu_atomics += 1;
                u128::from(old)
            }
            SpinOp::PutFromDevice => {
                if self.payload.is_none() {
                    self.stats.extern_errors += 1;
                    return 0;
                }
                self.sends.push(Send::FromDevice {
                    dst: arg(0) as u32,
                    match_bits: arg(1) as u64,
                });
                0
            }
            SpinOp::PutFromHost => {
                let (addr, len) = (arg(2), arg(3) as u64);
                if self.host_range(addr, len).is_some() {
                    self.sends.push(Send::FromHost {
                        dst: arg(0) as u32,
                        match_bits: arg(1) as u64,
                        addr: addr as u64,
                        len: len as u32,
                    });
                }
                0
            }
            SpinOp::Count => {
                match self.counters.get_mut(arg(0) as usize) {
                    Some(c) => *c = c.wrapping_add(arg(1) as u64),
                    None => self.stats.extern_errors += 1,
                }
                0
            }
            SpinOp::DmaScatterStrided => {
                let Some(pl) = self.payload else {
                    self.stats.extern_errors += 1;
                    return 0;
                };
                let (base, mut k) = (arg(0), arg(1) as u64);
                let (block, stride) = (arg(2) as u64, arg(3) as u64);
                if block == 0 || stride < block {
                    self.stats.extern_errors += 1;
                    return 0;
                }
                let mut done = 0usize;
                while done < pl.len() {
                    let within = k % block;
                    let n = ((block - within) as usize).min(pl.len() - done);
                    let addr = base + u128::from((k / block) * stride + within);
                    if let Some(r) = self.host_range(addr, n as u64) {
                        self.host[r].copy_from_slice(&pl[done..done + n]);
                        self.stats.dma_writes += 1;
                        self.stats.dma_write_bytes += n as u64;
                        self.dma.write(self.now, n as u64);
                    }
                    done += n;
                    k += n as u64;
                }
                0
            }
            SpinOp::DmaAccumulate => {
                let Some(pl) = self.payload else {
                    self.stats.extern_errors += 1;
                    return 0;
                };
                let size = match arg(1) {
                    0 | 2 => 4,
                    1 => 8,
                    _ => {
                        self.stats.extern_errors += 1;
                        return 0;
                    }
                };
                let Some(r) = self.host_range(arg(0), pl.len() as u64) else {
                    return 0;
                };
                let dst = &mut self.host[r];
                for (d, s) in dst.chunks_exact_mut(size).zip(pl.chunks_exact(size)) {
                    match arg(1) {
                        0 => {
                            let v = u32::from_le_bytes([d[0], d[1], d[2], d[3]])
                                .wrapping_add(u32::from_le_bytes([s[0], s[1], s[2], s[3]]));
                            d.copy_from_slice(&v.to_le_bytes());
                        }
                        2 => {
                            let v = f32::from_le_bytes([d[0], d[1], d[2], d[3]])
                                + f32::from_le_bytes([s[0], s[1], s[2], s[3]]);
                            d.copy_from_slice(&v.to_le_bytes());
                        }
                        _ => {
                            let mut x = [0u8; 8];
                            x.copy_from_slice(d);
                            let mut y = [0u8; 8];
                            y.copy_from_slice(s);
                            let v = u64::from_le_bytes(x).wrapping_add(u64::from_le_bytes(y));
                            d.copy_from_slice(&v.to_le_bytes());
                        }
                    }
                }
                self.stats.dma_reads += 1;
                self.stats.dma_writes += 1;
                self.stats.dma_write_bytes += pl.len() as u64;
                self.dma.write(self.now, pl.len() as u64);
                0
            }
        }
    }

    /// HPU cycles `op` costs with operands `a`.
    fn cost(&self, op: SpinOp, a: &[u128]) -> u64 {
        let arg = |i: usize| a.get(i).copied().unwrap_or(0) as u64;
        let pl = self.payload.map_or(0, |p| p.len() as u64);
        match op {
            // Waits for the write.
            SpinOp::DmaToHost => self.dma_cycles(arg(2).min(pl)),
            // Issues one DMA command.
            SpinOp::DmaToHostNb | SpinOp::PutFromDevice | SpinOp::PutFromHost => 1,
            // Round trips to host memory.
            SpinOp::DmaFromHost | SpinOp::HostFetchAdd | SpinOp::HostCompareSwap => {
                self.dma_cycles(8)
            }
            SpinOp::HpuFetchAdd | SpinOp::HpuCompareSwap => 1,
            SpinOp::Count => 0,
            // One non-blocking DMA command per contiguous piece.
            SpinOp::DmaScatterStrided => {
                let (k, block) = (arg(1), arg(2).max(1));
                let first = (block - k % block).min(pl);
                1 + (pl - first).div_ceil(block)
            }
            // Read the destination, one add per element, write back (non-blocking).
            SpinOp::DmaAccumulate => {
                let size = if arg(1) == 1 { 8 } else { 4 };
                self.dma_cycles(pl) + pl / size
            }
        }
    }
}

impl TargetPrims for Env<'_> {
    fn call(&mut self, _st: &mut PacketState, call: TargetCall<'_>) -> TargetResult {
        let Prim::Spin { op, .. } = call.prim else {
            self.stats.extern_errors += 1;
            return TargetResult::Value(0);
        };
        let cost = self.cost(*op, call.args);
        let used = call.ops.saturating_mul(self.cfg.cycles_per_op) + self.ext_cycles + cost;
        if used > self.budget {
            self.stopped = true;
            return TargetResult::Exit;
        }
        self.ext_cycles += cost;
        TargetResult::Value(self.run(*op, call.args))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_parts() -> (
        SpinConfig,
        Vec<u8>,
        Vec<u64>,
        Vec<u64>,
        SpinStats,
        Vec<Send>,
    ) {
        (
            SpinConfig::default(),
            vec![0u8; 256],
            vec![0u64; 4],
            vec![0u64; 2],
            SpinStats::default(),
            Vec::new(),
        )
    }

    #[test]
    fn scatter_accumulate_atomics() {
        let (cfg, mut host, mut hpu, mut ctr, mut stats, mut sends) = env_parts();
        let mut dma = DmaEngine::default();
        let pl: Vec<u8> = (1..=10).collect();
        let mut e = Env {
            cfg: &cfg,
            host: &mut host,
            hpu_mem: &mut hpu,
            counters: &mut ctr,
            stats: &mut stats,
            payload: Some(&pl),
            sends: &mut sends,
            ext_cycles: 0,
            budget: u64::MAX,
            dma: &mut dma,
            now: Time::ZERO,
            stopped: false,
        };
        // Stream bytes 3..13 with block 4, stride 8: 3 -> 3, 4..8 -> 8..12, 8..12 -> 16..20, 12 -> 24.
        e.run(SpinOp::DmaScatterStrided, &[100, 3, 4, 8]);
        assert_eq!(e.stats.dma_writes, 4);
        assert_eq!(e.cost(SpinOp::DmaScatterStrided, &[100, 3, 4, 8]), 4);
        assert_eq!(e.run(SpinOp::HpuFetchAdd, &[1, 5]), 0);
        assert_eq!(e.run(SpinOp::HpuCompareSwap, &[1, 5, 9]), 5);
        assert_eq!(e.hpu_mem[1], 9);
        assert_eq!(e.run(SpinOp::HpuFetchAdd, &[99, 5]), 0);
        assert_eq!(e.stats.extern_errors, 1);
        let pl8 = [1u8, 0, 0, 0, 2, 0, 0, 0];
        e.payload = Some(&pl8);
        e.run(SpinOp::DmaAccumulate, &[200, 0]);
        e.run(SpinOp::DmaAccumulate, &[200, 0]);
        assert_eq!(e.run(SpinOp::DmaFromHost, &[200]), 0x4_0000_0002);
        assert_eq!(e.run(SpinOp::HostFetchAdd, &[250, 1]), 0); // out of range
        assert_eq!(e.stats.extern_errors, 2);
        assert_eq!(&host[103], &1);
        assert_eq!(&host[108..112], &[2, 3, 4, 5]);
        assert_eq!(&host[116..120], &[6, 7, 8, 9]);
        assert_eq!(host[124], 10);
    }
}
