//! Work spread over the machine's cores, for large inputs: the tools of
//! a catalog are checked and written independently of each other, and a
//! large JSON text is scanned while it is parsed.  Small
//! inputs stay on the calling thread, where starting threads would cost
//! more than it saves.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;

/// Inputs from this size (in bytes) are worth more than one thread.
pub const BIG: usize = 256 << 10;

/// Items per thread below which a job is not split.
const MIN_PER_THREAD: usize = 64;

/// Most threads one job uses.
const MAX_THREADS: usize = 8;

/// Stack of each worker: as much as Emacs's own thread has, since the
/// work recurses on nested schemas.
const STACK: usize = 8 << 20;

/// The cores the process may use, asked once: on Linux the standard
/// library reads the process's cgroup files for it each time, about
/// 30 µs, more than a module call on a small input takes otherwise.
static CORES: std::sync::LazyLock<usize> =
    std::sync::LazyLock::new(|| thread::available_parallelism().map_or(1, usize::from));

/// How many threads to use for `n` items.
pub(crate) fn threads_for(n: usize) -> usize {
    (*CORES).min(MAX_THREADS).min(n / MIN_PER_THREAD).max(1)
}

/// `items.iter().map(f).collect()`, with the items shared in order among
/// several threads when there are many (see [`join_map`]).  A panic in
/// `f` is raised again on the calling thread.
pub fn map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    join_map(|| (), items, f).1
}

/// Items [`join_map`]'s threads take at a time.
const CHUNK: usize = 32;

