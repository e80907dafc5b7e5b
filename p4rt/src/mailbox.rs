//! How the gRPC side changes a running datapath without stopping it: it
//! posts jobs (closures over the target) into a [`Mailbox`] and raises a
//! wake flag; the datapath's loop checks the flag (one relaxed atomic load
//! per loop turn, no lock, no allocation) and, when raised, runs every
//! pending job between two packets. A Write batch is one job, so it is
//! applied atomically with respect to packets. The reply comes back on a
//! oneshot channel.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::Arc;

/// A job for the datapath thread.
pub type Job<T> = Box<dyn FnOnce(&mut T) + Send>;

/// The datapath's end: drained between packets.
pub struct Mailbox<T> {
    rx: mpsc::Receiver<Job<T>>,
    wake: Arc<AtomicBool>,
}

/// The control plane's end: posts jobs and waits for their results.
pub struct Poster<T> {
    tx: mpsc::Sender<Job<T>>,
    wake: Arc<AtomicBool>,
}

impl<T> Clone for Poster<T> {
    fn clone(&self) -> Self {
        Poster {
            tx: self.tx.clone(),
            wake: Arc::clone(&self.wake),
        }
    }
}

/// The datapath is gone (the switch stopped).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the datapath has stopped")]
pub struct Gone;

/// A connected pair.
pub fn mailbox<T>() -> (Poster<T>, Mailbox<T>) {
    let (tx, rx) = mpsc::channel();
    let wake = Arc::new(AtomicBool::new(false));
    (
        Poster {
            tx,
            wake: Arc::clone(&wake),
        },
        Mailbox { rx, wake },
    )
}

impl<T> Mailbox<T> {
    /// The flag raised when jobs are posted (for drivers that poll a flag
    /// rather than call [`Mailbox::poll`]).
    pub fn wake_flag(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.wake)
    }

    /// Run the pending jobs if the wake flag is raised; the number run.
    #[inline]
    pub fn poll(&self, target: &mut T) -> usize {
        if self.wake.load(Ordering::Relaxed) {
            self.drain(target)
        } else {
            0
        }
    }

    /// Run every pending job now; the number run.
    pub fn drain(&self, target: &mut T) -> usize {
        self.wake.store(false, Ordering::Relaxed);
        let mut n = 0;
        while let Ok(job) = self.rx.try_recv() {
            job(target);
            n += 1;
        }
        n
    }
}

impl<T: 'static> Poster<T> {
    /// Run `f` on the datapath between two packets without waiting for it
    /// (PacketOut: many queue up and are drained in one turn).
    pub fn post(&self, f: impl FnOnce(&mut T) + Send + 'static) -> Result<(), Gone> {
        self.tx.send(Box::new(f)).map_err(|_| Gone)?;
        self.wake.store(true, Ordering::Release);
        Ok(())
    }

    /// Run `f` on the datapath between two packets and return its result.
    pub async fn run<R: Send + 'static>(
        &self,
        f: impl FnOnce(&mut T) -> R + Send + 'static,
    ) -> Result<R, Gone> {
        let (otx, orx) = tokio::sync::oneshot::channel();
        self.tx
            .send(Box::new(move |t: &mut T| {
                let _ = otx.send(f(t));
            }))
            .map_err(|_| Gone)?;
        // Release: the job is queued before the flag is seen raised.
        self.wake.store(true, Ordering::Release);
        orx.await.map_err(|_| Gone)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jobs_run_only_when_polled() {
        let (post, mb) = mailbox::<u32>();
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let h = std::thread::spawn(move || {
            rt.block_on(post.run(|x: &mut u32| {
                *x += 1;
                *x
            }))
        });
        let mut v = 41;
        while mb.poll(&mut v) == 0 {
            std::thread::yield_now();
        }
        assert_eq!(v, 42);
        assert_eq!(h.join().unwrap(), Ok(42));
        drop(mb);
    }
}
