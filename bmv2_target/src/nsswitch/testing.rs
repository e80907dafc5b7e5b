//! Test support: a timed replay driver for any datapath, as the pcap driver
//! runs one. The frames, properties, routes and the middle-pipe workload
//! live in [`super::workload`] and are re-exported here for the tests.

use netsparse_externs::{Datapath, Outputs, Time};

/// A frame that left the switch: when, on which port, the bytes.
pub type Sent = (Time, u32, Vec<u8>);

/// Replay `inputs` ((time, port, frame), in time order; ties in the given
/// order) through `dp` the way the pcap driver does: every deadline at or
/// before a packet's time fires first, and after the last input the timers
/// run until none is left (at most `max_timer_steps` calls). Returns every
/// output with the time of the call that produced it, and whether the
/// datapath settled.
pub fn replay<D: Datapath>(
    dp: &mut D,
    inputs: &[(Time, u32, Vec<u8>)],
    max_timer_steps: usize,
) -> (Vec<Sent>, bool) {
    let mut sent = Vec::new();
    let mut out = Outputs::new();
    let mut now = Time::ZERO;
    let collect = |t: Time, out: &mut Outputs, sent: &mut Vec<Sent>| {
        sent.extend(out.iter().map(|(p, b)| (t, p, b.to_vec())));
        out.clear();
    };
    let mut steps = 0usize;
    for (t, port, frame) in inputs {
        let t = (*t).max(now);
        while let Some(d) = dp.next_deadline().filter(|d| *d <= t) {
            if steps >= max_timer_steps {
                return (sent, false);
            }
            steps += 1;
            now = now.max(d);
            dp.on_timer(now, &mut out);
            collect(now, &mut out, &mut sent);
        }
        now = t;
        dp.on_packet(now, *port, frame, &mut out);
        collect(now, &mut out, &mut sent);
    }
    while let Some(d) = dp.next_deadline() {
        if steps >= max_timer_steps {
            return (sent, false);
        }
        steps += 1;
        now = now.max(d);
        dp.on_timer(now, &mut out);
        collect(now, &mut out, &mut sent);
    }
    (sent, true)
}

pub use super::workload::*;
