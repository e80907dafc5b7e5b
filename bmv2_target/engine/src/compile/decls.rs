//! Declarations: header layouts (contiguous fields, whole bytes), header
//! stacks, the v1model standard metadata (or a scratch slot for other
//! architectures) and extern instances with their size limits.

use netsparse_externs::artifact::{ExternKind, V1Switch};
use netsparse_externs::meter::MeterArray;
use netsparse_externs::stateful::{CounterArray, RegisterArray};

use super::*;
use crate::code::*;
use crate::error::LoadError;
use crate::runtime::ExternRt;
use crate::state::Loc;

use super::cx::*;

/// Header layouts, by header id.
pub(super) fn headers(cx: &mut Cx<'_>) -> Result<Vec<HeaderInfo>, LoadError> {
    let a = cx.a;
    let mut headers = Vec::with_capacity(a.headers.len());
    for (hi, h) in a.headers.iter().enumerate() {
        cx.place = format!("header {}", h.name);
        let mut off = 0u32;
        let mut hf = Vec::with_capacity(h.fields.len());
        for f in &h.fields {
            let fi = cx.field(f.field)?;
            if fi.width != f.width {
                return Err(cx.invalid(format!(
                    "field {} is {} bits in the layout but its slot is {} bits",
                    fi.name, f.width, fi.width
                )));
            }
            if f.bit_offset != off {
                return Err(cx.invalid(format!(
                    "field {} at bit {} (expected {off}: fields must be contiguous)",
                    fi.name, f.bit_offset
                )));
            }
            if let netsparse_externs::artifact::FieldKind::Header(owner) =
                a.fields[f.field.index()].kind
            {
                if owner.index() != hi {
                    return Err(cx.invalid(format!(
                        "field {} belongs to header id {}",
                        fi.name, owner.0
                    )));
                }
            }
            off += u32::from(f.width);
            hf.push(HField {
                loc: fi.loc,
                bit_off: f.bit_offset,
                width: f.width,
            });
        }
        if off != h.bit_width {
            return Err(cx.invalid(format!(
                "bit_width {} but the fields add up to {off}",
                h.bit_width
            )));
        }
        // A varbit field (the last one) is extracted and emitted apart.
        let mut fixed_bits = h.bit_width;
        let varbit = match h.varbit_len {
            None => None,
            Some(len) => {
                let n = (h.varbit_parts.max(1)) as usize;
                if n > hf.len() {
                    return Err(cx.invalid("varbit length in a header without enough fields"));
                }
                let parts = hf.split_off(hf.len() - n);
                if parts.iter().skip(1).any(|p| p.width != 128) {
                    return Err(cx.invalid("a varbit part after the first is not 128 bits"));
                }
                let Loc::N(len) = cx.field(len)?.loc else {
                    return Err(cx.invalid("varbit length slot wider than 64 bits"));
                };
                let max: u32 = parts.iter().map(|p| u32::from(p.width)).sum();
                fixed_bits -= max;
                Some(VarbitInfo {
                    parts: parts.iter().map(|p| p.loc).collect(),
                    max: u16::try_from(max)
                        .map_err(|_| cx.invalid("varbit wider than 65535 bits"))?,
                    len,
                })
            }
        };
        if fixed_bits % 8 != 0 {
            return Err(cx.unsupported(format!(
                "header {} is {} bits, not a whole number of bytes",
                h.name, fixed_bits
            )));
        }
        let plan =
            crate::layout::Plan::new(&hf.iter().map(|f| (f.loc, f.width)).collect::<Vec<_>>(), 0);
        headers.push(HeaderInfo {
            name: h.name.clone(),
            bit_width: fixed_bits,
            fields: hf.into_boxed_slice(),
            plan,
            varbit,
        });
    }

    Ok(headers)
}

/// Header stacks, by stack id.
pub(super) fn stacks(cx: &mut Cx<'_>) -> Result<Vec<StackInfo>, LoadError> {
    let a = cx.a;
    let mut stacks = Vec::with_capacity(a.stacks.len());
    for s in &a.stacks {
        cx.place = format!("header stack {}", s.name);
        let first = s
            .elements
            .first()
            .ok_or_else(|| cx.invalid("stack with no elements"))?;
        let elems: Vec<u32> = s
            .elements
            .iter()
            .map(|h| cx.header_id(*h))
            .collect::<Result<_, _>>()?;
        let layout: Vec<u16> = a.headers[first.index()]
            .fields
            .iter()
            .map(|f| f.width)
            .collect();
        for &e in &elems {
            let l: Vec<u16> = a.headers[e as usize]
                .fields
                .iter()
                .map(|f| f.width)
                .collect();
            if l != layout {
                return Err(cx.invalid("stack elements with different layouts"));
            }
        }
        let ni = cx.field(s.next_index)?;
        let Loc::N(ni_slot) = ni.loc else {
            return Err(cx.invalid("nextIndex slot wider than 64 bits"));
        };
        stacks.push(StackInfo {
            elements: elems.into_boxed_slice(),
            next_index: ni_slot,
        });
    }

    Ok(stacks)
}

