//! The explicit clock every datapath core runs on.
//!
//! Cores never read a wall clock: drivers pass a [`Time`] into `on_packet` /
//! `on_timer` and ask for `next_deadline()`. Time is kept in picoseconds so that
//! both a 2 GHz switch cycle (500 ps) and a 400 Gb/s byte time (20 ps) are exact.

use std::fmt;
use std::ops::{Add, AddAssign, Sub};

use serde::{Deserialize, Serialize};

/// A point in time (or a duration) in picoseconds since the driver's epoch.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct Time(pub u64);

impl Time {
    /// The epoch.
    pub const ZERO: Time = Time(0);
    /// A time later than any deadline a run can reach.
    pub const MAX: Time = Time(u64::MAX);

    /// `ps` picoseconds.
    pub const fn from_ps(ps: u64) -> Time {
        Time(ps)
    }
    /// `ns` nanoseconds.
    pub const fn from_ns(ns: u64) -> Time {
        Time(ns.saturating_mul(1_000))
    }
    /// `us` microseconds.
    pub const fn from_us(us: u64) -> Time {
        Time(us.saturating_mul(1_000_000))
    }
    /// `ms` milliseconds.
    pub const fn from_ms(ms: u64) -> Time {
        Time(ms.saturating_mul(1_000_000_000))
    }
    /// `s` seconds.
    pub const fn from_secs(s: u64) -> Time {
        Time(s.saturating_mul(1_000_000_000_000))
    }
    /// Picoseconds.
    pub const fn as_ps(self) -> u64 {
        self.0
    }
    /// Whole nanoseconds (truncating).
    pub const fn as_ns(self) -> u64 {
        self.0 / 1_000
    }
    /// Seconds as a float, for reports.
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 * 1e-12
    }
    /// `self + d`, saturating at [`Time::MAX`].
    pub const fn saturating_add(self, d: Time) -> Time {
        Time(self.0.saturating_add(d.0))
    }
    /// `self - d`, saturating at zero.
    pub const fn saturating_sub(self, d: Time) -> Time {
        Time(self.0.saturating_sub(d.0))
    }
}

impl Add for Time {
    type Output = Time;
    fn add(self, rhs: Time) -> Time {
        self.saturating_add(rhs)
    }
}

impl AddAssign for Time {
    fn add_assign(&mut self, rhs: Time) {
        *self = self.saturating_add(rhs);
    }
}

impl Sub for Time {
    type Output = Time;
    fn sub(self, rhs: Time) -> Time {
        self.saturating_sub(rhs)
    }
}

impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ps = self.0;
        if ps >= 1_000_000_000_000 {
            write!(f, "{:.6}s", ps as f64 * 1e-12)
        } else if ps >= 1_000_000_000 {
            write!(f, "{:.3}ms", ps as f64 * 1e-9)
        } else if ps >= 1_000_000 {
            write!(f, "{:.3}us", ps as f64 * 1e-6)
        } else {
            write!(f, "{:.3}ns", ps as f64 * 1e-3)
        }
    }
}

/// A clock frequency, used to turn cycle counts (e.g. `DelayCycles`) into [`Time`].
///
/// Conversions are exact to the picosecond: 500 cycles at 2.2 GHz are
/// 227,273 ps (rounded to nearest), not 500 × a rounded period.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Clock {
    /// Frequency in kilohertz (2.2 GHz = 2,200,000 kHz).
    pub khz: u64,
}

impl Clock {
    /// A clock of `mhz` megahertz (0 is treated as 1 MHz).
    pub const fn from_mhz(mhz: u64) -> Clock {
        Clock::from_khz(mhz.saturating_mul(1_000))
    }
    /// A clock of `khz` kilohertz (0 is treated as 1 kHz).
    pub const fn from_khz(khz: u64) -> Clock {
        Clock {
            khz: if khz == 0 { 1 } else { khz },
        }
    }
    /// The duration of `n` cycles, rounded to the nearest picosecond.
    pub const fn cycles(self, n: u64) -> Time {
        // n cycles = n / (khz * 1e3) s = n * 1e9 / khz ps.
        let ps = (n as u128 * 1_000_000_000 + self.khz as u128 / 2) / self.khz as u128;
        Time(if ps > u64::MAX as u128 {
            u64::MAX
        } else {
            ps as u64
        })
    }
    /// Whole cycles elapsed in `t`.
    pub const fn to_cycles(self, t: Time) -> u64 {
        let c = t.0 as u128 * self.khz as u128 / 1_000_000_000;
        if c > u64::MAX as u128 {
            u64::MAX
        } else {
            c as u64
        }
    }
    /// The period of one cycle, rounded to the nearest picosecond (for display).
    pub const fn period(self) -> Time {
        self.cycles(1)
    }
}

/// Serialization time of `bytes` on a link of `gbps` gigabits per second.
pub fn serialization_time(bytes: u64, gbps: u64) -> Time {
    if gbps == 0 {
        return Time::MAX;
    }
    // 1 bit at 1 Gb/s = 1000 ps.
    Time(bytes.saturating_mul(8).saturating_mul(1_000) / gbps)
}

/// CPU time consumed by the calling thread, in seconds: for throughput
/// figures that do not depend on how busy the machine is (benchmarks,
/// profiles). Never used for datapath time, which is always explicit.
pub fn thread_cpu_time() -> f64 {
    let ts = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// CPU time consumed by the whole process (every thread), in seconds: the
/// cost of a run that spreads its work over threads.
pub fn process_cpu_time() -> f64 {
    let ts = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_cycles() {
        let c = Clock::from_mhz(2_000);
        assert_eq!(c.period(), Time(500));
        // 500 NIC delay cycles at Table 5's 2.2 GHz: exact, not 500 x 454 ps.
        assert_eq!(Clock::from_mhz(2_200).cycles(500), Time(227_273));
        assert_eq!(Clock::from_mhz(2_200).to_cycles(Time::from_ns(1)), 2);
        assert_eq!(c.cycles(125), Time::from_ns(62) + Time::from_ps(500));
        assert_eq!(c.to_cycles(Time::from_ns(1)), 2);
    }

    #[test]
    fn serialization() {
        // 1500 B at 400 Gb/s = 30 ns.
        assert_eq!(serialization_time(1500, 400), Time::from_ns(30));
        assert_eq!(serialization_time(1, 0), Time::MAX);
    }

    #[test]
    fn saturating() {
        assert_eq!(Time::MAX + Time(1), Time::MAX);
        assert_eq!(Time(1) - Time(2), Time::ZERO);
        assert_eq!(Time::from_us(2).to_string(), "2.000us");
    }
}
