//! Giving memory back to the OS: the allocators here keep what they freed.

/// Hands glibc's free heap pages back to the OS (glibc keeps what a large
/// build or scan freed: after the `search_code` engine's build ≈ 60 MB on
/// go-stdlib).
pub fn trim_heap() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: glibc's malloc_trim takes no pointers and is thread-safe.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Purges the arenas of DuckDB's own allocator. libduckdb on Linux carries a
/// jemalloc of its own that keeps freed pages for 10 s and purges them only
/// on later allocations: a server that answered a few symbol queries and went
/// idle kept ≈ 30 MB it no longer used (go-stdlib, measured with
/// `bench/bench_server.py`). `DUCKDB_JE_MALLOC_CONF` would do the same, but
/// libduckdb reads it before `main` runs. Found with `dlsym`, so a DuckDB
/// built without jemalloc simply skips it. Returns whether it purged.
pub fn purge_duckdb_allocator() -> bool {
    type Mallctl = unsafe extern "C" fn(
        *const libc::c_char,
        *mut libc::c_void,
        *mut libc::size_t,
        *mut libc::c_void,
        libc::size_t,
    ) -> libc::c_int;
    static MALLCTL: std::sync::OnceLock<Option<Mallctl>> = std::sync::OnceLock::new();
    let f = MALLCTL.get_or_init(|| {
        // SAFETY: dlsym with a NUL-terminated name; a non-null result is the
        // address of jemalloc's `mallctl`, whose signature is `Mallctl`.
        unsafe {
            let p = libc::dlsym(libc::RTLD_DEFAULT, c"duckdb_je_mallctl".as_ptr());
            (!p.is_null()).then(|| std::mem::transmute::<*mut libc::c_void, Mallctl>(p))
        }
    });
    let Some(mallctl) = f else {
        return false;
    };
    // 4096 = MALLCTL_ARENAS_ALL. SAFETY: a control that reads and writes nothing.
    unsafe {
        mallctl(
            c"arena.4096.purge".as_ptr(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            0,
        ) == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use duckdb::Connection;

    #[test]
    #[cfg(target_os = "linux")]
    fn duckdb_allocator_is_purged() {
        // The pinned libduckdb carries jemalloc under a prefix: if a DuckDB
        // upgrade renames it, the server would keep freed pages again.
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch("CREATE TABLE t AS SELECT range AS x, repeat('y', 100) AS s FROM range(200000); DROP TABLE t;")
            .unwrap();
        assert!(
            purge_duckdb_allocator(),
            "duckdb_je_mallctl not found in libduckdb"
        );
    }
}
