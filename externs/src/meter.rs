//! RFC 2698 two-rate three-colour markers (v1model `meter` / `direct_meter`).
//!
//! A [`TrTcm`] holds two token buckets: P (peak: rate PIR, size PBS) and C
//! (committed: rate CIR, size CBS). Both start full when rates are set. In
//! colour-blind mode a packet of size B (1 for packet meters, its length in
//! bytes for byte meters) at time t is
//!
//! * **red** if P has fewer than B tokens (no bucket changes);
//! * else **yellow** if C has fewer than B tokens (P loses B);
//! * else **green** (P and C both lose B).
//!
//! This is exactly RFC 2698 §3 and BMv2's `Meter::execute`. An unconfigured
//! meter marks everything green, as BMv2 does.
//!
//! Rates are given as BMv2's `meter_set_rates` takes them: tokens (packets or
//! bytes) per microsecond, bursts in tokens. Time is the explicit [`Time`]
//! clock. Like BMv2, tokens are credited by comparing against a single time
//! origin (the driver's epoch) rather than accumulating per-interval
//! approximations: the bucket is credited `floor(t × rate)` tokens in total by
//! time `t`, computed in exact integer arithmetic (rates are kept with a
//! resolution of 10⁻⁹ tokens per microsecond), so results are reproducible
//! bit for bit.

use thiserror::Error;

use crate::artifact::MeterUnit;
use crate::stateful::CounterCell;
use crate::time::Time;

/// The colour a meter assigns (v1model `V1MODEL_METER_COLOR_*` values).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum Color {
    /// Within the committed rate (0).
    Green = 0,
    /// Above CIR but within PIR (1).
    Yellow = 1,
    /// Above PIR (2).
    Red = 2,
}

impl Color {
    /// The v1model integer value (0 green, 1 yellow, 2 red).
    pub const fn as_u8(self) -> u8 {
        self as u8
    }
}

/// Errors configuring or using a meter.
#[derive(Clone, Debug, PartialEq, Error)]
pub enum MeterError {
    /// A rate that is negative, NaN, infinite or too large to represent.
    #[error("invalid {which} rate {rate} (must be finite, >= 0 and <= 1e9 per microsecond)")]
    InvalidRate {
        /// "committed" or "peak".
        which: &'static str,
        /// The rejected value.
        rate: f64,
    },
    /// RFC 2698 (and BMv2) require PIR >= CIR.
    #[error("committed rate {cir} is above peak rate {pir}")]
    CirAbovePir {
        /// Committed rate per microsecond.
        cir: f64,
        /// Peak rate per microsecond.
        pir: f64,
    },
    /// Meter index beyond the array.
    #[error("meter index {index} out of range (size {size})")]
    IndexOutOfRange {
        /// The index used.
        index: u64,
        /// The array size.
        size: usize,
    },
}

/// A meter's configuration: two (rate, burst) pairs, rates in tokens per
/// microsecond and bursts in tokens (packets or bytes, per the meter's unit).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MeterRates {
    /// Committed information rate (tokens/µs).
    pub cir: f64,
    /// Committed burst size (tokens).
    pub cbs: u64,
    /// Peak information rate (tokens/µs), ≥ `cir`.
    pub pir: f64,
    /// Peak burst size (tokens).
    pub pbs: u64,
}

/// Largest accepted rate, tokens per microsecond (10¹⁵ per second).
const MAX_RATE_PER_US: f64 = 1e9;
/// Rate resolution: rates are stored as nano-tokens per microsecond.
const NANO: f64 = 1e9;
/// Picoseconds per microsecond × nano-tokens per token.
const PS_PER_US_TIMES_NANO: u128 = 1_000_000 * 1_000_000_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Bucket {
    /// Rate in 10⁻⁹ tokens per microsecond.
    rate_nano_per_us: u64,
    /// Capacity.
    burst: u64,
    /// Tokens now in the bucket.
    tokens: u64,
    /// Tokens credited since the origin (floor(t × rate) at the last update).
    credited: u64,
}

impl Bucket {
    fn new(rate_per_us: f64, burst: u64) -> Bucket {
        Bucket {
            rate_nano_per_us: (rate_per_us * NANO).round() as u64,
            burst,
            tokens: burst,
            credited: 0,
        }
    }

    /// Credit the tokens earned up to `now` (never more than the burst).
    fn refill(&mut self, now: Time) {
        let total =
            u128::from(now.as_ps()) * u128::from(self.rate_nano_per_us) / PS_PER_US_TIMES_NANO;
        let total = u64::try_from(total).unwrap_or(u64::MAX);
        // Time going backwards credits nothing (and does not un-credit).
        if total > self.credited {
            let new = total - self.credited;
            self.credited = total;
            self.tokens = self.tokens.saturating_add(new).min(self.burst);
        }
    }
}

