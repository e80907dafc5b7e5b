//! The extern half of the control plane, on the engine: registers,
//! counters (indexed and direct), meters and digests, addressed by the
//! extern's fully-qualified name or a unique suffix, with index and width
//! checks, so every target built on the engine applies the same rules.

use netsparse_externs::meter::MeterRates;
use netsparse_externs::stateful::CounterCell;

use super::resolve;
use crate::error::ControlPlaneError;
use crate::runtime::{DigestMsg, ExternRt};
use crate::word::mask128;
use crate::Engine;

impl Engine {
    fn extern_index(&self, name: &str) -> Result<usize, ControlPlaneError> {
        resolve(
            "extern",
            self.rt.extern_names.iter().map(String::as_str),
            name,
        )
    }

    fn wrong(&self, i: usize, expected: &'static str) -> ControlPlaneError {
        ControlPlaneError::WrongKind {
            name: self.rt.extern_names[i].clone(),
            expected,
            found: self.rt.externs[i].kind_name(),
        }
    }

    /// Read a register cell.
    pub fn register_read(&self, name: &str, index: u64) -> Result<u128, ControlPlaneError> {
        let i = self.extern_index(name)?;
        match &self.rt.externs[i] {
            ExternRt::Register(r) => {
                r.read(index)
                    .map_err(|_| ControlPlaneError::IndexOutOfRange {
                        name: self.rt.extern_names[i].clone(),
                        index,
                        size: r.len(),
                    })
            }
            _ => Err(self.wrong(i, "register")),
        }
    }

    /// Write a register cell (the value must fit the cell width).
    pub fn register_write(
        &mut self,
        name: &str,
        index: u64,
        value: u128,
    ) -> Result<(), ControlPlaneError> {
        let i = self.extern_index(name)?;
        let n = self.rt.extern_names[i].clone();
        let wrong = self.wrong(i, "register");
        match &mut self.rt.externs[i] {
            ExternRt::Register(r) => {
                if value & !mask128(r.width()) != 0 {
                    return Err(ControlPlaneError::RegisterTooWide {
                        name: n,
                        value,
                        width: r.width(),
                    });
                }
                let size = r.len();
                r.write(index, value)
                    .map_err(|_| ControlPlaneError::IndexOutOfRange {
                        name: n,
                        index,
                        size,
                    })
            }
            _ => Err(wrong),
        }
    }

    /// Zero every cell of a register.
    pub fn register_reset(&mut self, name: &str) -> Result<(), ControlPlaneError> {
        let i = self.extern_index(name)?;
        let wrong = self.wrong(i, "register");
        match &mut self.rt.externs[i] {
            ExternRt::Register(r) => {
                r.reset();
                Ok(())
            }
            _ => Err(wrong),
        }
    }

    /// Read a counter cell (indexed counters; direct counters: use
    /// [`Engine::direct_counter_read`]).
    pub fn counter_read(&self, name: &str, index: u64) -> Result<CounterCell, ControlPlaneError> {
        let i = self.extern_index(name)?;
        match &self.rt.externs[i] {
            ExternRt::Counter(c) => c
                .read(index)
                .map_err(|_| ControlPlaneError::IndexOutOfRange {
                    name: self.rt.extern_names[i].clone(),
                    index,
                    size: c.len(),
                }),
            _ => Err(self.wrong(i, "counter")),
        }
    }

    /// Overwrite an indexed counter's cell (P4Runtime MODIFY of a
    /// `CounterEntry`; restoring a cell when a batch is rolled back).
    pub fn counter_write(
        &mut self,
        name: &str,
        index: u64,
        cell: CounterCell,
    ) -> Result<(), ControlPlaneError> {
        let i = self.extern_index(name)?;
        let wrong = self.wrong(i, "counter");
        let n = self.rt.extern_names[i].clone();
        match &mut self.rt.externs[i] {
            ExternRt::Counter(c) => {
                let size = c.len();
                c.write(index, cell)
                    .map_err(|_| ControlPlaneError::IndexOutOfRange {
                        name: n,
                        index,
                        size,
                    })
            }
            _ => Err(wrong),
        }
    }

    /// Zero a counter (indexed, or a table's direct counter).
    pub fn counter_reset(&mut self, name: &str) -> Result<(), ControlPlaneError> {
        let i = self.extern_index(name)?;
        let wrong = self.wrong(i, "counter");
        match &mut self.rt.externs[i] {
            ExternRt::Counter(c) => {
                c.reset();
                Ok(())
            }
            ExternRt::DirectCounter { table } => {
                let table = *table as usize;
                for e in self.rt.tables[table].entries.iter_mut().flatten() {
                    e.counter = CounterCell::default();
                }
                Ok(())
            }
            _ => Err(wrong),
        }
    }

    /// The meter of an indexed meter's cell `index`, or of a direct meter's
    /// entry (`index` = entry handle; `None`: the entry has no meter yet).
    fn meter_cell(
        &self,
        name: &str,
        index: u64,
    ) -> Result<Option<&netsparse_externs::meter::TrTcm>, ControlPlaneError> {
        let i = self.extern_index(name)?;
        let out_of_range = || ControlPlaneError::Meter {
            name: self.rt.extern_names[i].clone(),
            detail: format!("index {index} out of range"),
        };
        match &self.rt.externs[i] {
            ExternRt::Meter(m) => m.get(index).map(Some).ok_or_else(out_of_range),
            ExternRt::DirectMeter { table } => {
                let t = &self.rt.tables[*table as usize];
                let e = u32::try_from(index)
                    .ok()
                    .and_then(|h| t.entries.get(h as usize))
                    .and_then(Option::as_ref)
                    .ok_or_else(out_of_range)?;
                Ok(e.meter.as_deref())
            }
            _ => Err(self.wrong(i, "meter")),
        }
    }

