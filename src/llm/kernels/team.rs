//! A team of helper threads that stay awake through a forward step, so that the ~200 small
//! parallel loops of a decode step (each multiply, the attention) start on every core at once
//! instead of waking a sleeping worker each time (BENCHMARKS.md: 88 context switches a step
//! with rayon's pool, and batch 1 streaming at one core's bandwidth).
//!
//! The calling thread works too. Helpers spin while some thread is inside [`awake`] (a
//! forward step) and for a short while after a loop otherwise, then sleep on a condition
//! variable. A loop that finds the team in use (another thread's step, a loop nested in a
//! loop) runs on rayon's pool instead, so callers never wait for each other here.

use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

use rayon::prelude::*;

/// How long a helper spins for the next loop while a step is running before it sleeps.
const STEP_SPIN: Duration = Duration::from_millis(5);
/// How long it spins after a loop when no step is running.
const IDLE_SPIN: Duration = Duration::from_micros(200);
/// Loops with more items than the ticket's index field holds run on rayon.
const MAX_ITEMS: usize = 0xFFFF;

/// One parallel loop, on the stack of the thread that posted it.
struct Job<'a> {
    f: &'a (dyn Fn(usize) + Sync),
    done: AtomicUsize,
    panicked: AtomicBool,
}

struct Team {
    helpers: usize,
    /// Held by the thread whose loop the team runs.
    busy: AtomicBool,
    /// `generation << 32 | lo << 16 | hi`, the items `lo..hi` not yet claimed. The poster
    /// claims from the front and the helpers from the back, so with two cores each streams
    /// one contiguous run of weights. A claim is a compare-and-swap, which fails once the
    /// loop has moved on, so a claimed item always belongs to a loop whose poster is still
    /// waiting (and whose `Job` is alive).
    ticket: AtomicU64,
    job: AtomicPtr<Job<'static>>,
    /// Threads inside [`awake`].
    steps: AtomicUsize,
    sleepers: AtomicUsize,
    lock: Mutex<()>,
    wake: Condvar,
}

fn team() -> &'static Team {
    static TEAM: OnceLock<&'static Team> = OnceLock::new();
    TEAM.get_or_init(|| {
        let helpers = rayon::current_num_threads().saturating_sub(1);
        let t: &'static Team = Box::leak(Box::new(Team {
            helpers,
            busy: AtomicBool::new(false),
            ticket: AtomicU64::new(0),
            job: AtomicPtr::new(std::ptr::null_mut()),
            steps: AtomicUsize::new(0),
            sleepers: AtomicUsize::new(0),
            lock: Mutex::new(()),
            wake: Condvar::new(),
        }));
        for i in 0..helpers {
            let spawned = std::thread::Builder::new()
                .name(format!("humanoid-team-{i}"))
                .spawn(move || t.help());
            if spawned.is_err() {
                // Without its helpers the team is never free: every loop runs on rayon.
                t.busy.store(true, Ordering::SeqCst);
            }
        }
        t
    })
}

