//! Work spread over the machine's cores, for large inputs: the tools of
//! a catalog are checked and written independently of each other, and a
//! large JSON text is scanned while it is parsed.  Small
//! inputs stay on the calling thread, where starting threads would cost
//! more than it saves.

use std::thread;

/// Items per thread below which a job is not split.
const MIN_PER_THREAD: usize = 64;

/// Most threads one job uses.
const MAX_THREADS: usize = 8;

/// Stack of each worker: as much as Emacs's own thread has, since the
/// work recurses on nested schemas.
const STACK: usize = 8 << 20;

/// How many threads to use for `n` items.
pub(crate) fn threads_for(n: usize) -> usize {
    let cores = thread::available_parallelism().map_or(1, usize::from);
    cores.min(MAX_THREADS).min(n / MIN_PER_THREAD).max(1)
}

/// `items.iter().map(f).collect()`, with the items split in order among
/// several threads when there are many.  A panic in `f` is raised again
/// on the calling thread.
pub fn map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = threads_for(items.len());
    if threads <= 1 {
        return items.iter().map(f).collect();
    }
    let chunk = items.len().div_ceil(threads);
    let f = &f;
    thread::scope(|scope| {
        let workers: Vec<_> = items
            .chunks(chunk)
            .map(|part| (part, spawn(scope, move || part.iter().map(f).collect::<Vec<R>>())))
            .collect();
        let mut out = Vec::with_capacity(items.len());
        for (part, worker) in workers {
            match worker {
                Some(handle) => out.extend(handle.join().unwrap_or_else(|p| std::panic::resume_unwind(p))),
                // No thread to be had: this part is done here.
                None => out.extend(part.iter().map(f)),
            }
        }
        out
    })
}

/// `(a(), b())`, with `b` run on another thread while `a` runs, when the
/// machine has more than one core (and a thread can be started).  A panic
/// in `b` is raised again on the calling thread.
pub fn join<A, B: Send>(a: impl FnOnce() -> A, b: impl Fn() -> B + Sync) -> (A, B) {
    if threads_for(usize::MAX) <= 1 {
        let ra = a();
        return (ra, b());
    }
    let b = &b;
    thread::scope(|scope| {
        let worker = spawn(scope, b);
        let ra = a();
        let rb = match worker {
            Some(handle) => handle.join().unwrap_or_else(|p| std::panic::resume_unwind(p)),
            None => b(),
        };
        (ra, rb)
    })
}

/// How many items [`pipeline`] lets wait between two of its stages: a
/// stage that gets that far ahead waits, so that a slow `take` (Emacs
/// collecting garbage, say) does not pile up every tool in memory.
const QUEUED: usize = 256;

/// Items [`pipeline`] passes from one stage to the next at a time.  Passed
/// one by one, a stage waiting for the next item was woken for each: a
/// catalog of 3,000 tools made about 1,400 context switches, on two cores
/// where three stages share the machine.
const BATCH: usize = 32;

/// `make` hands items to the function it is given, one by one; each is
/// checked by `check` and passed, with what the check found, to `take`
/// on the calling thread, in order.  When `threaded` (the work is large
/// enough to be worth two threads) and the machine has more than one
/// core, `make` runs on one thread and `check` on another while `take`
/// works here, so the three overlap, items passing between them [`BATCH`]
/// at a time; else, or if a thread cannot be started, everything runs
/// here, item by item.  At most [`QUEUED`] items wait between two stages.
/// A panic in `make` or `check` is raised again on the calling thread.
pub fn pipeline<T: Send, C: Send, R: Send>(
    threaded: bool,
    make: impl FnOnce(&mut dyn FnMut(T)) -> R + Send,
    check: impl Fn(&T) -> C + Sync,
    mut take: impl FnMut(T, C),
) -> R {
    if !threaded || threads_for(usize::MAX) <= 1 {
        return in_turn(make, &check, &mut take);
    }
    let make = std::sync::Mutex::new(Some(make));
    let (make_once, check) = (&make, &check);
    let made = thread::scope(|scope| {
        let (to_check, made) = std::sync::mpsc::sync_channel::<Vec<T>>(QUEUED / BATCH);
        let (to_take, checked) = std::sync::mpsc::sync_channel::<Vec<(T, C)>>(QUEUED / BATCH);
        let checker = spawn(scope, move || {
            for batch in made {
                let checked: Vec<(T, C)> = batch
                    .into_iter()
                    .map(|t| {
                        let c = check(&t);
                        (t, c)
                    })
                    .collect();
                if to_take.send(checked).is_err() {
                    break;
                }
            }
        })?;
        let maker = spawn(scope, move || {
            let make = make_once.lock().ok().and_then(|mut m| m.take());
            make.map(|make| {
                let mut batch = Vec::with_capacity(BATCH);
                let made = make(&mut |t: T| {
                    batch.push(t);
                    if batch.len() == BATCH {
                        // The receiver is gone only if `check` or `take` panicked.
                        let _ = to_check.send(std::mem::replace(&mut batch, Vec::with_capacity(BATCH)));
                    }
                });
                if !batch.is_empty() {
                    let _ = to_check.send(batch);
                }
                made
            })
        })?;
        for batch in checked {
            for (t, c) in batch {
                take(t, c);
            }
        }
        let made = maker.join();
        checker.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
        Some(made.unwrap_or_else(|p| std::panic::resume_unwind(p)))
    });
    match made.flatten() {
        Some(r) => r,
        // No thread could be started: `make` has not run.
        None => {
            let make = make.into_inner().ok().flatten().expect("make runs once");
            in_turn(make, &check, &mut take)
        }
    }
}

