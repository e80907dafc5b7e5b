//! `release_free_memory` gives freed heap back to the system: the memory a
//! finished run of `netsparse paper` freed must not stay resident under the
//! next run, which is admitted by its own estimate alone. Its own test
//! binary (one process, one test), so that no other test's allocations
//! move the resident figure it reads.

use netsparse::sim::memory::{current_rss, release_free_memory};

#[test]
fn freed_blocks_below_the_heap_top_are_released() {
    if !cfg!(all(target_os = "linux", target_env = "gnu")) {
        println!("skipping: release_free_memory does nothing without glibc");
        return;
    }
    // 4,096 blocks of 64 KiB, 256 MiB in all. Blocks below glibc's mmap
    // threshold come from the heap; touching every byte makes them
    // resident.
    const BLOCK: usize = 64 << 10;
    const BLOCKS: usize = 4096;
    let mut blocks: Vec<Option<Vec<u8>>> = (0..BLOCKS)
        .map(|i| Some(vec![(i % 251) as u8 + 1; BLOCK]))
        .collect();
    // Free every other block: the holes are not at the heap's top, so
    // `free` alone keeps them resident.
    for b in blocks.iter_mut().step_by(2) {
        *b = None;
    }
    let before = current_rss().expect("VmRSS");
    release_free_memory();
    let after = current_rss().expect("VmRSS");
    // Half the blocks (128 MiB) are free; at least half of that must go.
    assert!(
        before.saturating_sub(after) >= 64 << 20,
        "resident {before} -> {after} bytes after releasing 128 MiB of free blocks"
    );
    // The kept blocks are intact.
    for (i, b) in blocks.iter().enumerate().skip(1).step_by(2) {
        let b = b.as_ref().expect("kept");
        assert!(b.iter().all(|&x| x == (i % 251) as u8 + 1));
    }
}
