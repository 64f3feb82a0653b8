//! Snapshot directories: written into a hidden temp directory, the manifest
//! last, then renamed into `<out>/<repo>/<snapshot-id>/`. A failed or killed
//! build leaves earlier snapshots untouched; its temp directory is removed
//! on failure, or by the next build when the process was killed.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use code_index_schemas::{Manifest, ManifestFile, MANIFEST_FILE};

use crate::error::{codes, Error, Result};
use crate::ids::sha256_hex;

const TMP_PREFIX: &str = ".tmp-";

/// A temp directory that is deleted unless committed.
pub struct TempSnapshot {
    pub dir: PathBuf,
    pub repo_dir: PathBuf,
    committed: bool,
    /// `repo_dir` did not exist before this build: a failed first build
    /// removes it again (when empty) rather than leave an empty directory.
    created_repo_dir: bool,
}

impl Drop for TempSnapshot {
    fn drop(&mut self) {
        let mut live = LIVE.lock().unwrap_or_else(|p| p.into_inner());
        live.retain(|d| d != &self.dir);
        if !self.committed {
            let _ = fs::remove_dir_all(&self.dir);
            if self.created_repo_dir {
                let _ = fs::remove_dir(&self.repo_dir);
            }
        }
    }
}

/// The temp directories of builds in progress in this process. Committing
/// (the rename into place) holds this lock, so an interrupt either removes a
/// temp directory before its rename or finds it gone after.
static LIVE: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

/// Remove the temp directories of the builds in progress, and keep any other
/// build from committing: for an interrupt (SIGINT/SIGTERM) that then exits.
/// The lock stays held, so a build that reaches its commit waits for the exit.
pub fn abandon_builds() -> usize {
    let live = LIVE.lock().unwrap_or_else(|p| p.into_inner());
    for d in live.iter() {
        // Writers may still add files while this removes: retry a few times.
        for _ in 0..5 {
            if fs::remove_dir_all(d).is_ok() || !d.exists() {
                break;
            }
        }
        // The repository's directory, when this build was its first (empty).
        if let Some(p) = d.parent() {
            let _ = fs::remove_dir(p);
        }
    }
    let n = live.len();
    std::mem::forget(live);
    n
}

