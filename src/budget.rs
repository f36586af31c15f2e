//! Budgets for the whole of one import, shared by every thread that works
//! on it.
//!
//! A document is bounded by its size, but what reading it makes is not:
//! a schema that a thousand tools `$ref` is written out in each of them,
//! and a tool's `pattern`s may each take long to compile.  So an import
//! has one [`Budget`]: the size of the schemas it makes (measured on the
//! output, in about the bytes of memory they take, every `$ref` written
//! out where it is used) and the time spent compiling patterns.  Bounds per
//! tool or per operation would not do: a thousand tools each within them
//! still make a thousand times as much.
//!
//! The budget of the import under way is the calling thread's
//! ([`within`]); the threads an import starts take it along
//! ([`crate::par::spawn`]).

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::error::{Error, ErrorKind};

/// Largest output of one import by default (`toolspec-max-import-size`,
/// `--max-import-size`): its tools' schemas, in about the bytes of
/// memory they take.
pub const DEFAULT_MAX_IMPORT_SIZE: usize = 256 << 20;

/// Longest time one import spends compiling `pattern`s to check them.
pub const PATTERN_TIME: Duration = Duration::from_secs(2);

/// The default the command line sets (`--max-import-size`).
static DEFAULT: AtomicUsize = AtomicUsize::new(DEFAULT_MAX_IMPORT_SIZE);

/// Set the limit of imports started without one ([`within`] with `None`).
pub fn set_default_limit(limit: usize) {
    DEFAULT.store(limit, Ordering::Relaxed);
}

/// The budget of one import.
#[derive(Debug)]
pub struct Budget {
    limit: usize,
    used: AtomicUsize,
    /// Nanoseconds spent compiling patterns.
    pattern_nanos: AtomicU64,
    /// Set once patterns are no longer compiled.
    patterns_over: AtomicBool,
    /// Set once a pattern left unchecked was reported.
    unchecked_told: AtomicBool,
}

impl Budget {
    pub fn new(limit: usize) -> Budget {
        Budget {
            limit,
            used: AtomicUsize::new(0),
            pattern_nanos: AtomicU64::new(0),
            patterns_over: AtomicBool::new(false),
            unchecked_told: AtomicBool::new(false),
        }
    }

    /// The output size allowed.
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// The output size counted so far.
    pub fn used(&self) -> usize {
        self.used.load(Ordering::Relaxed)
    }

    /// Count `bytes` more of output: the error, at `path`, once past the
    /// limit (and for every later charge).
    pub fn charge(&self, bytes: usize, path: &str) -> crate::Result<()> {
        let used = self.used.fetch_add(bytes, Ordering::Relaxed).saturating_add(bytes);
        if used > self.limit {
            return Err(self.error(path));
        }
        Ok(())
    }

    /// Whether the output is past the limit.
    pub fn exhausted(&self) -> bool {
        self.used() > self.limit
    }

    /// The error of an import past the budget, at `path`.
    pub fn error(&self, path: &str) -> Error {
        Error::at(
            ErrorKind::Limit,
            path,
            format!(
                "the import makes more than {} of tool schemas (the import budget, counted with every \
                 `$ref` written out in each tool that uses it): raise `toolspec-max-import-size' \
                 (`--max-import-size' on the command line) to read it",
                human(self.limit)
            ),
        )
    }

    /// Whether a pattern may still be compiled to check it.
    pub fn pattern_allowed(&self) -> bool {
        !self.patterns_over.load(Ordering::Relaxed)
    }

    /// Count `spent` compiling a pattern; true when the pattern budget
    /// has just run out.
    pub fn pattern_spent(&self, spent: Duration) -> bool {
        let nanos = u64::try_from(spent.as_nanos()).unwrap_or(u64::MAX);
        let total = self.pattern_nanos.fetch_add(nanos, Ordering::Relaxed).saturating_add(nanos);
        total > PATTERN_TIME.as_nanos() as u64 && !self.patterns_over.swap(true, Ordering::Relaxed)
    }
}

