//! Building a run's devices on several threads: [`map_on_threads`] maps a
//! function over a list on up to N threads and returns the results in the
//! list's order, so a cluster built this way is the one built one device
//! after another (each device's construction depends only on its own
//! inputs) and the first error, in device order, is the one reported.
//! [`cluster::run_mode`](super::cluster::run_mode) builds its NICs (each
//! host's distinct remote idxs) and its switches (the ToRs' Property
//! Caches) with the event loop's thread count.

/// `f(&item)` for every item, on up to `threads` threads (the
/// calling one included; 0 or 1: on the calling thread, in order). Thread
/// `k` maps items `k`, `k + threads`, `k + 2 * threads`, ...: a fixed
/// share, so which thread built which device (and so which malloc arena
/// its memory came from) is the same on every run; the results come back in
/// `items`' order. A panic in `f` is resumed on the calling thread once
/// every thread has stopped.
pub(crate) fn map_on_threads<T, R, F>(items: &[T], threads: usize, f: F) -> Vec<R>
where
    T: Sync,
    R: Send,
    F: Fn(&T) -> R + Sync,
{
    let threads = threads.min(items.len());
    if threads <= 1 {
        return items.iter().map(f).collect();
    }
    let share = |k: usize| -> Vec<R> { items.iter().skip(k).step_by(threads).map(&f).collect() };
    let shares: Vec<Vec<R>> = std::thread::scope(|s| {
        let helpers: Vec<_> = (1..threads).map(|k| s.spawn(move || share(k))).collect();
        let mut shares = vec![share(0)];
        for h in helpers {
            match h.join() {
                Ok(p) => shares.push(p),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        shares
    });
    // Interleave the shares back: item i is share i % threads's
    // (i / threads)-th result.
    let mut iters: Vec<_> = shares.into_iter().map(Vec::into_iter).collect();
    (0..items.len())
        .map(|i| {
            iters[i % threads]
                .next()
                .expect("share k holds every threads-th item from k")
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn results_come_back_in_order_whatever_the_thread_count() {
        let items: Vec<u64> = (0..97).collect();
        let serial = map_on_threads(&items, 1, |&x| x * 1000 + x * x);
        for threads in [0, 2, 3, 8, 200] {
            let got = map_on_threads(&items, threads, |&x| x * 1000 + x * x);
            assert_eq!(got, serial, "{threads} threads");
        }
        assert_eq!(serial[5], 5025);
    }

    #[test]
    fn every_item_is_mapped_once_on_more_than_one_thread() {
        let calls = AtomicUsize::new(0);
        let seen = std::sync::Mutex::new(std::collections::HashSet::new());
        let items: Vec<u32> = (0..64).collect();
        let out = map_on_threads(&items, 2, |&x| {
            calls.fetch_add(1, Ordering::Relaxed);
            seen.lock().unwrap().insert(std::thread::current().id());
            // Each item waits (up to 10 s) until both threads have taken
            // one: on one thread alone this cannot happen.
            let start = std::time::Instant::now();
            while seen.lock().unwrap().len() < 2 && start.elapsed().as_secs() < 10 {
                std::thread::yield_now();
            }
            x + 1
        });
        assert_eq!(calls.load(Ordering::Relaxed), 64);
        assert_eq!(out, (1..=64).collect::<Vec<u32>>());
        assert_eq!(seen.lock().unwrap().len(), 2, "both threads took items");
    }

    #[test]
    fn the_first_error_in_item_order_is_the_one_a_caller_sees() {
        // Items 5 and 6 fail; on two threads they are built by different
        // threads, and the later one may well finish first.
        let items: Vec<u32> = (0..10).collect();
        for threads in [1, 2, 3] {
            let built = map_on_threads(&items, threads, |&x| {
                if x == 5 {
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                if x == 5 || x == 6 {
                    Err(format!("item {x} failed"))
                } else {
                    Ok(x)
                }
            });
            let first = built.into_iter().collect::<Result<Vec<u32>, String>>();
            assert_eq!(first, Err("item 5 failed".to_owned()), "{threads} threads");
        }
    }

    #[test]
    fn an_empty_list_maps_to_nothing() {
        let none: Vec<u8> = Vec::new();
        assert!(map_on_threads(&none, 4, |&x| x).is_empty());
    }

    #[test]
    #[should_panic(expected = "item 3")]
    fn a_panic_on_a_helper_thread_reaches_the_caller() {
        let items: Vec<u32> = (0..8).collect();
        map_on_threads(&items, 2, |&x| {
            if x == 3 {
                panic!("item 3");
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
            x
        });
    }
}