/// [`pipeline`] on the calling thread: each item checked and taken as it
/// is made.
fn in_turn<T, C, R>(make: impl FnOnce(&mut dyn FnMut(T)) -> R, check: &impl Fn(&T) -> C, take: &mut impl FnMut(T, C)) -> R {
    make(&mut |t: T| {
        let c = check(&t);
        take(t, c)
    })
}

/// A worker thread running `f`, or `None` if none can be started.
pub(crate) fn spawn<'s, R: Send + 's>(
    scope: &'s thread::Scope<'s, '_>,
    f: impl FnOnce() -> R + Send + 's,
) -> Option<thread::ScopedJoinHandle<'s, R>> {
    thread::Builder::new().name("toolspec-worker".into()).stack_size(STACK).spawn_scoped(scope, f).ok()
}

/// Drop `value` on another thread when `big`: freeing a large parsed
/// document or import takes milliseconds the caller need not wait for.
pub fn drop_later<T: Send + 'static>(big: bool, value: T) {
    if big && threads_for(usize::MAX) > 1 {
        // If no thread can be started, the closure, and `value` with it,
        // is dropped here.
        let _ = thread::Builder::new().name("toolspec-free".into()).spawn(move || drop(value));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn map_keeps_order_on_any_size() {
        for n in [0, 1, 63, 64, 200, 1000, 4097] {
            let items: Vec<usize> = (0..n).collect();
            assert_eq!(map(&items, |x| x * 2), items.iter().map(|x| x * 2).collect::<Vec<_>>());
        }
    }

    #[test]
    fn join_gives_both_results_and_raises_a_panic() {
        assert_eq!(join(|| 1, || "two"), (1, "two"));
        let r = std::panic::catch_unwind(|| join(|| 1, || -> u8 { panic!("boom") }));
        assert_eq!(r.unwrap_err().downcast_ref::<&str>(), Some(&"boom"));
    }

    #[test]
    fn pipeline_takes_every_item_in_order_with_its_check() {
        // 1,000 items: more than the queues hold.
        for (n, threaded) in [(0, true), (1, true), (1000, true), (1000, false)] {
            let mut taken = Vec::new();
            let r = pipeline(
                threaded,
                |each: &mut dyn FnMut(usize)| {
                    (0..n).for_each(&mut *each);
                    "made"
                },
                |x: &usize| x * 10,
                |x, c| taken.push((x, c)),
            );
            assert_eq!(r, "made");
            assert_eq!(taken, (0..n).map(|x| (x, x * 10)).collect::<Vec<_>>());
        }
    }

    #[test]
    fn pipeline_queues_are_bounded_and_a_panic_of_take_ends_it() {
        // While `take` is slow, the maker gets at most the two queues (and
        // a batch in each stage) ahead; when `take` panics, the stages
        // waiting on full queues must be let go, not wait for ever.
        use std::sync::atomic::{AtomicUsize, Ordering};
        let made = AtomicUsize::new(0);
        let ahead = AtomicUsize::new(0);
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            pipeline(
                true,
                |each: &mut dyn FnMut(usize)| {
                    for i in 0..100 * QUEUED {
                        made.fetch_add(1, Ordering::SeqCst);
                        each(i);
                    }
                },
                |_: &usize| (),
                |x, _| {
                    if x == 3 {
                        std::thread::sleep(std::time::Duration::from_millis(100));
                        ahead.store(made.load(Ordering::SeqCst), Ordering::SeqCst);
                        panic!("take");
                    }
                },
            )
        }));
        assert_eq!(r.unwrap_err().downcast_ref::<&str>(), Some(&"take"));
        let ahead = ahead.load(Ordering::SeqCst);
        assert!(ahead <= 2 * QUEUED + 3 * BATCH, "{ahead} items made while 4 were taken");
    }

    #[test]
    fn pipeline_raises_a_panic_of_make_or_check() {
        let r = std::panic::catch_unwind(|| {
            pipeline(true, |each: &mut dyn FnMut(u8)| { each(1); panic!("make") }, |_: &u8| (), |_, _| ())
        });
        assert_eq!(r.unwrap_err().downcast_ref::<&str>(), Some(&"make"));
        let r = std::panic::catch_unwind(|| {
            pipeline(true, |each: &mut dyn FnMut(u8)| (0..10).for_each(&mut *each), |x: &u8| if *x == 5 { panic!("check") }, |_, _| ())
        });
        assert_eq!(r.unwrap_err().downcast_ref::<&str>(), Some(&"check"));
    }

    #[test]
    fn map_raises_a_workers_panic() {
        let items: Vec<usize> = (0..1000).collect();
        let r = std::panic::catch_unwind(|| map(&items, |&x| if x == 999 { panic!("boom {x}") } else { x }));
        let p = r.unwrap_err();
        assert_eq!(p.downcast_ref::<String>().map(String::as_str), Some("boom 999"));
    }
}