fn pid_alive(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

/// Create `<out>/<repo>/.tmp-<pid>/`, removing temp dirs of dead builds.
pub fn begin(out: &Path, repo_name: &str) -> Result<TempSnapshot> {
    let repo_dir = out.join(repo_name);
    let created_repo_dir = !repo_dir.exists();
    fs::create_dir_all(&repo_dir).map_err(|e| {
        Error::io(
            codes::OUT_DIR,
            "cannot create output directory",
            &repo_dir,
            e,
            "pass a writable --out directory",
        )
    })?;
    if let Ok(rd) = fs::read_dir(&repo_dir) {
        for ent in rd.flatten() {
            let name = ent.file_name().to_string_lossy().to_string();
            if let Some(pid) = name
                .strip_prefix(TMP_PREFIX)
                .and_then(|p| p.parse::<u32>().ok())
            {
                if !pid_alive(pid) {
                    let _ = fs::remove_dir_all(ent.path());
                }
            }
        }
    }
    let dir = repo_dir.join(format!("{TMP_PREFIX}{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir(&dir).map_err(|e| {
        Error::io(
            codes::OUT_DIR,
            "cannot create temp directory",
            &dir,
            e,
            "pass a writable --out directory",
        )
    })?;
    LIVE.lock()
        .unwrap_or_else(|p| p.into_inner())
        .push(dir.clone());
    Ok(TempSnapshot {
        dir,
        repo_dir,
        committed: false,
        created_repo_dir,
    })
}

/// Size and sha256 of a file in the temp dir.
pub fn describe(dir: &Path, name: &str, rows: u64) -> Result<ManifestFile> {
    let p = dir.join(name);
    let bytes = fs::read(&p).map_err(|e| {
        Error::io(
            codes::WRITE,
            "cannot read back",
            &p,
            e,
            "check the --out directory",
        )
    })?;
    Ok(ManifestFile {
        name: name.to_string(),
        rows,
        bytes: bytes.len() as u64,
        sha256: sha256_hex(&bytes),
    })
}

/// Snapshot id: first 16 hex digits of the sha256 over the manifest itself
/// (with an empty id), which lists every data file's sha256. Two builds
/// share an id only when their manifests agree on everything else.
pub fn derive_id(manifest: &Manifest) -> String {
    let mut m = manifest.clone();
    m.snapshot_id = String::new();
    let json = serde_json::to_vec(&m).expect("manifest serializes");
    sha256_hex(&json)[..16].to_string()
}

fn write_atomic(path: &Path, data: &[u8]) -> Result<()> {
    let tmp = path.with_extension("tmp");
    let mut f = fs::File::create(&tmp).map_err(|e| {
        Error::io(
            codes::WRITE,
            "cannot write",
            &tmp,
            e,
            "check the --out directory",
        )
    })?;
    f.write_all(data)
        .and_then(|_| f.sync_all())
        .map_err(|e| Error::io(codes::WRITE, "cannot write", &tmp, e, "check free space"))?;
    fs::rename(&tmp, path).map_err(|e| {
        Error::io(
            codes::WRITE,
            "cannot rename",
            path,
            e,
            "check the --out directory",
        )
    })
}

/// Write the manifest and move the temp dir into place. Returns the final dir.
pub fn commit(mut tmp: TempSnapshot, manifest: &Manifest) -> Result<PathBuf> {
    let json = serde_json::to_vec_pretty(manifest)
        .map_err(|e| Error::new(codes::INTERNAL, e.to_string(), "report this as a bug"))?;
    // Data files first to disk, then the manifest that marks completeness.
    for f in &manifest.files {
        if let Ok(h) = fs::File::open(tmp.dir.join(&f.name)) {
            let _ = h.sync_all();
        }
    }
    write_atomic(&tmp.dir.join(MANIFEST_FILE), &json)?;
    if let Some(o) = &manifest.overlay {
        return commit_overlay(tmp, manifest, &o.base);
    }
    let dest = tmp.repo_dir.join(&manifest.snapshot_id);
    move_into_place(&mut tmp, &dest)?;
    set_latest(&tmp.repo_dir, &manifest.snapshot_id)?;
    Ok(dest)
}

/// Point `<repo_dir>/latest` at snapshot `id` (atomically).
pub fn set_latest(repo_dir: &Path, id: &str) -> Result<()> {
    write_atomic(&repo_dir.join("latest"), format!("{id}\n").as_bytes())
}

/// Rename the temp dir to `dest`; a complete `dest` already there has the
/// same id, so the same bytes: it is kept and the temp dir dropped.
fn move_into_place(tmp: &mut TempSnapshot, dest: &Path) -> Result<()> {
    let mut live = LIVE.lock().unwrap_or_else(|p| p.into_inner());
    if !live.contains(&tmp.dir) {
        // Abandoned by an interrupt (which holds the lock until exit), or
        // never registered: nothing to commit.
        return Err(Error::new(
            codes::WRITE,
            format!("the build in {} was interrupted", tmp.dir.display()),
            "run the build again",
        ));
    }
    live.retain(|d| d != &tmp.dir);
    if dest.join(MANIFEST_FILE).is_file() {
        let _ = fs::remove_dir_all(&tmp.dir);
    } else {
        if dest.exists() {
            let _ = fs::remove_dir_all(dest);
        }
        fs::rename(&tmp.dir, dest).map_err(|e| {
            Error::io(
                codes::WRITE,
                "cannot move the snapshot into place",
                dest,
                e,
                "check the --out directory",
            )
        })?;
    }
    tmp.committed = true;
    Ok(())
}

/// Move an overlay into `<repo>/.overlays/<base>/<id>/`, point `current` at
/// it, and remove the overlays of that base older than the one it replaces
/// (a server still reading that one keeps it until it sees the new one).
fn commit_overlay(mut tmp: TempSnapshot, manifest: &Manifest, base: &str) -> Result<PathBuf> {
    let parent = tmp
        .repo_dir
        .join(code_index_schemas::OVERLAY_DIR)
        .join(base);
    fs::create_dir_all(&parent).map_err(|e| {
        Error::io(
            codes::WRITE,
            "cannot create the overlay directory",
            &parent,
            e,
            "check that the snapshot directory is writable",
        )
    })?;
    let dest = parent.join(&manifest.snapshot_id);
    let before = fs::read_to_string(parent.join("current"))
        .map(|s| s.trim().to_string())
        .unwrap_or_default();
    move_into_place(&mut tmp, &dest)?;
    write_atomic(
        &parent.join("current"),
        format!("{}\n", manifest.snapshot_id).as_bytes(),
    )?;
    if let Ok(rd) = fs::read_dir(&parent) {
        for ent in rd.flatten() {
            let name = ent.file_name().to_string_lossy().to_string();
            if ent.path().is_dir() && name != manifest.snapshot_id && name != before {
                let _ = fs::remove_dir_all(ent.path());
            }
        }
    }
    Ok(dest)
}

/// Read and check a snapshot's manifest.
pub fn read_manifest(dir: &Path) -> Result<Manifest> {
    let p = dir.join(MANIFEST_FILE);
    let text = fs::read_to_string(&p).map_err(|e| {
        Error::io(
            codes::SNAPSHOT_INVALID,
            "no readable manifest in",
            &p,
            e,
            "pass a snapshot directory <out>/<repo>/<snapshot-id>/ written by `code-indexer index`",
        )
    })?;
    serde_json::from_str(&text).map_err(|e| {
        Error::new(
            codes::SNAPSHOT_INVALID,
            format!("broken manifest {}: {e}", p.display()),
            "rebuild the snapshot with `code-indexer index`",
        )
        .at(&p)
    })
}

/// Resolve a snapshot argument: a snapshot dir, or a repo dir with a `latest` file.
pub fn resolve_dir(arg: &Path) -> Result<PathBuf> {
    if arg.join(MANIFEST_FILE).is_file() {
        return Ok(arg.to_path_buf());
    }
    if let Ok(id) = fs::read_to_string(arg.join("latest")) {
        let d = arg.join(id.trim());
        if d.join(MANIFEST_FILE).is_file() {
            return Ok(d);
        }
    }
    Err(Error::new(
        codes::SNAPSHOT_INVALID,
        format!("{} is not a snapshot (no manifest.json)", arg.display()),
        "pass <out>/<repo>/<snapshot-id>/ or <out>/<repo>/ (which holds a `latest` file)",
    )
    .at(arg))
}

/// A repository's build lock (`<out>/<repo>/.lock`), held while it lives.
pub struct Lock(#[allow(dead_code)] fs::File);

/// Take the sync lock of the repository directory `repo_dir`: two `sync`
/// or `watch` runs never build one repository at once (`index` takes none:
/// builds in temp directories renamed into place are safe side by side).
/// With `wait`, block until the other is done; else fail with `E_BUSY`.
pub fn lock(repo_dir: &Path, wait: bool) -> Result<Lock> {
    fs::create_dir_all(repo_dir).map_err(|e| {
        Error::io(
            codes::OUT_DIR,
            "cannot create output directory",
            repo_dir,
            e,
            "pass a writable --out directory",
        )
    })?;
    let p = repo_dir.join(".lock");
    let f = fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&p)
        .map_err(|e| {
            Error::io(
                codes::OUT_DIR,
                "cannot open",
                &p,
                e,
                "pass a writable --out directory",
            )
        })?;
    match f.try_lock() {
        Ok(()) => return Ok(Lock(f)),
        Err(fs::TryLockError::WouldBlock) if wait => {
            eprintln!(
                "code-indexer: waiting for another sync of {} to finish",
                repo_dir.display()
            );
        }
        Err(fs::TryLockError::WouldBlock) => {
            return Err(Error::new(
                codes::BUSY,
                format!("another sync of {} is running", repo_dir.display()),
                "wait for it to finish (a `sync` or `watch` holds the lock), then retry",
            )
            .at(&p))
        }
        Err(fs::TryLockError::Error(e)) => {
            return Err(Error::io(
                codes::OUT_DIR,
                "cannot lock",
                &p,
                e,
                "pass a writable --out directory",
            ))
        }
    }
    f.lock().map_err(|e| {
        Error::io(
            codes::OUT_DIR,
            "cannot lock",
            &p,
            e,
            "pass a writable --out directory",
        )
    })?;
    Ok(Lock(f))
}

/// The snapshot directories of `repo_dir`, newest first (by the time they
/// were moved into place; `latest` first whatever its time).
pub fn list(repo_dir: &Path) -> Vec<PathBuf> {
    let latest = fs::read_to_string(repo_dir.join("latest"))
        .map(|s| s.trim().to_string())
        .unwrap_or_default();
    let mut found: Vec<(bool, std::time::SystemTime, PathBuf)> = fs::read_dir(repo_dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| {
            let n = e.file_name().to_string_lossy().to_string();
            !n.starts_with('.') && e.path().join(MANIFEST_FILE).is_file()
        })
        .map(|e| {
            let t = e
                .metadata()
                .and_then(|m| m.modified())
                .unwrap_or(std::time::UNIX_EPOCH);
            (e.file_name().to_string_lossy() == latest, t, e.path())
        })
        .collect();
    found.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)).then(a.2.cmp(&b.2)));
    found.into_iter().map(|(_, _, p)| p).collect()
}

