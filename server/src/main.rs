//! `code-index-mcp`: the read-only MCP stdio server over snapshots.
//! Not implemented yet; the crate exists so the workspace layout is final.

fn main() -> std::process::ExitCode {
    eprintln!(
        "error[E_NOT_IMPLEMENTED]: code-index-mcp {} does not serve yet\n  hint: query snapshots with DuckDB SQL meanwhile (see schemas/SCHEMA.md)",
        env!("CARGO_PKG_VERSION")
    );
    std::process::ExitCode::from(2)
}
