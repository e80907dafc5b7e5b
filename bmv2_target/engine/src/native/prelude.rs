//! The helpers every generated library calls: slot and validity access,
//! big-endian loads from the packet, deparser output, and the escapes to
//! the interpreter.
//!
//! Like `abi.rs` this file is compiled into the engine (where its tests
//! check it against the interpreter's own helpers) and, as text, into
//! every generated library, where it sits beside `abi` as `super::abi`.
//! It uses nothing but `core` and that module.
//!
//! Every function takes the context as a raw pointer and reads it afresh:
//! a callback may move the output buffer, so nothing is cached across one.

#![allow(clippy::missing_safety_doc)]

use super::abi::NCtx;

/// `u64` slot `i`.
///
/// # Safety
/// `c` is a live context and `i` one of its program's `u64` slots.
#[inline(always)]
pub unsafe fn ld(c: *mut NCtx, i: usize) -> u64 {
    *(*c).n.add(i)
}

/// Write `u64` slot `i`.
///
/// # Safety
/// As [`ld`].
#[inline(always)]
pub unsafe fn st(c: *mut NCtx, i: usize, v: u64) {
    *(*c).n.add(i) = v;
}

/// `u128` slot `i`.
///
/// # Safety
/// `c` is a live context and `i` one of its program's `u128` slots.
#[inline(always)]
pub unsafe fn ldw(c: *mut NCtx, i: usize) -> u128 {
    *(*c).w.add(i)
}

/// Write `u128` slot `i`.
///
/// # Safety
/// As [`ldw`].
#[inline(always)]
pub unsafe fn stw(c: *mut NCtx, i: usize, v: u128) {
    *(*c).w.add(i) = v;
}

/// Is header `h` (< 256) valid?
///
/// # Safety
/// `c` is a live context and `h < 256`.
#[inline(always)]
pub unsafe fn vld(c: *mut NCtx, h: usize) -> bool {
    (*(*c).valid.add(h / 64) >> (h % 64)) & 1 != 0
}

/// Mark header `h` (< 256) valid or invalid.
///
/// # Safety
/// As [`vld`].
#[inline(always)]
pub unsafe fn vset(c: *mut NCtx, h: usize, v: bool) {
    let w = (*c).valid.add(h / 64);
    let m = 1u64 << (h % 64);
    if v {
        *w |= m;
    } else {
        *w &= !m;
    }
}

/// Did a lookahead run past the end of the packet?
///
/// # Safety
/// `c` is a live context.
#[inline(always)]
pub unsafe fn short(c: *mut NCtx) -> bool {
    *(*c).short != 0
}

/// Add a block's `n` statements to the operation count: `true` when the
/// count is now over the budget (the block then ends the run as `exit`).
///
/// # Safety
/// `c` is a live context.
#[inline(always)]
pub unsafe fn count(c: *mut NCtx, n: u64) -> bool {
    let ops = (*c).ops;
    *ops += n;
    *ops > (*c).op_limit
}

/// The `n` (1..=8) bytes of the packet at `pos` as a big-endian integer
/// (zero past the end).
///
/// # Safety
/// `c` is a live context.
#[inline(always)]
pub unsafe fn load_be(c: *mut NCtx, pos: usize, n: u32) -> u64 {
    let len = (*c).frame_len;
    let f = (*c).frame;
    if pos + 8 <= len {
        let mut b = [0u8; 8];
        core::ptr::copy_nonoverlapping(f.add(pos), b.as_mut_ptr(), 8);
        let v = u64::from_be_bytes(b);
        if n >= 8 {
            v
        } else {
            v >> (64 - 8 * n)
        }
    } else {
        let mut v = 0u64;
        for i in 0..n as usize {
            let b = if pos + i < len { *f.add(pos + i) } else { 0 };
            v = (v << 8) | u64::from(b);
        }
        v
    }
}

/// Make sure `need` more bytes fit at the output.
///
/// # Safety
/// `c` is a live deparser context (`out` not null).
#[inline(always)]
pub unsafe fn reserve(c: *mut NCtx, need: usize) {
    if (*c).out_len + need > (*c).out_cap {
        ((*(*c).cb).grow)(c, need);
    }
}

/// Append the first `bytes` (1..=8) bytes of `v`'s big-endian form, `v`
/// already shifted so that they are its most significant ones.
///
/// # Safety
/// `c` is a live deparser context with room for `bytes` more bytes.
#[inline(always)]
pub unsafe fn put(c: *mut NCtx, v: u64, bytes: usize) {
    let b = v.to_be_bytes();
    core::ptr::copy_nonoverlapping(b.as_ptr(), (*c).out.add((*c).out_len), bytes);
    (*c).out_len += bytes;
}

/// Run escaped statement `k` with the interpreter.
///
/// # Safety
/// `c` is a live context and `k` one of its library's escaped statements.
#[inline(always)]
pub unsafe fn esc_stmt(c: *mut NCtx, k: u32) -> u32 {
    ((*(*c).cb).stmt)(c, k)
}

/// Evaluate escaped `u64` expression `k` with the interpreter.
///
/// # Safety
/// As [`esc_stmt`], for an escaped expression.
#[inline(always)]
pub unsafe fn esc_n(c: *mut NCtx, k: u32) -> u64 {
    let mut v = 0u128;
    ((*(*c).cb).expr)(c, k, &mut v);
    v as u64
}

