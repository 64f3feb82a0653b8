//! The state in force, replaced when a snapshot or an overlay appears,
//! changes or goes.
//!
//! `code-indexer index`/`sync` move `<repo>/latest` to a new snapshot;
//! `invalidate-file` publishes an overlay beside one
//! (`<repo>/.overlays/<id>/current`). Before a call is answered, at most every
//! [`CHECK_EVERY`], the server reads those pointers; when one changed it
//! builds the next state — snapshots it served already not hashed again, a
//! new snapshot and new overlays verified, the table cache and
//! `search_code`'s engine loading in the background — and answers from it. Calls already running finish on the
//! state they started with. Every cache lives in a state, so none outlives
//! the overlay it was filled under.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use crate::snapshot::{self, LoadError, Snapshot};
use crate::state::State;
use crate::store::Store;

/// How often the overlay pointers are read (at most once per this, and only
/// when a call comes).
pub const CHECK_EVERY: Duration = Duration::from_millis(200);

pub struct Live {
    cur: RwLock<Arc<State>>,
    /// `None`: a fixed state (never replaced); else when the pointers were
    /// last read and what they said.
    watch: Option<Mutex<(Instant, String)>>,
    tables: PathBuf,
    /// Where the snapshots were found (`--index` arguments; a download's
    /// directory): read again for a new `latest`.
    roots: Vec<PathBuf>,
}

/// One served snapshot and the overlay over it, as one line of a key.
fn line(base: &std::path::Path, overlay: Option<&std::path::Path>) -> String {
    format!(
        "{}|{}",
        base.display(),
        overlay.map(|o| o.display().to_string()).unwrap_or_default()
    )
}

/// The snapshots the roots name now (their `latest`), each with the overlay
/// in force; `None` when a root cannot be read (a moment of a rename): no change.
fn pointers(roots: &[PathBuf]) -> Option<(Vec<PathBuf>, String)> {
    let mut bases = Vec::new();
    for r in roots {
        bases.extend(snapshot::discover_in(r, true).ok()?);
    }
    bases.sort();
    bases.dedup();
    let key = bases
        .iter()
        .map(|b| line(b, code_index_schemas::overlay_in_force(b).as_deref()))
        .collect::<Vec<_>>()
        .join("\n");
    Some((bases, key))
}

/// The key of the snapshots and overlays a state was built from.
fn loaded(st: &State) -> String {
    let mut out = Vec::new();
    for (i, s) in st.snaps.iter().enumerate() {
        if s.overlay_of().is_some() {
            continue;
        }
        let next = st
            .snaps
            .get(i + 1)
            .filter(|o| o.overlay_of() == Some(s.id()));
        out.push(line(&s.dir, next.map(|o| o.dir.as_path())));
    }
    out.sort();
    out.join("\n")
}

impl Live {
    /// A state that is never replaced (tests, one-shot commands).
    pub fn fixed(st: Arc<State>) -> Live {
        Live {
            cur: RwLock::new(st),
            watch: None,
            tables: PathBuf::new(),
            roots: Vec::new(),
        }
    }

    /// A state replaced when `roots` name other snapshots (a new `latest`)
    /// or overlays; the next state's tables are cached in `tables`.
    pub fn watching(st: Arc<State>, tables: PathBuf, roots: Vec<PathBuf>) -> Live {
        let key = loaded(&st);
        Live {
            cur: RwLock::new(st),
            watch: Some(Mutex::new((Instant::now(), key))),
            tables,
            roots,
        }
    }

    /// The state to answer from.
    pub fn get(&self) -> Arc<State> {
        let cur = self.cur.read().unwrap_or_else(|p| p.into_inner()).clone();
        let Some(watch) = &self.watch else {
            return cur;
        };
        let mut w = watch.lock().unwrap_or_else(|p| p.into_inner());
        if w.0.elapsed() < CHECK_EVERY {
            return cur;
        }
        w.0 = Instant::now();
        let Some((bases, now)) = pointers(&self.roots) else {
            return cur;
        };
        if bases.is_empty() && !cur.snaps.is_empty() {
            // A root emptied for a moment (a rename): keep serving.
            return cur;
        }
        if now == w.1 {
            return cur;
        }
        // Once per change, whether or not the next state loads.
        w.1 = now;
        match next_state(&cur, &bases) {
            Ok(st) => {
                let st = Arc::new(st);
                tracing::info!(
                    "snapshots or overlays changed: serving {}",
                    describe(&st.snaps)
                );
                start_background(&st, &self.tables);
                *self.cur.write().unwrap_or_else(|p| p.into_inner()) = st.clone();
                st
            }
            Err(e) => {
                tracing::warn!(
                    "the overlays changed but could not be loaded: {} ({}); still serving the previous state",
                    e.message, e.hint
                );
                cur
            }
        }
    }
}

/// `repo@id (+ overlay id, n paths)` for each snapshot.
pub fn describe(snaps: &[Snapshot]) -> String {
    let mut out = Vec::new();
    for s in snaps {
        match &s.manifest.overlay {
            Some(o) => {
                if let Some(last) = out.last_mut() {
                    *last = format!("{last} + overlay {} ({} paths)", s.id(), o.replaces.len());
                }
            }
            None => out.push(format!("{}@{}", s.repo(), s.id())),
        }
    }
    out.join(", ")
}

/// The snapshots in `bases` (those served already are not hashed again; a
/// new one is verified in full), with the overlays in force now.
fn next_state(cur: &State, bases: &[PathBuf]) -> Result<State, LoadError> {
    let mut snaps = bases
        .iter()
        .map(|d| {
            match cur
                .snaps
                .iter()
                .find(|s| s.overlay_of().is_none() && &s.dir == d)
            {
                Some(s) => snapshot::reload(d, s),
                None => snapshot::load(d),
            }
        })
        .collect::<Result<Vec<_>, _>>()?;
    snaps.sort_by(|a, b| a.repo().cmp(b.repo()));
    let snaps = snapshot::with_overlays(snaps);
    let store = Store::deferred(&snaps)?;
    let mut st = State::new(snaps, store, cur.started);
    st.synonyms = cur.synonyms.clone();
    st.default_repo = cur.default_repo.clone();
    st.default_checkout = cur.default_checkout.clone();
    Ok(st)
}

/// Load a new state's tables and `search_code` engine in the background
/// (the table tools and `search_code` wait for them; grep answers at once).
pub fn start_background(st: &Arc<State>, tables: &std::path::Path) {
    let started = st.started;
    {
        let (st, tables) = (st.clone(), tables.to_path_buf());
        std::thread::spawn(move || {
            let t = Instant::now();
            st.store.finish_deferred(&st.snaps, &tables);
            match st.store.loaded() {
                Some(Ok(())) => tracing::info!(
                    "tables ready in {:.2}s ({:.2}s after start)",
                    t.elapsed().as_secs_f64(),
                    started.elapsed().as_secs_f64()
                ),
                Some(Err(e)) => {
                    tracing::error!("the snapshot tables could not be loaded: {e}")
                }
                None => {}
            }
        });
    }
    let st = st.clone();
    std::thread::spawn(move || {
        let e = st.engine();
        tracing::info!(
            "search_code ready ({} chunks) in {:.2}s",
            e.chunks.len(),
            e.build_seconds
        );
    });
}
