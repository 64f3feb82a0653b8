//! Links the pinned libduckdb dynamically (installed by scripts/setup.sh)
//! and records where it lives (rpath), so the binaries run without
//! LD_LIBRARY_PATH. libduckdb-sys emits no rpath of its own.

use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-env-changed=DUCKDB_LIB_DIR");
    let dir = std::env::var_os("DUCKDB_LIB_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            let home = std::env::var_os("HOME")
                .map(PathBuf::from)
                .unwrap_or_default();
            home.join(".cache/code-index/duckdb/1.5.6")
        });
    // A symlinked dir resolves to its stable target, so clones share one rpath.
    let dir = dir.canonicalize().unwrap_or(dir);
    if !dir.join("libduckdb.so").is_file() {
        println!(
            "cargo:warning=libduckdb.so not found in {}: run scripts/setup.sh --deps-only (or set DUCKDB_LIB_DIR)",
            dir.display()
        );
    }
    println!("cargo:rustc-link-search=native={}", dir.display());
    println!("cargo:rustc-link-arg=-Wl,-rpath,{}", dir.display());
}