/// The v1model standard metadata slots (`scratch` for every one when the
/// program is not v1model).
pub(super) fn standard_metadata(
    cx: &mut Cx<'_>,
    pkg: Option<&V1Switch>,
    scratch: u32,
) -> Result<V1Slots, LoadError> {
    let a = cx.a;
    cx.place = "package V1Switch".into();
    let none = NSlot {
        idx: scratch,
        mask: 0,
    };
    let v1 = match pkg {
        None => V1Slots {
            ingress_port: none,
            egress_spec: none,
            egress_port: none,
            instance_type: none,
            packet_length: none,
            enq_timestamp: none,
            enq_qdepth: none,
            deq_timedelta: none,
            deq_qdepth: none,
            ingress_global_timestamp: none,
            egress_global_timestamp: none,
            mcast_grp: none,
            egress_rid: none,
            checksum_error: none,
            parser_error: none,
            priority: none,
        },
        Some(pkg) => {
            let sm = &pkg.standard_metadata;
            let v1 = V1Slots {
                ingress_port: cx.nslot(sm.ingress_port)?,
                egress_spec: cx.nslot(sm.egress_spec)?,
                egress_port: cx.nslot(sm.egress_port)?,
                instance_type: cx.nslot(sm.instance_type)?,
                packet_length: cx.nslot(sm.packet_length)?,
                enq_timestamp: cx.nslot(sm.enq_timestamp)?,
                enq_qdepth: cx.nslot(sm.enq_qdepth)?,
                deq_timedelta: cx.nslot(sm.deq_timedelta)?,
                deq_qdepth: cx.nslot(sm.deq_qdepth)?,
                ingress_global_timestamp: cx.nslot(sm.ingress_global_timestamp)?,
                egress_global_timestamp: cx.nslot(sm.egress_global_timestamp)?,
                mcast_grp: cx.nslot(sm.mcast_grp)?,
                egress_rid: cx.nslot(sm.egress_rid)?,
                checksum_error: cx.nslot(sm.checksum_error)?,
                parser_error: cx.nslot(sm.parser_error)?,
                priority: cx.nslot(sm.priority)?,
            };
            // User metadata is zeroed with every other slot per packet; only check ids.
            for f in &pkg.user_metadata {
                cx.field(*f)?;
            }
            for (what, id) in [
                ("parser", pkg.parser.index() < a.parsers.len()),
                (
                    "verifyChecksum",
                    pkg.verify_checksum.index() < a.controls.len(),
                ),
                ("ingress", pkg.ingress.index() < a.controls.len()),
                ("egress", pkg.egress.index() < a.controls.len()),
                (
                    "computeChecksum",
                    pkg.compute_checksum.index() < a.controls.len(),
                ),
                ("deparser", pkg.deparser.index() < a.controls.len()),
            ] {
                if !id {
                    return Err(cx.invalid(format!("{what} id out of range")));
                }
            }
            v1
        }
    };

    Ok(v1)
}

/// Extern instances and their names, by extern id; a Property Cache only
/// for a target (`target`) that owns one.
pub(super) fn externs(
    cx: &mut Cx<'_>,
    target: bool,
) -> Result<(Vec<ExternRt>, Vec<String>), LoadError> {
    let a = cx.a;
    let mut externs = Vec::with_capacity(a.externs.len());
    let mut names = Vec::with_capacity(a.externs.len());
    for e in &a.externs {
        cx.place = format!("extern {}", e.name);
        let too_big = |size: u32| size > MAX_EXTERN_CELLS;
        let rt = match &e.kind {
            ExternKind::Register {
                width,
                size,
                initial,
            } => {
                if too_big(*size) {
                    return Err(
                        cx.unsupported(format!("{size} register cells (max {MAX_EXTERN_CELLS})"))
                    );
                }
                ExternRt::Register(
                    RegisterArray::with_initial(*width, *size as usize, *initial)
                        .map_err(|err| cx.invalid(err.to_string()))?,
                )
            }
            ExternKind::Counter { size, unit } => {
                if too_big(*size) {
                    return Err(
                        cx.unsupported(format!("{size} counter cells (max {MAX_EXTERN_CELLS})"))
                    );
                }
                ExternRt::Counter(CounterArray::new(*size as usize, *unit))
            }
            ExternKind::Meter { size, unit } => {
                if too_big(*size) {
                    return Err(cx.unsupported(format!("{size} meters (max {MAX_EXTERN_CELLS})")));
                }
                ExternRt::Meter(MeterArray::new(*size as usize, *unit))
            }
            ExternKind::DirectCounter { table, .. } => {
                if table.index() >= a.tables.len() {
                    return Err(cx.invalid(format!("table id {} out of range", table.0)));
                }
                ExternRt::DirectCounter { table: table.0 }
            }
            ExternKind::DirectMeter { table, .. } => {
                if table.index() >= a.tables.len() {
                    return Err(cx.invalid(format!("table id {} out of range", table.0)));
                }
                ExternRt::DirectMeter { table: table.0 }
            }
            // The target owns the cache (CacheLookup/CacheInsert go to its hook).
            ExternKind::PropertyCache if target => ExternRt::PropertyCache,
            ExternKind::PropertyCache => {
                return Err(cx
                    .unsupported("a Property Cache (NetSparse middle pipes) in a v1model program"))
            }
            ExternKind::Checksum { algo, .. } => ExternRt::Checksum {
                algo: *algo,
                buf: Vec::with_capacity(64),
            },
            ExternKind::InternetChecksum => ExternRt::InternetChecksum { sum: 0 },
        };
        externs.push(rt);
        names.push(e.name.clone());
    }

    Ok((externs, names))
}
