//! v1model stateful externs: registers and counters.
//!
//! Both are flat arrays allocated once at load time; reads, writes and counts
//! are O(1) and never allocate. An out-of-range index is an error value (the
//! caller counts it and applies v1model's rule: reads give 0, writes and
//! counts do nothing) rather than a panic.

use thiserror::Error;

use crate::artifact::CounterUnit;

/// Errors of register and counter arrays.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum StatefulError {
    /// A cell index beyond the array.
    #[error("{what} index {index} out of range (size {size})")]
    IndexOutOfRange {
        /// "register" or "counter".
        what: &'static str,
        /// The index used.
        index: u64,
        /// The array size.
        size: usize,
    },
    /// A register cell width this target cannot hold.
    #[error("register width {width} unsupported (1..=128 bits)")]
    UnsupportedWidth {
        /// The requested width in bits.
        width: u16,
    },
}

fn index(what: &'static str, index: u64, size: usize) -> Result<usize, StatefulError> {
    usize::try_from(index)
        .ok()
        .filter(|&i| i < size)
        .ok_or(StatefulError::IndexOutOfRange { what, index, size })
}

/// v1model `register<bit<W>>(N)`: N cells of W ≤ 128 bits, all zero at start
/// (PSA's `Register(N, initial)`: all `initial`). Writes keep the low W bits
/// of the value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegisterArray {
    width: u16,
    mask: u128,
    initial: u128,
    cells: Vec<u128>,
}

impl RegisterArray {
    /// `size` zeroed cells of `width` bits (1..=128).
    pub fn new(width: u16, size: usize) -> Result<RegisterArray, StatefulError> {
        if width == 0 || width > 128 {
            return Err(StatefulError::UnsupportedWidth { width });
        }
        let mask = if width == 128 {
            u128::MAX
        } else {
            (1u128 << width) - 1
        };
        Ok(RegisterArray {
            width,
            mask,
            initial: 0,
            cells: vec![0; size],
        })
    }

    /// `size` cells of `width` bits, each holding the low `width` bits of
    /// `initial` (PSA `Register(size, initial_value)`).
    pub fn with_initial(
        width: u16,
        size: usize,
        initial: u128,
    ) -> Result<RegisterArray, StatefulError> {
        let mut r = RegisterArray::new(width, size)?;
        r.initial = initial & r.mask;
        r.cells.fill(r.initial);
        Ok(r)
    }

    /// Cell width in bits.
    pub fn width(&self) -> u16 {
        self.width
    }

    /// Number of cells.
    pub fn len(&self) -> usize {
        self.cells.len()
    }

    /// Whether the array has no cells.
    pub fn is_empty(&self) -> bool {
        self.cells.is_empty()
    }

    /// The value of cell `idx`.
    pub fn read(&self, idx: u64) -> Result<u128, StatefulError> {
        let i = index("register", idx, self.cells.len())?;
        Ok(self.cells[i])
    }

    /// Store the low `width` bits of `value` in cell `idx`.
    pub fn write(&mut self, idx: u64, value: u128) -> Result<(), StatefulError> {
        let i = index("register", idx, self.cells.len())?;
        self.cells[i] = value & self.mask;
        Ok(())
    }

    /// Every cell back to its initial value, 0 unless the register was made
    /// [`with_initial`](Self::with_initial) (control plane `register_reset`).
    pub fn reset(&mut self) {
        self.cells.fill(self.initial);
    }

    /// All cells, in index order.
    pub fn cells(&self) -> &[u128] {
        &self.cells
    }
}

/// One counter cell: packets and bytes (both kept whatever the unit; the unit
/// says which the program asked for).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CounterCell {
    /// Packets counted.
    pub packets: u64,
    /// Bytes counted.
    pub bytes: u64,
}

/// v1model `counter(N, type)` (and the per-entry cells of a `direct_counter`).
/// Counts wrap at 2⁶⁴ like BMv2's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CounterArray {
    unit: CounterUnit,
    cells: Vec<CounterCell>,
}

impl CounterArray {
    /// `size` zeroed cells counting `unit`.
    pub fn new(size: usize, unit: CounterUnit) -> CounterArray {
        CounterArray {
            unit,
            cells: vec![CounterCell::default(); size],
        }
    }

    /// What the program counts.
    pub fn unit(&self) -> CounterUnit {
        self.unit
    }

    /// Number of cells.
    pub fn len(&self) -> usize {
        self.cells.len()
    }