/// Runs `f` (a forward step) with the team's helpers spinning between its loops.
pub(crate) fn awake<R>(f: impl FnOnce() -> R) -> R {
    struct Leave(&'static Team);
    impl Drop for Leave {
        fn drop(&mut self) {
            self.0.steps.fetch_sub(1, Ordering::SeqCst);
        }
    }
    let t = team();
    t.steps.fetch_add(1, Ordering::SeqCst);
    let _leave = Leave(t);
    f()
}

/// Calls `f(i)` for every `i < n`, in parallel, returning when all are done.
pub(crate) fn for_each(n: usize, f: &(dyn Fn(usize) + Sync)) {
    if n <= 1 {
        (0..n).for_each(f);
        return;
    }
    let t = team();
    if t.helpers == 0
        || n > MAX_ITEMS
        || t.busy
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
    {
        (0..n).into_par_iter().for_each(f);
        return;
    }
    t.run(n, f);
    t.busy.store(false, Ordering::Release);
}

impl Team {
    /// Posts a loop, works on it and waits for the helpers' items.
    fn run(&self, n: usize, f: &(dyn Fn(usize) + Sync)) {
        let job = Job {
            f,
            done: AtomicUsize::new(0),
            panicked: AtomicBool::new(false),
        };
        let gen = (self.ticket.load(Ordering::Relaxed) >> 32).wrapping_add(1) & 0xFFFF_FFFF;
        let ptr = (&job as *const Job<'_>).cast::<Job<'static>>().cast_mut();
        self.job.store(ptr, Ordering::Release);
        self.ticket.store(gen << 32 | n as u64, Ordering::SeqCst);
        if self.sleepers.load(Ordering::SeqCst) > 0 {
            let _g = self.lock.lock().unwrap_or_else(|e| e.into_inner());
            self.wake.notify_all();
        }
        self.work(gen, ptr, true);
        while job.done.load(Ordering::Acquire) < n {
            std::hint::spin_loop();
        }
        if job.panicked.load(Ordering::Relaxed) {
            resume_unwind(Box::new("a parallel kernel loop panicked"));
        }
    }

    /// Claims and runs items of loop `gen` until none is left, from the front or the back.
    fn work(&self, gen: u64, job: *const Job<'static>, front: bool) {
        loop {
            let v = self.ticket.load(Ordering::Acquire);
            let (lo, hi) = ((v >> 16) & 0xFFFF, v & 0xFFFF);
            if v >> 32 != gen || lo >= hi {
                return;
            }
            let (i, next) = if front {
                (lo, v + (1 << 16))
            } else {
                (hi - 1, v - 1)
            };
            if self
                .ticket
                .compare_exchange_weak(v, next, Ordering::AcqRel, Ordering::Acquire)
                .is_err()
            {
                continue;
            }
            let i = i as usize;
            // SAFETY: item i of loop `gen` is claimed and not done, so the loop's poster
            // is still waiting in `run` and `job` (read after this generation was posted)
            // points to its live `Job`.
            let job = unsafe { &*job };
            if catch_unwind(AssertUnwindSafe(|| (job.f)(i))).is_err() {
                job.panicked.store(true, Ordering::Relaxed);
            }
            job.done.fetch_add(1, Ordering::Release);
        }
    }

    /// A helper's life: wait for a new loop (spinning, then sleeping), work on it.
    fn help(&self) {
        let mut seen = self.ticket.load(Ordering::Acquire) >> 32;
        loop {
            let mut since: Option<Instant> = None;
            let mut spins = 0u32;
            let gen = loop {
                let g = self.ticket.load(Ordering::Acquire) >> 32;
                if g != seen {
                    break g;
                }
                spins = spins.wrapping_add(1);
                if spins.is_multiple_of(64) {
                    let t0 = *since.get_or_insert_with(Instant::now);
                    let budget = if self.steps.load(Ordering::Relaxed) > 0 {
                        STEP_SPIN
                    } else {
                        IDLE_SPIN
                    };
                    if t0.elapsed() > budget {
                        self.sleep(seen);
                        since = None;
                    }
                }
                std::hint::spin_loop();
            };
            seen = gen;
            self.work(gen, self.job.load(Ordering::Acquire), false);
        }
    }

    /// Sleeps until a loop newer than `seen` is posted.
    fn sleep(&self, seen: u64) {
        let mut g = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        self.sleepers.fetch_add(1, Ordering::SeqCst);
        while self.ticket.load(Ordering::SeqCst) >> 32 == seen {
            g = self.wake.wait(g).unwrap_or_else(|e| e.into_inner());
        }
        self.sleepers.fetch_sub(1, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_item_runs_once_from_many_threads() {
        let counts: Vec<AtomicUsize> = (0..1000).map(|_| AtomicUsize::new(0)).collect();
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for n in [2, 7, 1000] {
                        awake(|| for_each(n, &|i| _ = counts[i].fetch_add(1, Ordering::Relaxed)));
                    }
                });
            }
        });
        for (i, c) in counts.iter().enumerate() {
            let want = 4 * (1 + (i < 7) as usize + (i < 2) as usize);
            assert_eq!(c.load(Ordering::Relaxed), want, "item {i}");
        }
    }

    #[test]
    fn a_panicking_item_panics_the_caller_after_the_rest() {
        let ran = AtomicUsize::new(0);
        let r = catch_unwind(AssertUnwindSafe(|| {
            for_each(64, &|i| {
                ran.fetch_add(1, Ordering::Relaxed);
                assert_ne!(i, 5);
            })
        }));
        assert!(r.is_err());
        assert!(ran.load(Ordering::Relaxed) >= 1);
        let after = AtomicUsize::new(0);
        for_each(3, &|_| _ = after.fetch_add(1, Ordering::Relaxed));
        assert_eq!(after.load(Ordering::Relaxed), 3);
    }
}