/// Remove all but the `keep` newest snapshots of `repo_dir` (never `latest`),
/// and the overlays of every snapshot other than `latest`. Returns what was
/// removed: snapshot ids, then `overlay:<base>` entries.
pub fn prune(repo_dir: &Path, keep: usize) -> Vec<String> {
    let mut removed = Vec::new();
    for d in list(repo_dir).into_iter().skip(keep.max(1)) {
        if fs::remove_dir_all(&d).is_ok() {
            removed.push(
                d.file_name()
                    .unwrap_or_default()
                    .to_string_lossy()
                    .to_string(),
            );
        }
    }
    removed.extend(clear_overlays(repo_dir, true));
    removed
}

/// Remove the overlays of `repo_dir`'s snapshots: all of them, or (`stale`)
/// those of snapshots other than `latest`, which a new build covers.
pub fn clear_overlays(repo_dir: &Path, stale: bool) -> Vec<String> {
    let latest = fs::read_to_string(repo_dir.join("latest"))
        .map(|s| s.trim().to_string())
        .unwrap_or_default();
    let mut removed = Vec::new();
    let dir = repo_dir.join(code_index_schemas::OVERLAY_DIR);
    for e in fs::read_dir(&dir).into_iter().flatten().flatten() {
        let base = e.file_name().to_string_lossy().to_string();
        if stale && base == latest {
            continue;
        }
        if fs::remove_dir_all(e.path()).is_ok() {
            removed.push(format!("overlay:{base}"));
        }
    }
    removed.sort();
    removed
}