/// Evaluate escaped `u128` expression `k` with the interpreter.
///
/// # Safety
/// As [`esc_n`].
#[inline(always)]
pub unsafe fn esc_w(c: *mut NCtx, k: u32) -> u128 {
    let mut v = 0u128;
    ((*(*c).cb).expr)(c, k, &mut v);
    v
}

/// Apply table `t` to `keys`: the action to run.
///
/// # Safety
/// `c` is a live context and `t` one of its program's tables.
#[inline(always)]
pub unsafe fn apply(c: *mut NCtx, t: u32, keys: &[u128]) -> u32 {
    ((*(*c).cb).apply)(c, t, keys.as_ptr(), keys.len() as u32)
}

/// Call the target primitive of escaped statement `k` with `args`.
///
/// # Safety
/// `c` is a live context and `k` an escaped target primitive.
#[inline(always)]
pub unsafe fn target(c: *mut NCtx, k: u32, args: &[u128]) -> u32 {
    ((*(*c).cb).target)(c, k, args.as_ptr(), args.len() as u32)
}

/// Store `v` big-endian as the 8 bytes at `buf + at` (raw pointers: a
/// slice operation could pull in core's panicking paths, which a library
/// built with `panic=abort` against the unwinding `core` cannot link).
///
/// # Safety
/// `buf + at .. buf + at + 8` is writable.
#[inline(always)]
pub unsafe fn put_word(buf: *mut u8, at: usize, v: u64) {
    let b = v.to_be_bytes();
    core::ptr::copy_nonoverlapping(b.as_ptr(), buf.add(at), 8);
}

/// Hash the `len` bytes at `data` with the engine's algorithm number
/// `algo`.
///
/// # Safety
/// `c` is a live context; `len` bytes at `data` are readable.
#[inline(always)]
pub unsafe fn hash(c: *mut NCtx, algo: u32, data: *const u8, len: usize) -> u64 {
    ((*(*c).cb).hash)(c, algo, data, len)
}

/// Report event `what`.
///
/// # Safety
/// `c` is a live context.
#[inline(always)]
pub unsafe fn event(c: *mut NCtx, what: u32) {
    ((*(*c).cb).event)(c, what)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A context over `frame` with one `u64` slot and an output buffer.
    fn ctx(frame: &[u8], n: &mut [u64; 2], valid: &mut [u64; 4], out: &mut [u8; 64]) -> NCtx {
        NCtx {
            n: n.as_mut_ptr(),
            w: std::ptr::null_mut(),
            valid: valid.as_mut_ptr(),
            frame: frame.as_ptr(),
            frame_len: frame.len(),
            cursor: 0,
            short: std::ptr::null(),
            ops: std::ptr::null_mut(),
            op_limit: 0,
            out: out.as_mut_ptr(),
            out_len: 0,
            out_cap: out.len(),
            env: std::ptr::null_mut(),
            cb: std::ptr::null(),
        }
    }

    proptest! {
        /// The library's big-endian load is the interpreter's, at every
        /// position, near the end of the packet and past it.
        #[test]
        fn load_be_is_the_interpreters(frame in proptest::collection::vec(any::<u8>(), 0..24), pos in 0usize..30, n in 1u8..=8) {
            let (mut slots, mut valid, mut out) = ([0u64; 2], [0u64; 4], [0u8; 64]);
            let mut c = ctx(&frame, &mut slots, &mut valid, &mut out);
            // SAFETY: the context points at live locals of this test.
            let got = unsafe { load_be(&mut c, pos, u32::from(n)) };
            prop_assert_eq!(got, crate::layout::load_be(&frame, pos, n));
        }

        /// Validity bits and slot writes land where the interpreter's
        /// `Bits` and slot arrays keep them; `put` appends big-endian bytes.
        #[test]
        fn bits_slots_and_output(h in 0usize..256, v: u64, bytes in 1usize..=8) {
            let (mut slots, mut valid, mut out) = ([0u64; 2], [0u64; 4], [0u8; 64]);
            let mut c = ctx(&[], &mut slots, &mut valid, &mut out);
            // SAFETY: as above; `h < 256`, slot 1 exists, 8 bytes fit.
            unsafe {
                vset(&mut c, h, true);
                prop_assert!(vld(&mut c, h));
                st(&mut c, 1, v);
                prop_assert_eq!(ld(&mut c, 1), v);
                put(&mut c, v, bytes);
                prop_assert_eq!(c.out_len, bytes);
            }
            let mut bits = crate::state::PacketState::with_sizes(0, 0, 256);
            bits.valid.set(h, true);
            prop_assert_eq!(&valid, bits.valid.inline_mut());
            prop_assert_eq!(&out[..bytes], &v.to_be_bytes()[..bytes]);
        }

        /// A digest's data words land as `Plan::fill` puts them: word `i`
        /// big-endian at byte `8 i`, nothing else touched.
        #[test]
        fn put_word_writes_one_big_endian_word(v: u64, i in 0usize..4) {
            let mut buf = [0xa5u8; 40];
            // SAFETY: `8 i + 8 <= 32 < 40`.
            unsafe { put_word(buf.as_mut_ptr(), 8 * i, v) };
            prop_assert_eq!(&buf[8 * i..8 * i + 8], &v.to_be_bytes()[..]);
            prop_assert!(buf[..8 * i].iter().chain(&buf[8 * i + 8..]).all(|&b| b == 0xa5));
        }
    }
}