/// An RFC 2698 two-rate three-colour marker, colour-blind, on the explicit clock.
#[derive(Clone, Debug, PartialEq)]
pub struct TrTcm {
    unit: MeterUnit,
    /// Peak and committed buckets; `None` until rates are set.
    buckets: Option<(Bucket, Bucket)>,
    /// Packets and bytes marked green, yellow and red so far (P4Runtime's
    /// `MeterCounterData`); rate changes leave them as they are.
    marked: [CounterCell; 3],
}

impl TrTcm {
    /// An unconfigured meter counting `unit` (marks everything green).
    pub fn new(unit: MeterUnit) -> TrTcm {
        TrTcm {
            unit,
            buckets: None,
            marked: [CounterCell::default(); 3],
        }
    }

    /// A meter with `rates` already set.
    pub fn with_rates(unit: MeterUnit, rates: MeterRates) -> Result<TrTcm, MeterError> {
        let mut m = TrTcm::new(unit);
        m.set_rates(rates)?;
        Ok(m)
    }

    /// What the meter counts.
    pub fn unit(&self) -> MeterUnit {
        self.unit
    }

    /// Whether rates have been set.
    pub fn is_configured(&self) -> bool {
        self.buckets.is_some()
    }

    /// Set the rates (BMv2 `meter_set_rates`); both buckets start full. On
    /// error the meter keeps its previous configuration.
    pub fn set_rates(&mut self, rates: MeterRates) -> Result<(), MeterError> {
        for (which, rate) in [("committed", rates.cir), ("peak", rates.pir)] {
            if !rate.is_finite() || !(0.0..=MAX_RATE_PER_US).contains(&rate) {
                return Err(MeterError::InvalidRate { which, rate });
            }
        }
        if rates.cir > rates.pir {
            return Err(MeterError::CirAbovePir {
                cir: rates.cir,
                pir: rates.pir,
            });
        }
        self.buckets = Some((
            Bucket::new(rates.pir, rates.pbs),
            Bucket::new(rates.cir, rates.cbs),
        ));
        Ok(())
    }

    /// Forget the rates (BMv2 `meter_reset_rates`): everything is green again.
    pub fn reset_rates(&mut self) {
        self.buckets = None;
    }

    /// The configured rates, if any (as stored: rates rounded to 10⁻⁹/µs).
    pub fn rates(&self) -> Option<MeterRates> {
        self.buckets.map(|(p, c)| MeterRates {
            cir: c.rate_nano_per_us as f64 / NANO,
            cbs: c.burst,
            pir: p.rate_nano_per_us as f64 / NANO,
            pbs: p.burst,
        })
    }

    /// Tokens now in the (peak, committed) buckets, if configured (for tests
    /// and control-plane reads; does not refill).
    pub fn tokens(&self) -> Option<(u64, u64)> {
        self.buckets.map(|(p, c)| (p.tokens, c.tokens))
    }

    /// Packets and bytes marked (green, yellow, red) since the meter was
    /// made.
    pub fn marked(&self) -> [CounterCell; 3] {
        self.marked
    }

    /// Set the marked counts (a control plane putting back a meter's state).
    pub fn set_marked(&mut self, marked: [CounterCell; 3]) {
        self.marked = marked;
    }

    /// Mark a packet of `len` bytes arriving at `now` (colour-blind), and
    /// count it under its colour.
    pub fn execute(&mut self, now: Time, len: u32) -> Color {
        let colour = self.mark(now, len);
        let i = match colour {
            Color::Green => 0,
            Color::Yellow => 1,
            Color::Red => 2,
        };
        let m = &mut self.marked[i];
        m.packets = m.packets.wrapping_add(1);
        m.bytes = m.bytes.wrapping_add(u64::from(len));
        colour
    }

    fn mark(&mut self, now: Time, len: u32) -> Color {
        let Some((p, c)) = self.buckets.as_mut() else {
            return Color::Green;
        };
        let need = match self.unit {
            MeterUnit::Packets => 1,
            MeterUnit::Bytes => u64::from(len),
        };
        p.refill(now);
        c.refill(now);
        if p.tokens < need {
            return Color::Red;
        }
        p.tokens -= need;
        if c.tokens < need {
            return Color::Yellow;
        }
        c.tokens -= need;
        Color::Green
    }
}

/// An indexed array of meters (v1model `meter(size, type)`).
#[derive(Clone, Debug, PartialEq)]
pub struct MeterArray {
    meters: Vec<TrTcm>,
}

impl MeterArray {
    /// `size` unconfigured meters counting `unit`.
    pub fn new(size: usize, unit: MeterUnit) -> MeterArray {
        MeterArray {
            meters: vec![TrTcm::new(unit); size],
        }
    }

