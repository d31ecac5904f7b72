//! Keeping a pool's other threads at hand through a stretch of many short parallel passes.
//!
//! A rayon worker that finds no work spins for a few dozen rounds and then sleeps; the next
//! parallel pass wakes it with a system call. A substepped rigid solver alternates some hundred
//! short parallel passes a frame with short serial stretches, long enough for the worker to fall
//! asleep, so that on two threads much of the frame went to waking it (a `perf` profile of the
//! 4,095-box pyramid under coloured `tgs-soft`: the calling thread in the kernel's wake-up, the
//! worker in the scheduler). [`keep_awake`] runs a stretch of work with the pool's other
//! threads each holding a job that takes every piece of parallel work offered, and spins rather
//! than sleeps in between, as engines' solvers keep their workers spinning through a step; a
//! held thread lets go once it has found no work for some milliseconds (see [`keep_awake`]).

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};

/// How many rounds in a row a thread held by [`keep_awake`] finds no work before it lets go
/// (each round a look for work and a spin hint: some milliseconds in all).
const LET_GO: u32 = 50_000;

thread_local! {
    /// Whether this thread is inside [`keep_awake`].
    static AWAKE: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f` on the calling thread with the pool's other threads spinning for work until it
/// returns, or until a thread has looked for work `LET_GO` times in a row and found none (it
/// then goes back to the pool's own waiting). Only for a stretch that is the only work on its pool (the calling thread one of the
/// pool's, nothing else running in it): another stretch would find its threads held. On one
/// thread, from a thread outside any pool, or inside another `keep_awake`, it only runs `f`.
pub fn keep_awake<R>(f: impl FnOnce() -> R) -> R {
    let Some(me) = rayon::current_thread_index() else {
        return f();
    };
    if rayon::current_num_threads() < 2 || AWAKE.get() {
        return f();
    }
    let stop = AtomicBool::new(false);
    // (Set also when `f` panics, so that the scope's end never waits on a spinning job.)
    struct Stop<'a>(&'a AtomicBool);
    impl Drop for Stop<'_> {
        fn drop(&mut self) {
            self.0.store(true, Ordering::Release);
            AWAKE.set(false);
        }
    }
    rayon::in_place_scope(|s| {
        let stop = &stop;
        s.spawn_broadcast(move |_, ctx| {
            if ctx.index() == me {
                return;
            }
            // (A thread may take this job while it waits inside another, a piece of the
            // stretch's own work whose end the calling thread is waiting for: spinning until
            // the stretch ends would never let that piece finish. So the job lets go once it
            // has looked for work `LET_GO` times in a row and found none, some milliseconds,
            // far longer than the serial stretches between a frame's parallel passes. Rounds,
            // not time: a thread the host holds off its core a while must not take that for
            // idleness.)
            let mut idle = 0_u32;
            while !stop.load(Ordering::Acquire) {
                if rayon::yield_now() == Some(rayon::Yield::Executed) {
                    idle = 0;
                    continue;
                }
                std::hint::spin_loop();
                idle += 1;
                if idle >= LET_GO {
                    return;
                }
            }
        });
        let _stop = Stop(stop);
        AWAKE.set(true);
        f()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rayon::prelude::*;

    fn pool(threads: usize) -> rayon::ThreadPool {
        rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap()
    }

    /// The stretch's parallel passes all finish, with their sums, and the stretch's value comes
    /// back; afterwards the pool runs work again (its threads were let go).
    #[test]
    fn a_stretch_of_parallel_passes_runs_and_lets_the_threads_go() {
        let pool = pool(2);
        let sums = pool.install(|| {
            keep_awake(|| {
                (1..=200u64)
                    .map(|n| (0..n as usize * 100).into_par_iter().with_min_len(16).map(|k| k as u64).sum::<u64>())
                    .collect::<Vec<_>>()
            })
        });
        for (k, s) in sums.iter().enumerate() {
            let n = 100 * (k as u64 + 1);
            assert_eq!(*s, n * (n - 1) / 2, "pass {k}");
        }
        let seen: Vec<usize> = pool.broadcast(|ctx| ctx.index());
        assert_eq!(seen, vec![0, 1], "every thread takes a broadcast after the stretch");
    }

    /// Inside a stretch, another only runs its work (its threads are already held); outside any
    /// pool, a stretch is the work alone.
    #[test]
    fn nested_and_outside_any_pool_it_only_runs_the_work() {
        let pool = pool(2);
        let v = pool.install(|| keep_awake(|| keep_awake(|| (0..1000u64).into_par_iter().sum::<u64>())));
        assert_eq!(v, 499_500);
        assert_eq!(keep_awake(|| 7), 7);
    }

    /// A thread that takes its spinning job while it waits inside a piece of work the stretch
    /// is waiting for lets go, so that the piece finishes: here the piece waits for any other
    /// job with `yield_now`, which runs the spinning job inside it (this hung, the stretch
    /// waiting for the piece and the piece inside a job that spun until the stretch's end).
    #[test]
    fn a_thread_held_inside_a_piece_of_the_stretch_lets_go() {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let pool = pool(2);
            let (started, done) = (AtomicBool::new(false), AtomicBool::new(false));
            pool.install(|| {
                rayon::join(
                    || {
                        while !started.load(Ordering::Acquire) {
                            std::hint::spin_loop();
                        }
                        keep_awake(|| {
                            while !done.load(Ordering::Acquire) {
                                std::hint::spin_loop();
                            }
                        })
                    },
                    || {
                        started.store(true, Ordering::Release);
                        while rayon::yield_now() != Some(rayon::Yield::Executed) {}
                        done.store(true, Ordering::Release);
                    },
                )
            });
            tx.send(()).unwrap();
        });
        let finished = rx.recv_timeout(std::time::Duration::from_secs(20));
        assert!(finished.is_ok(), "the stretch and the piece wait on each other");
    }

    /// A panic in the stretch reaches the caller and lets the spinning thread go.
    #[test]
    fn a_panic_in_the_stretch_reaches_the_caller() {
        let pool = pool(2);
        let r = pool.install(|| {
            std::panic::catch_unwind(|| {
                keep_awake(|| {
                    let _ = (0..100u64).into_par_iter().sum::<u64>();
                    panic!("the stretch fails");
                })
            })
        });
        assert!(r.is_err());
        assert_eq!(pool.install(|| keep_awake(|| (0..10u64).into_par_iter().sum::<u64>())), 45);
    }
}