    /// Whether the array has no cells.
    pub fn is_empty(&self) -> bool {
        self.cells.is_empty()
    }

    /// Count one packet of `bytes` bytes in cell `idx`.
    pub fn count(&mut self, idx: u64, bytes: u32) -> Result<(), StatefulError> {
        let i = index("counter", idx, self.cells.len())?;
        let c = &mut self.cells[i];
        c.packets = c.packets.wrapping_add(1);
        c.bytes = c.bytes.wrapping_add(u64::from(bytes));
        Ok(())
    }

    /// Cell `idx`.
    pub fn read(&self, idx: u64) -> Result<CounterCell, StatefulError> {
        let i = index("counter", idx, self.cells.len())?;
        Ok(self.cells[i])
    }

    /// Overwrite cell `idx` (control plane `counter_write`).
    pub fn write(&mut self, idx: u64, cell: CounterCell) -> Result<(), StatefulError> {
        let i = index("counter", idx, self.cells.len())?;
        self.cells[i] = cell;
        Ok(())
    }

    /// Zero every cell (control plane `counter_reset`).
    pub fn reset(&mut self) {
        self.cells.fill(CounterCell::default());
    }

    /// All cells, in index order.
    pub fn cells(&self) -> &[CounterCell] {
        &self.cells
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn register_initial_value_is_masked_and_restored_by_reset() {
        let mut r = RegisterArray::with_initial(8, 3, 0x1FF).unwrap();
        assert_eq!(r.cells(), &[0xFF, 0xFF, 0xFF]);
        r.write(1, 7).unwrap();
        assert_eq!(r.read(1).unwrap(), 7);
        r.reset();
        assert_eq!(r.cells(), &[0xFF, 0xFF, 0xFF]);
        let mut z = RegisterArray::new(8, 2).unwrap();
        z.write(0, 5).unwrap();
        z.reset();
        assert_eq!(z.cells(), &[0, 0]);
    }

    #[test]
    fn register_masks_and_bounds() {
        let mut r = RegisterArray::new(12, 4).unwrap();
        assert_eq!(r.read(3), Ok(0));
        r.write(3, 0xABCDE).unwrap();
        assert_eq!(r.read(3), Ok(0xCDE));
        assert_eq!(
            r.write(4, 1),
            Err(StatefulError::IndexOutOfRange {
                what: "register",
                index: 4,
                size: 4
            })
        );
        assert!(r.read(u64::MAX).is_err());
        r.reset();
        assert_eq!(r.cells(), &[0, 0, 0, 0]);
        assert_eq!((r.width(), r.len(), r.is_empty()), (12, 4, false));
    }

    #[test]
    fn register_widths() {
        assert_eq!(
            RegisterArray::new(0, 1),
            Err(StatefulError::UnsupportedWidth { width: 0 })
        );
        assert_eq!(
            RegisterArray::new(129, 1),
            Err(StatefulError::UnsupportedWidth { width: 129 })
        );
        let mut r = RegisterArray::new(128, 1).unwrap();
        r.write(0, u128::MAX).unwrap();
        assert_eq!(r.read(0), Ok(u128::MAX));
        let mut b = RegisterArray::new(1, 1).unwrap();
        b.write(0, 2).unwrap();
        assert_eq!(b.read(0), Ok(0));
    }

    #[test]
    fn counters_count_packets_and_bytes() {
        let mut c = CounterArray::new(3, CounterUnit::PacketsAndBytes);
        c.count(1, 64).unwrap();
        c.count(1, 1500).unwrap();
        c.count(2, 0).unwrap();
        assert_eq!(
            c.read(1),
            Ok(CounterCell {
                packets: 2,
                bytes: 1564
            })
        );
        assert_eq!(
            c.read(2),
            Ok(CounterCell {
                packets: 1,
                bytes: 0
            })
        );
        assert_eq!(c.read(0), Ok(CounterCell::default()));
        assert!(matches!(
            c.count(3, 1),
            Err(StatefulError::IndexOutOfRange {
                what: "counter",
                ..
            })
        ));
        c.write(
            0,
            CounterCell {
                packets: u64::MAX,
                bytes: 7,
            },
        )
        .unwrap();
        c.count(0, 1).unwrap();
        assert_eq!(
            c.read(0),
            Ok(CounterCell {
                packets: 0,
                bytes: 8
            })
        );
        c.reset();
        assert!(c.cells().iter().all(|x| *x == CounterCell::default()));
        assert_eq!(c.unit(), CounterUnit::PacketsAndBytes);
    }
}