    /// Number of meters.
    pub fn len(&self) -> usize {
        self.meters.len()
    }

    /// Whether the array has no meters.
    pub fn is_empty(&self) -> bool {
        self.meters.is_empty()
    }

    fn slot(&mut self, index: u64) -> Result<&mut TrTcm, MeterError> {
        let size = self.meters.len();
        usize::try_from(index)
            .ok()
            .and_then(|i| self.meters.get_mut(i))
            .ok_or(MeterError::IndexOutOfRange { index, size })
    }

    /// Configure meter `index`.
    pub fn set_rates(&mut self, index: u64, rates: MeterRates) -> Result<(), MeterError> {
        self.slot(index)?.set_rates(rates)
    }

    /// Configure every meter of the array alike.
    pub fn set_all_rates(&mut self, rates: MeterRates) -> Result<(), MeterError> {
        for m in &mut self.meters {
            m.set_rates(rates)?;
        }
        Ok(())
    }

    /// Forget the rates of meter `index`, or of every meter with `None`.
    pub fn reset_rates(&mut self, index: Option<u64>) -> Result<(), MeterError> {
        match index {
            Some(i) => self.slot(i)?.reset_rates(),
            None => self.meters.iter_mut().for_each(TrTcm::reset_rates),
        }
        Ok(())
    }

    /// Mark a packet of `len` bytes at `now` with meter `index`. Out of range
    /// is an error value the caller counts (v1model leaves the colour unset).
    pub fn execute(&mut self, index: u64, now: Time, len: u32) -> Result<Color, MeterError> {
        Ok(self.slot(index)?.execute(now, len))
    }

    /// The meter at `index`.
    pub fn get(&self, index: u64) -> Option<&TrTcm> {
        usize::try_from(index).ok().and_then(|i| self.meters.get(i))
    }

