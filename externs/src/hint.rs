//! Performance hints with no effect on results: asking the CPU to start
//! loading a value's cache line before the simulator needs it, so that
//! state spread over many simulated devices (filters, tables, caches) is
//! fetched while other work goes on.

/// Ask the CPU to bring the cache line holding `x` into its caches.
#[inline]
pub fn prefetch<X>(x: &X) {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: PREFETCHT0 never faults and writes no memory; SSE is
        // part of the x86_64 baseline, and the pointer is to a live value.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(core::ptr::from_ref(x).cast()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = x;
}