/// `(a(), items.iter().map(f).collect())`: the items are mapped on other
/// threads while `a` runs on this one, and on this one too once `a` is
/// done, each thread taking the next `CHUNK` (32) items left, so that no
/// core waits while another has work (on two cores, `a` and one thread
/// mapping, then two).  A panic in `f` is raised again on the calling
/// thread.
pub fn join_map<A, T: Sync, R: Send>(a: impl FnOnce() -> A, items: &[T], f: impl Fn(&T) -> R + Sync) -> (A, Vec<R>) {
    let threads = threads_for(items.len());
    if threads <= 1 {
        let ra = a();
        return (ra, items.iter().map(f).collect());
    }
    let chunks: Vec<&[T]> = items.chunks(CHUNK).collect();
    let next = AtomicUsize::new(0);
    // The chunks one thread mapped, with their places.
    let work = || {
        let mut done = Vec::new();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(part) = chunks.get(i) else { break };
            done.push((i, part.iter().map(&f).collect::<Vec<R>>()));
        }
        done
    };
    thread::scope(|scope| {
        let workers: Vec<_> = (1..threads).filter_map(|_| spawn(scope, work)).collect();
        let ra = a();
        let mut done = work();
        for worker in workers {
            done.extend(worker.join().unwrap_or_else(|p| std::panic::resume_unwind(p)));
        }
        done.sort_unstable_by_key(|(i, _)| *i);
        (ra, done.into_iter().flat_map(|(_, part)| part).collect())
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
/// core, `make` runs on another thread while `take` works here, items
/// passing between them `BATCH` (32) at a time; with three cores or more,
/// `check` runs on a third thread, else here before `take`.  Without
/// `threaded`, or if a thread cannot be started, everything runs here,
/// item by item.  At most `QUEUED` (256) items wait between two stages.  A
/// panic in `make` or `check` is raised again on the calling thread.
///
/// `take` has each item lent; the items are freed afterwards on `make`'s
/// thread while it runs.  The allocator frees a block on the thread that
/// made it for less than on another: in Emacs, importing the catalog
/// takes less CPU so (`make bench`, `toolspec-bench-catalog`; the
/// figures in bench/history.md, round 16).
pub fn pipeline<T: Send, C: Send, R: Send>(
    threaded: bool,
    make: impl FnOnce(&mut dyn FnMut(T)) -> R + Send,
    check: impl Fn(&T) -> C + Sync,
    take: impl FnMut(&mut T, C),
) -> R {
    pipeline_until(threaded, make, check, take, &mut || false).expect("a pipeline never asked to stop ends")
}

/// What [`pipeline_until`] gives when it was asked to stop: `make`'s
/// thread, unwound from the next item it made, has ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stopped;

/// How often [`pipeline_until`] asks whether to stop, at most, while it
/// takes items or waits for them.
const POLL: std::time::Duration = std::time::Duration::from_millis(20);

/// [`pipeline`], asking `stop` on the calling thread, while `make` runs
/// on another, whether to stop: every `POLL` (20 ms) at most, between
/// two batches taken or while waiting for one.  Once `stop` says yes,
/// nothing more is taken and `make`'s thread stops at the next item it
/// makes (unwound: `make` must leave nothing half done that outlives
/// it).  In Emacs, `stop` is whether the user typed `C-g`, and a long
/// import ends at once.  Without a thread, `stop` is never asked.
pub fn pipeline_until<T: Send, C: Send, R: Send>(
    threaded: bool,
    make: impl FnOnce(&mut dyn FnMut(T)) -> R + Send,
    check: impl Fn(&T) -> C + Sync,
    take: impl FnMut(&mut T, C),
    stop: &mut dyn FnMut() -> bool,
) -> Result<R, Stopped> {
    let cores = if threaded { threads_for(usize::MAX) } else { 1 };
    pipeline_on(cores, make, check, take, stop)
}

/// [`pipeline_until`] on a machine of `cores` cores.
///
/// On two cores, three busy stages made the one the others wait for,
/// `make`, share its core: in Emacs, the imports of the catalog and of
/// GitHub's description were slower with `check` on a thread of its own
/// than with it here (`make bench`, `toolspec-bench-catalog` and
/// `toolspec-bench-openapi`, alternated).
fn pipeline_on<T: Send, C: Send, R: Send>(
    cores: usize,
    make: impl FnOnce(&mut dyn FnMut(T)) -> R + Send,
    check: impl Fn(&T) -> C + Sync,
    mut take: impl FnMut(&mut T, C),
    stop: &mut dyn FnMut() -> bool,
) -> Result<R, Stopped> {
    if cores <= 1 {
        return Ok(in_turn(make, &check, &mut take));
    }
    let make = std::sync::Mutex::new(Some(make));
    let stopping = std::sync::atomic::AtomicBool::new(false);
    let (make_once, check, stopping) = (&make, &check, &stopping);
    let made = thread::scope(|scope| {
        // Items pass with their check, made by the checker when there is
        // one, else here.
        let (to_take, checked) = std::sync::mpsc::sync_channel::<Vec<(T, Option<C>)>>(QUEUED / BATCH);
        let mut to_next = to_take.clone();
        let mut checker = None;
        if cores >= 3 {
            let (to_check, made) = std::sync::mpsc::sync_channel::<Vec<(T, Option<C>)>>(QUEUED / BATCH);
            let to_take = to_take.clone();
            checker = spawn(scope, move || {
                for mut batch in made {
                    for (t, c) in &mut batch {
                        *c = Some(check(t));
                    }
                    if to_take.send(batch).is_err() {
                        break;
                    }
                }
            });
            if checker.is_some() {
                to_next = to_check;
            }
        }
        // `checked` ends once the stages before have ended.
        drop(to_take);
        // Batches taken go back to the maker's thread, to be freed where
        // they were allocated.
        let (give_back, taken) = std::sync::mpsc::channel::<Vec<(T, Option<C>)>>();
        let maker = spawn(scope, move || {
            let make = make_once.lock().ok().and_then(|mut m| m.take());
            make.map(|make| {
                let mut batch = Vec::with_capacity(BATCH);
                let made = make(&mut |t: T| {
                    if stopping.load(Ordering::Relaxed) {
                        // Not a panic: the hook is not called, and the
                        // payload tells the join below what happened.
                        std::panic::resume_unwind(Box::new(Stopped));
                    }
                    batch.push((t, None));
                    if batch.len() == BATCH {
                        // Free the batches taken since, keeping one,
                        // empty, for the next.
                        let mut next = None;
                        for mut old in taken.try_iter() {
                            old.clear();
                            next = Some(old);
                        }
                        let next = next.unwrap_or_else(|| Vec::with_capacity(BATCH));
                        // The receiver is gone only if `check` or `take` panicked.
                        let _ = to_next.send(std::mem::replace(&mut batch, next));
                    }
                });
                if !batch.is_empty() {
                    let _ = to_next.send(batch);
                }
                made
            })
        })?;
        let mut asked = std::time::Instant::now();
        let mut stopped = false;
        loop {
            match checked.recv_timeout(POLL) {
                Ok(mut batch) => {
                    for (t, c) in &mut batch {
                        let c = c.take().unwrap_or_else(|| check(t));
                        take(t, c);
                    }
                    // Once the maker is done, freed here.
                    let _ = give_back.send(batch);
                }
                // Waited `POLL` since `stop` was last asked: asked below.
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
            }
            if asked.elapsed() >= POLL {
                asked = std::time::Instant::now();
                if stop() {
                    stopped = true;
                    break;
                }
            }
        }
        if stopped {
            stopping.store(true, Ordering::Relaxed);
        }
        // The stages before see that nothing more is taken.
        drop(checked);
        let made = maker.join();
        if let Some(checker) = checker {
            checker.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
        }
        match made {
            Err(p) if p.is::<Stopped>() => Some(Err(Stopped)),
            // Stopped after the maker's last item: its result is dropped.
            Ok(_) if stopped => Some(Err(Stopped)),
            made => Some(Ok(made.unwrap_or_else(|p| std::panic::resume_unwind(p)))),
        }
    });
    match made {
        Some(Ok(Some(r))) => Ok(r),
        Some(Err(stopped)) => Err(stopped),
        // No thread could be started: `make` has not run.
        _ => {
            let make = make.into_inner().ok().flatten().expect("make runs once");
            Ok(in_turn(make, check, &mut take))
        }
    }
}

/// [`pipeline`] on the calling thread: each item checked and taken as it
/// is made.
fn in_turn<T, C, R>(
    make: impl FnOnce(&mut dyn FnMut(T)) -> R,
    check: &impl Fn(&T) -> C,
    take: &mut impl FnMut(&mut T, C),
) -> R {
    make(&mut |mut t: T| {
        let c = check(&t);
        take(&mut t, c)
    })
}

/// A worker thread running `f`, or `None` if none can be started.
pub(crate) fn spawn<'s, R: Send + 's>(
    scope: &'s thread::Scope<'s, '_>,
    f: impl FnOnce() -> R + Send + 's,
) -> Option<thread::ScopedJoinHandle<'s, R>> {
    // The thread works for the import under way here, within its budget.
    let budget = crate::budget::current();
    let f = move || crate::budget::with(budget, f);
    thread::Builder::new().name("toolspec-worker".into()).stack_size(STACK).spawn_scoped(scope, f).ok()
}

/// Drop `value` on another thread when `big` ([`free_later`]): freeing a
/// large parsed document or import takes milliseconds the caller need
/// not wait for.
pub fn drop_later<T: Send + 'static>(big: bool, value: T) {
    if big {
        free_later(value);
    }
}