    /// Meter `index`, to change.
    pub fn get_mut(&mut self, index: u64) -> Option<&mut TrTcm> {
        usize::try_from(index)
            .ok()
            .and_then(|i| self.meters.get_mut(i))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_mark_is_counted_under_its_colour() {
        let mut m = TrTcm::new(MeterUnit::Packets);
        assert_eq!(m.execute(Time::ZERO, 100), Color::Green, "unconfigured");
        m.set_rates(MeterRates {
            cir: 0.0,
            cbs: 1,
            pir: 0.0,
            pbs: 2,
        })
        .unwrap();
        let got: Vec<Color> = (0..4).map(|_| m.execute(Time::ZERO, 10)).collect();
        assert_eq!(got, [Color::Green, Color::Yellow, Color::Red, Color::Red]);
        let cells = m.marked();
        assert_eq!(
            cells.map(|c| (c.packets, c.bytes)),
            [(2, 110), (1, 10), (2, 20)]
        );
        // Rates change; the counts stay.
        m.reset_rates();
        assert_eq!(m.marked(), cells);
        m.set_marked([CounterCell::default(); 3]);
        assert_eq!(m.marked(), [CounterCell::default(); 3]);
    }

    fn rates(cir: f64, cbs: u64, pir: f64, pbs: u64) -> MeterRates {
        MeterRates { cir, cbs, pir, pbs }
    }

    #[test]
    fn unconfigured_is_green() {
        let mut m = TrTcm::new(MeterUnit::Bytes);
        for i in 0..10 {
            assert_eq!(m.execute(Time::from_ns(i), 9000), Color::Green);
        }
        assert!(!m.is_configured());
    }

    #[test]
    fn packet_meter_burst_then_colours() {
        // CBS 2 packets, PBS 4 packets, refill 1 packet per 10 µs (C) and
        // 2 per 10 µs (P).
        let mut m = TrTcm::with_rates(MeterUnit::Packets, rates(0.1, 2, 0.2, 4)).unwrap();
        let t = Time::from_us(1);
        // Buckets start full: P=4, C=2. Burst of 6 packets at the same instant.
        let got: Vec<Color> = (0..6).map(|_| m.execute(t, 64)).collect();
        use Color::*;
        assert_eq!(got, [Green, Green, Yellow, Yellow, Red, Red]);
        assert_eq!(m.tokens(), Some((0, 0)));
        // 10 µs later P earned 2, C earned 1 (credited since the origin:
        // floor(11×0.2)=2 vs floor(1×0.2)=0; floor(11×0.1)=1 vs 0).
        let t2 = Time::from_us(11);
        assert_eq!(m.execute(t2, 64), Green);
        assert_eq!(m.execute(t2, 64), Yellow);
        assert_eq!(m.execute(t2, 64), Red);
    }

    #[test]
    fn red_does_not_consume_and_yellow_consumes_only_peak() {
        let mut m = TrTcm::with_rates(MeterUnit::Bytes, rates(0.0, 100, 0.0, 150)).unwrap();
        let t = Time::ZERO;
        assert_eq!(m.execute(t, 100), Color::Green); // P 50, C 0
        assert_eq!(m.tokens(), Some((50, 0)));
        assert_eq!(m.execute(t, 60), Color::Red); // P 50 < 60: nothing taken
        assert_eq!(m.tokens(), Some((50, 0)));
        assert_eq!(m.execute(t, 50), Color::Yellow); // P 0, C untouched
        assert_eq!(m.tokens(), Some((0, 0)));
    }

    #[test]
    fn byte_meter_sustained_rate() {
        // CIR 100 B/µs (800 Mb/s), PIR 200 B/µs; 1000 B packets every 5 µs =
        // 200 B/µs: at steady state the committed bucket admits one in two.
        let mut m = TrTcm::with_rates(MeterUnit::Bytes, rates(100.0, 1000, 200.0, 1000)).unwrap();
        let mut counts = [0u32; 3];
        for i in 0..200u64 {
            let c = m.execute(Time::from_us(i * 5), 1000);
            counts[c.as_u8() as usize] += 1;
        }
        assert_eq!(counts[2], 0, "never above PIR");
        assert!((99..=101).contains(&counts[0]), "{counts:?}");
        assert_eq!(counts[0] + counts[1], 200);
    }

    #[test]
    fn buckets_cap_at_burst_and_time_backwards_is_harmless() {
        let mut m = TrTcm::with_rates(MeterUnit::Packets, rates(1.0, 3, 1.0, 3)).unwrap();
        assert_eq!(m.execute(Time::from_secs(10), 1), Color::Green);
        assert_eq!(m.tokens(), Some((2, 2)));
        assert_eq!(m.execute(Time::from_secs(1), 1), Color::Green);
        assert_eq!(m.tokens(), Some((1, 1)));
        assert_eq!(m.execute(Time::MAX, 1), Color::Green);
        assert_eq!(m.tokens(), Some((2, 2)));
    }

    #[test]
    fn sub_token_rates_accumulate_exactly() {
        // 0.001 packets/µs = one packet per ms; fractional credit is not lost
        // between calls because credit is computed from the origin.
        let mut m = TrTcm::with_rates(MeterUnit::Packets, rates(0.001, 1, 0.001, 1)).unwrap();
        assert_eq!(m.execute(Time::ZERO, 1), Color::Green);
        for us in (100..1000).step_by(100) {
            assert_eq!(m.execute(Time::from_us(us), 1), Color::Red, "{us}");
        }
        assert_eq!(m.execute(Time::from_us(1000), 1), Color::Green);
    }

    #[test]
    fn bad_rates_rejected() {
        let mut m = TrTcm::new(MeterUnit::Packets);
        assert!(matches!(
            m.set_rates(rates(2.0, 1, 1.0, 1)),
            Err(MeterError::CirAbovePir { .. })
        ));
        assert!(matches!(
            m.set_rates(rates(f64::NAN, 1, 1.0, 1)),
            Err(MeterError::InvalidRate {
                which: "committed",
                ..
            })
        ));
        assert!(matches!(
            m.set_rates(rates(0.0, 1, -1.0, 1)),
            Err(MeterError::InvalidRate { which: "peak", .. })
        ));
        assert!(!m.is_configured());
        m.set_rates(rates(0.5, 1, 1.5, 2)).unwrap();
        assert_eq!(m.rates(), Some(rates(0.5, 1, 1.5, 2)));
        m.reset_rates();
        assert_eq!(m.execute(Time::ZERO, 1), Color::Green);
    }

    #[test]
    fn array_indexing() {
        let mut a = MeterArray::new(2, MeterUnit::Packets);
        a.set_rates(1, rates(0.0, 0, 0.0, 1)).unwrap();
        assert_eq!(a.execute(0, Time::ZERO, 1), Ok(Color::Green));
        assert_eq!(a.execute(1, Time::ZERO, 1), Ok(Color::Yellow));
        assert_eq!(a.execute(1, Time::ZERO, 1), Ok(Color::Red));
        assert_eq!(
            a.execute(2, Time::ZERO, 1),
            Err(MeterError::IndexOutOfRange { index: 2, size: 2 })
        );
        assert!(a.set_rates(u64::MAX, rates(0.0, 0, 0.0, 0)).is_err());
        a.set_all_rates(rates(0.0, 5, 0.0, 5)).unwrap();
        assert_eq!(a.get(0).and_then(TrTcm::tokens), Some((5, 5)));
        assert_eq!(a.len(), 2);
    }
}
