//! Keeping one bad call from taking the server down: locks that survive a
//! panic in another call, and panics turned into an `INTERNAL` error for the
//! call that caused them.

use std::sync::{Mutex, MutexGuard};

use crate::error::{codes, ToolError};

/// Lock `m`, recovering it if a call panicked while holding it: every
/// structure behind our mutexes (caches, lazily opened models) stays valid
/// between statements, so the data is usable and a tool is not disabled
/// until restart.
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The text of a panic payload.
pub fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "panic".to_string()
    }
}

/// The `INTERNAL` error for a call that panicked.
pub fn internal(what: &str) -> ToolError {
    ToolError::new(
        codes::INTERNAL,
        format!("internal error: {what}"),
        "this is a bug in code-index-mcp, not in your call's form: the server is still running; \
         retry with other arguments, and report the call",
    )
}

/// Run `f`, turning a panic into [`internal`].
pub fn catch<T>(f: impl FnOnce() -> Result<T, ToolError>) -> Result<T, ToolError> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(p) => Err(internal(&panic_message(&*p))),
    }
}

/// Run `f` on rayon's pool in the background; a panic is logged, never an
/// abort (rayon aborts the process on a panic in `spawn` without a handler).
pub fn spawn(f: impl FnOnce() + Send + 'static) {
    rayon::spawn(move || {
        if let Err(p) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
            tracing::error!("background task failed: {}", panic_message(&*p));
        }
    });
}

/// Log a panic in a pool thread instead of aborting (the handler rayon calls
/// for a panic it cannot hand back to a caller).
pub fn log_pool_panic(p: Box<dyn std::any::Any + Send>) {
    tracing::error!("pool task failed: {}", panic_message(&*p));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_poisoned_lock_is_recovered() {
        let m = std::sync::Arc::new(Mutex::new(vec![1]));
        let m2 = m.clone();
        let _ = std::thread::spawn(move || {
            let _g = m2.lock().unwrap();
            panic!("boom");
        })
        .join();
        assert!(m.is_poisoned());
        lock(&m).push(2);
        assert_eq!(*lock(&m), vec![1, 2]);
    }

    #[test]
    fn a_panic_is_an_internal_error() {
        let e = catch::<()>(|| panic!("index out of range")).unwrap_err();
        assert_eq!(e.code, codes::INTERNAL);
        assert!(e.message.contains("index out of range"));
        assert_eq!(catch(|| Ok(3)).unwrap(), 3);
    }

    #[test]
    fn a_background_panic_does_not_abort() {
        let (tx, rx) = std::sync::mpsc::channel();
        spawn(|| panic!("background"));
        spawn(move || tx.send(1).unwrap());
        assert_eq!(rx.recv().unwrap(), 1);
    }
}