    /// The rates of an indexed meter's cell `index`, or of a direct meter's
    /// entry (`index` = entry handle); `None` when not configured.
    pub fn meter_get_rates(
        &self,
        name: &str,
        index: u64,
    ) -> Result<Option<MeterRates>, ControlPlaneError> {
        Ok(self.meter_cell(name, index)?.and_then(|m| m.rates()))
    }

    /// The name of the direct meter attached to `table`, if it has one.
    pub fn direct_meter_of(&self, table: &str) -> Result<Option<String>, ControlPlaneError> {
        let ti = self.table_index(table)?;
        Ok(self
            .rt
            .externs
            .iter()
            .position(|x| matches!(x, ExternRt::DirectMeter { table } if *table as usize == ti))
            .map(|i| self.rt.extern_names[i].clone()))
    }

    /// Set meter rates: an indexed meter's cell `index` (or every cell when
    /// `None`), or a direct meter's entry (`index` = entry handle).
    pub fn meter_set_rates(
        &mut self,
        name: &str,
        index: Option<u64>,
        rates: MeterRates,
    ) -> Result<(), ControlPlaneError> {
        self.meter_configure(name, index, Some(rates))
    }

    /// Packets and bytes an indexed meter's cell `index`, or a direct
    /// meter's entry (`index` = entry handle), marked (green, yellow, red).
    pub fn meter_marked(
        &self,
        name: &str,
        index: u64,
    ) -> Result<[netsparse_externs::stateful::CounterCell; 3], ControlPlaneError> {
        Ok(self
            .meter_cell(name, index)?
            .map(|m| m.marked())
            .unwrap_or_default())
    }

    /// Put back the marked counts of a meter cell (or of a direct meter's
    /// entry, `index` = entry handle).
    pub fn meter_set_marked(
        &mut self,
        name: &str,
        index: u64,
        marked: [netsparse_externs::stateful::CounterCell; 3],
    ) -> Result<(), ControlPlaneError> {
        let i = self.extern_index(name)?;
        let n = self.rt.extern_names[i].clone();
        let out_of_range = || ControlPlaneError::Meter {
            name: n.clone(),
            detail: format!("index {index} out of range"),
        };
        let wrong = self.wrong(i, "meter");
        match &mut self.rt.externs[i] {
            ExternRt::Meter(m) => {
                m.get_mut(index)
                    .ok_or_else(out_of_range)?
                    .set_marked(marked);
                Ok(())
            }
            ExternRt::DirectMeter { table } => {
                let t = &mut self.rt.tables[*table as usize];
                let e = u32::try_from(index)
                    .ok()
                    .and_then(|h| t.entry_mut(h))
                    .ok_or_else(out_of_range)?;
                if let Some(m) = e.meter.as_deref_mut() {
                    m.set_marked(marked);
                }
                Ok(())
            }
            _ => Err(wrong),
        }
    }

    /// Configure meters as [`Engine::meter_set_rates`]; `None` forgets the
    /// rates (BMv2 `meter_reset_rates`: every packet is green again).
    pub fn meter_configure(
        &mut self,
        name: &str,
        index: Option<u64>,
        rates: Option<MeterRates>,
    ) -> Result<(), ControlPlaneError> {
        let i = self.extern_index(name)?;
        let n = self.rt.extern_names[i].clone();
        let wrong = self.wrong(i, "meter");
        let merr = |e: netsparse_externs::meter::MeterError| ControlPlaneError::Meter {
            name: n.clone(),
            detail: e.to_string(),
        };
        match &mut self.rt.externs[i] {
            ExternRt::Meter(m) => match (index, rates) {
                (Some(ix), Some(r)) => m.set_rates(ix, r).map_err(merr),
                (None, Some(r)) => m.set_all_rates(r).map_err(merr),
                (ix, None) => m.reset_rates(ix).map_err(merr),
            },
            ExternRt::DirectMeter { table } => {
                let t = &mut self.rt.tables[*table as usize];
                let tname = t.name.clone();
                match index {
                    Some(h) => {
                        let e = u32::try_from(h).ok().and_then(|h| t.entry_mut(h)).ok_or(
                            ControlPlaneError::NoSuchEntry {
                                table: tname,
                                handle: h as u32,
                            },
                        )?;
                        match (e.meter.as_deref_mut(), rates) {
                            (Some(m), Some(r)) => m.set_rates(r).map_err(merr),
                            (Some(m), None) => {
                                m.reset_rates();
                                Ok(())
                            }
                            (None, _) => Ok(()),
                        }
                    }
                    None => {
                        for e in t.entries.iter_mut().flatten() {
                            if let Some(m) = e.meter.as_deref_mut() {
                                match rates {
                                    Some(r) => m.set_rates(r).map_err(merr)?,
                                    None => m.reset_rates(),
                                }
                            }
                        }
                        Ok(())
                    }
                }
            }
            _ => Err(wrong),
        }
    }

    /// Collect the digests sent by the data plane since the last call.
    pub fn take_digests(&mut self) -> Vec<DigestMsg> {
        self.rt.digests.drain(..).collect()
    }
}
