//! The NetSparse switch in-process: programs/netsparse_tor.p4 on 16 ports
//! in 4 pipes.

mod ns_common;

use netsparse_bmv2::nsswitch::testing::{property, read_frame, replay, response_frame};
use netsparse_externs::wire::{Frame, PrType};
use netsparse_externs::Time;
use ns_common::*;

#[test]
fn smoke() {
    let mut sw = tor();
    let inputs = vec![
        (Time::from_ns(1000), 12, response_frame(20, 1, 64, &[7, 8]).unwrap()),
        (Time::from_ns(5000), 5, read_frame(5, 20, 64, &[7, 9]).unwrap()),
    ];
    let (sent, settled) = replay(&mut sw, &inputs, 1000);
    assert!(settled);
    for (t, p, f) in &sent {
        let fr = Frame::parse(f).unwrap();
        eprintln!("{t} port {p}: {:?} {:?}", fr.concat, fr.prs().map(|v| v.idx).collect::<Vec<_>>());
    }
    eprintln!("{}", sw.stats().summary());
    assert_eq!(sent.len(), 3);
    let _ = (property(7, 64), PrType::Read);
}