/// `n` bytes for people: "256 MiB", "1.5 KiB", "12 bytes".
fn human(n: usize) -> String {
    match n {
        n if n >= 1 << 20 && n % (1 << 20) == 0 => format!("{} MiB", n >> 20),
        n if n >= 1 << 20 => format!("{:.1} MiB", n as f64 / (1 << 20) as f64),
        n if n >= 1 << 10 => format!("{:.1} KiB", n as f64 / 1024.0),
        n => format!("{n} bytes"),
    }
}

thread_local! {
    static CURRENT: RefCell<Option<Arc<Budget>>> = const { RefCell::new(None) };
}

/// The budget of the import under way on this thread, if any.
pub fn current() -> Option<Arc<Budget>> {
    CURRENT.with(|c| c.borrow().clone())
}

/// Run `f` as (part of) one import: under the budget already under way on
/// this thread, else under a new one of `limit` (the default when None),
/// whose use is then noted for [`last_used`].
pub fn within<R>(limit: Option<usize>, f: impl FnOnce() -> R) -> R {
    if current().is_some() {
        return f();
    }
    let budget = Arc::new(Budget::new(limit.unwrap_or_else(|| DEFAULT.load(Ordering::Relaxed))));
    let r = with(Some(budget.clone()), f);
    LAST_USED.store(budget.used(), Ordering::Relaxed);
    r
}

/// What the last import [`within`] started used of its budget.
static LAST_USED: AtomicUsize = AtomicUsize::new(0);

/// What the last import used of its budget, forgotten once asked (0
/// again until the next import): for a caller making several imports
/// within one budget (Emacs's `toolspec-load-tool-directories`).
pub fn last_used() -> usize {
    LAST_USED.swap(0, Ordering::Relaxed)
}

/// Run `f` with `budget` as this thread's (for a thread an import starts).
pub fn with<R>(budget: Option<Arc<Budget>>, f: impl FnOnce() -> R) -> R {
    /// Puts the budget before back, however `f` ends.
    struct Restore(Option<Arc<Budget>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let before = self.0.take();
            CURRENT.with(|c| *c.borrow_mut() = before);
        }
    }
    let before = CURRENT.with(|c| std::mem::replace(&mut *c.borrow_mut(), budget));
    let _restore = Restore(before);
    f()
}

/// Whether this thread's import is past its output budget.
pub fn exhausted() -> bool {
    CURRENT.with(|c| c.borrow().as_ref().is_some_and(|b| b.exhausted()))
}

/// Whether `pattern` compiles, as [`compiles`] says,
/// within this thread's import's pattern budget: None when the budget is
/// spent (the pattern is not checked).
pub fn pattern_compiles(pattern: &str) -> Option<bool> {
    let budget = current();
    if budget.as_ref().is_some_and(|b| !b.pattern_allowed()) {
        return None;
    }
    let start = Instant::now();
    let ok = compiles(pattern);
    if let Some(b) = budget {
        b.pattern_spent(start.elapsed());
    }
    Some(ok)
}

/// Whether `pattern` can be a `pattern` of the schemas
/// [`crate::args::ArgChecker`] compiles: it is compiled as the checker
/// compiles it (by `jsonschema`).
///
/// Compiling one costs far more than looking the answer up (`make
/// bench-rust`, `args/compile`), and an OpenAPI import asks
/// about each of its patterns twice (its tidier, then the spec check),
/// and as often again at each later import of the document.  So the
/// answers are kept, for patterns up to [`PATTERN_KEPT_LEN`] bytes, at
/// most [`PATTERNS_KEPT`] of them (all are forgotten when that many are
/// kept).
fn compiles(pattern: &str) -> bool {
    use std::sync::{Mutex, OnceLock};
    static KEPT: OnceLock<Mutex<std::collections::HashMap<String, bool, foldhash::fast::RandomState>>> =
        OnceLock::new();
    let keep = pattern.len() <= PATTERN_KEPT_LEN;
    let kept = KEPT.get_or_init(Default::default);
    if keep {
        // A poisoned lock only means a panic elsewhere: the map is whole.
        if let Some(&ok) = kept.lock().unwrap_or_else(|e| e.into_inner()).get(pattern) {
            return ok;
        }
    }
    let ok = jsonschema::validator_for(&serde_json::json!({ "pattern": pattern })).is_ok();
    if keep {
        let mut kept = kept.lock().unwrap_or_else(|e| e.into_inner());
        if kept.len() >= PATTERNS_KEPT {
            kept.clear();
        }
        kept.insert(pattern.to_string(), ok);
    }
    ok
}

