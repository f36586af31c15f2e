//! Helpers shared by the integration tests that bound time and memory
//! (`test/budgets.rs`, `test/limits.rs`), each of which includes this
//! file as its module `common`.

use std::sync::mpsc;
use std::time::Duration;

/// Run `f` on an 8 MiB stack (Emacs's); fail if it panics or takes
/// longer than `limit` (a stack overflow aborts the test binary).
pub fn within<T: Send + 'static>(limit: Duration, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::Builder::new()
        .stack_size(8 << 20)
        .spawn(move || {
            let _ = tx.send(f());
        })
        .expect("thread starts");
    match rx.recv_timeout(limit) {
        Ok(v) => v,
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("still running after {limit:?}"),
        Err(mpsc::RecvTimeoutError::Disconnected) => panic!("the work panicked"),
    }
}