/// Drop `value` on a thread kept for it, started at the first call, when
/// there is more than one core: for values freed one at a time by a
/// caller that should not wait, as Emacs's garbage collection frees the
/// tools an import kept (dropping BFCL's catalog's there made a
/// collection take 7-9 ms longer, freeing them here 2-3 ms:
/// bench/history.md, round 26).  Dropped here when no such thread can
/// run.
pub fn free_later<T: Send + 'static>(value: T) {
    static FREE: std::sync::OnceLock<Option<std::sync::mpsc::Sender<Box<dyn Send>>>> = std::sync::OnceLock::new();
    let sender = FREE.get_or_init(|| {
        if *CORES < 2 {
            return None;
        }
        let (tx, rx) = std::sync::mpsc::channel::<Box<dyn Send>>();
        let free = move || rx.into_iter().for_each(drop);
        thread::Builder::new().name("toolspec-free".into()).spawn(free).ok().map(|_| tx)
    });
    match sender {
        // A send that fails gives the value back, dropped here.
        Some(tx) => drop(tx.send(Box::new(value))),
        None => drop(value),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn free_later_frees() {
        struct Counted(std::sync::Arc<AtomicUsize>);
        impl Drop for Counted {
            fn drop(&mut self) {
                self.0.fetch_add(1, Ordering::SeqCst);
            }
        }
        let count = std::sync::Arc::new(AtomicUsize::new(0));
        for _ in 0..1000 {
            free_later(Counted(count.clone()));
        }
        let start = std::time::Instant::now();
        while count.load(Ordering::SeqCst) < 1000 && start.elapsed() < std::time::Duration::from_secs(10) {
            thread::sleep(std::time::Duration::from_millis(1));
        }
        assert_eq!(count.load(Ordering::SeqCst), 1000);
    }

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
        // 1,000 items: more than the queues hold.  Checked here (two
        // cores), on a thread of its own (three), or in turn (one).
        for (n, cores) in [(0, 2), (1, 2), (1000, 2), (0, 3), (1, 3), (1000, 3), (1000, 1)] {
            let mut taken = Vec::new();
            let checked_on = std::sync::Mutex::new(std::collections::HashSet::new());
            let r = pipeline_on(
                cores,
                |each: &mut dyn FnMut(usize)| {
                    (0..n).for_each(&mut *each);
                    "made"
                },
                |x: &usize| {
                    checked_on.lock().unwrap().insert(std::thread::current().id());
                    x * 10
                },
                |x, c| taken.push((*x, c)),
                &mut || false,
            );
            assert_eq!(r, Ok("made"));
            assert_eq!(taken, (0..n).map(|x| (x, x * 10)).collect::<Vec<_>>());
            let here = checked_on.lock().unwrap().contains(&std::thread::current().id());
            assert_eq!(here, n > 0 && cores < 3, "{n} items on {cores} cores checked here: {here}");
        }
    }

    #[test]
    fn pipeline_frees_items_taken_on_the_makers_thread() {
        // Freeing on the thread that allocated is cheaper; only the
        // batches still on their way when the maker ends are freed here:
        // at most what the queues hold (two with a checker thread, on
        // three cores) and a batch in each stage, with the last one.
        struct Item(std::sync::Arc<std::sync::Mutex<Vec<std::thread::ThreadId>>>);
        impl Drop for Item {
            fn drop(&mut self) {
                self.0.lock().unwrap().push(std::thread::current().id());
            }
        }
        for cores in [2, 3] {
            let freed = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
            let n = 2000;
            let mut taken = 0;
            pipeline_on(
                cores,
                |each: &mut dyn FnMut(Item)| (0..n).for_each(|_| each(Item(freed.clone()))),
                |_: &Item| (),
                |_, _| taken += 1,
                &mut || false,
            )
            .unwrap();
            let freed = freed.lock().unwrap();
            let here = freed.iter().filter(|&&t| t == std::thread::current().id()).count();
            assert_eq!((taken, freed.len()), (n, n), "on {cores} cores");
            let queues = if cores >= 3 { 2 } else { 1 };
            assert!(
                here <= queues * QUEUED + 4 * BATCH,
                "{here} of {n} items freed on the taking thread, on {cores} cores"
            );
        }
    }

    #[test]
    fn pipeline_queues_are_bounded_and_a_panic_of_take_ends_it() {
        // While `take` is slow, the maker gets at most the two queues (and
        // a batch in each stage) ahead; when `take` panics, the stages
        // waiting on full queues must be let go, not wait for ever.
        use std::sync::atomic::{AtomicUsize, Ordering};
        for cores in [2, 3] {
            let made = AtomicUsize::new(0);
            let ahead = AtomicUsize::new(0);
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                pipeline_on(
                    cores,
                    |each: &mut dyn FnMut(usize)| {
                        for i in 0..100 * QUEUED {
                            made.fetch_add(1, Ordering::SeqCst);
                            each(i);
                        }
                    },
                    |_: &usize| (),
                    |x, _| {
                        if *x == 3 {
                            std::thread::sleep(std::time::Duration::from_millis(100));
                            ahead.store(made.load(Ordering::SeqCst), Ordering::SeqCst);
                            panic!("take");
                        }
                    },
                    &mut || false,
                )
            }));
            assert_eq!(r.unwrap_err().downcast_ref::<&str>(), Some(&"take"));
            let ahead = ahead.load(Ordering::SeqCst);
            assert!(ahead <= 2 * QUEUED + 3 * BATCH, "{ahead} items made while 4 were taken on {cores} cores");
        }
    }

    #[test]
    fn pipeline_raises_a_panic_of_make_or_check() {
        for cores in [2, 3] {
            let r = std::panic::catch_unwind(|| {
                pipeline_on(
                    cores,
                    |each: &mut dyn FnMut(u8)| {
                        each(1);
                        panic!("make")
                    },
                    |_: &u8| (),
                    |_, _| (),
                    &mut || false,
                )
            });
            assert_eq!(r.unwrap_err().downcast_ref::<&str>(), Some(&"make"));
            let r = std::panic::catch_unwind(|| {
                pipeline_on(
                    cores,
                    |each: &mut dyn FnMut(u8)| (0..10).for_each(&mut *each),
                    |x: &u8| {
                        if *x == 5 {
                            panic!("check")
                        }
                    },
                    |_, _| (),
                    &mut || false,
                )
            });
            assert_eq!(r.unwrap_err().downcast_ref::<&str>(), Some(&"check"));
        }
    }

    #[test]
    fn pipeline_stops_when_asked_and_its_maker_with_it() {
        // A maker that would make items for ever: asked to stop once 100
        // were taken, the pipeline ends, the maker unwound at its next
        // item; nothing is taken after.  Asked while it waits for a
        // maker that makes nothing yet, it ends too.
        use std::sync::atomic::{AtomicUsize, Ordering};
        for cores in [2, 3] {
            let made = AtomicUsize::new(0);
            let taken = std::cell::Cell::new(0);
            let mut asked = 0;
            let r = pipeline_on(
                cores,
                |each: &mut dyn FnMut(usize)| loop {
                    each(made.fetch_add(1, Ordering::SeqCst));
                },
                |_: &usize| (),
                |_, _| taken.set(taken.get() + 1),
                &mut || {
                    asked += 1;
                    std::thread::sleep(POLL);
                    taken.get() >= 100
                },
            );
            let taken = taken.get();
            assert_eq!(r, Err(Stopped), "on {cores} cores");
            assert!(taken >= 100 && asked >= 1, "{taken} taken, asked {asked} times, on {cores} cores");
            let made = made.load(Ordering::SeqCst);
            assert!(made <= taken + 2 * QUEUED + 4 * BATCH, "{made} made, {taken} taken on {cores} cores");
            let mut asked = 0;
            let r = pipeline_on(
                cores,
                |each: &mut dyn FnMut(usize)| {
                    std::thread::sleep(10 * POLL);
                    each(1);
                    "made"
                },
                |_: &usize| (),
                |_, _| panic!("nothing is taken once stopped"),
                &mut || {
                    asked += 1;
                    true
                },
            );
            assert_eq!((r, asked), (Err(Stopped), 1), "on {cores} cores");
        }
        // Without a thread, never asked.
        let r = pipeline_on(
            1,
            |each: &mut dyn FnMut(u8)| {
                each(1);
                "made"
            },
            |_: &u8| (),
            |_, _| (),
            &mut || panic!("asked"),
        );
        assert_eq!(r, Ok("made"));
    }

    #[test]
    fn join_map_gives_a_and_every_item_in_order() {
        // Sizes around the chunk and the split; `a` slow or quick.
        for n in [0, 1, CHUNK - 1, CHUNK, CHUNK + 1, 1000, 4097] {
            for pause in [0, 5] {
                let items: Vec<usize> = (0..n).collect();
                let (a, mapped) = join_map(
                    || {
                        std::thread::sleep(std::time::Duration::from_millis(pause));
                        "a"
                    },
                    &items,
                    |x| x * 3,
                );
                assert_eq!(a, "a");
                assert_eq!(mapped, items.iter().map(|x| x * 3).collect::<Vec<_>>(), "{n} items, a of {pause} ms");
            }
        }
    }

    #[test]
    fn join_map_raises_a_panic_of_f() {
        let items: Vec<usize> = (0..1000).collect();
        let r =
            std::panic::catch_unwind(|| join_map(|| (), &items, |&x| if x == 700 { panic!("boom {x}") } else { x }));
        assert_eq!(r.unwrap_err().downcast_ref::<String>().map(String::as_str), Some("boom 700"));
    }

    #[test]
    fn map_raises_a_workers_panic() {
        let items: Vec<usize> = (0..1000).collect();
        let r = std::panic::catch_unwind(|| map(&items, |&x| if x == 999 { panic!("boom {x}") } else { x }));
        let p = r.unwrap_err();
        assert_eq!(p.downcast_ref::<String>().map(String::as_str), Some("boom 999"));
    }
}