/// The longest pattern whose compilation [`compiles`] keeps (1 KiB).
const PATTERN_KEPT_LEN: usize = 1 << 10;

/// How many answers [`compiles`] keeps at most (4,096).
const PATTERNS_KEPT: usize = 1 << 12;

/// The message about the patterns left unchecked for the pattern
/// budget, for the first one of the import only.
pub fn pattern_not_checked() -> Option<String> {
    let first = current().is_none_or(|b| !b.unchecked_told.swap(true, Ordering::Relaxed));
    first.then(pattern_not_checked_message)
}

fn pattern_not_checked_message() -> String {
    format!(
        "not checked: this import spent more than {} s compiling `pattern's, so the rest are kept unchecked \
         (the argument checker compiles them when the tool is called)",
        PATTERN_TIME.as_secs()
    )
}

/// Output counted by one worker before it is added to the shared budget:
/// few atomic additions, and a small overshoot.
const BATCH: usize = 4 << 10;

/// A worker's side of the import's budget: output counted here, added
/// to the budget in batches, and when dropped.
#[derive(Debug, Default)]
pub struct Meter {
    budget: Option<Arc<Budget>>,
    pending: usize,
    /// Everything counted by this meter.
    pub total: usize,
}

impl Meter {
    /// A meter of this thread's import's budget (counting only, without one).
    pub fn here() -> Meter {
        Meter { budget: current(), pending: 0, total: 0 }
    }

    /// Count `bytes` of output made at `path` (written out only for the
    /// error).
    #[inline]
    pub fn charge(&mut self, bytes: usize, path: impl FnOnce() -> String) -> crate::Result<()> {
        self.total += bytes;
        self.pending += bytes;
        if self.pending >= BATCH {
            self.flush(path)?;
        }
        Ok(())
    }

    fn flush(&mut self, path: impl FnOnce() -> String) -> crate::Result<()> {
        let pending = std::mem::take(&mut self.pending);
        match &self.budget {
            Some(b) => b.charge(pending, &path()),
            None => Ok(()),
        }
    }
}

impl Drop for Meter {
    fn drop(&mut self) {
        if let Some(b) = &self.budget {
            b.used.fetch_add(self.pending, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The answers kept are the answers compiling gives, also once more
    /// patterns were asked about than are kept, and for a long pattern.
    #[test]
    fn patterns_kept_answer_as_compiling_does() {
        let compiling = |p: &str| jsonschema::validator_for(&serde_json::json!({ "pattern": p })).is_ok();
        let long = format!("^{}$", "a".repeat(PATTERN_KEPT_LEN + 1));
        let mut asked: Vec<String> = vec!["(".into(), "^[a-z]+$".into(), "[".into(), long];
        asked.extend((0..PATTERNS_KEPT + 10).map(|i| if i % 3 == 0 { format!("({i}") } else { format!("^x{i}$") }));
        for _ in 0..2 {
            for p in &asked {
                assert_eq!(compiles(p), compiling(p), "{p}");
            }
        }
        assert!(!compiles("("));
        assert!(compiles("^[a-z]+$"));
    }

    #[test]
    fn one_budget_for_the_import_and_its_threads() {
        within(Some(10_000), || {
            let b = current().unwrap();
            within(Some(1), || assert!(Arc::ptr_eq(&b, &current().unwrap())));
            let seen = std::thread::scope(|s| crate::par::spawn(s, current).unwrap().join().unwrap());
            assert!(Arc::ptr_eq(&b, &seen.unwrap()));
            let mut m = Meter::here();
            for _ in 0..2 {
                m.charge(4_000, String::new).unwrap();
            }
            assert_eq!(b.used(), 8_000);
            let e = (0..10).try_for_each(|_| m.charge(1_000, || "x.y".into())).unwrap_err();
            assert_eq!(e.kind, ErrorKind::Limit);
            assert_eq!(e.path.as_deref(), Some("x.y"));
            assert!(e.message.contains("toolspec-max-import-size"), "{e}");
            assert!(exhausted());
        });
        assert!(current().is_none());
    }
}
