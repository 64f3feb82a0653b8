//! The fixture every tool's in-process tests share: a tiny repository
//! written here, indexed once per test process by the real builder (no
//! vectors), and loaded into a [`State`] exactly as `serve` loads it.

use std::path::Path;
use std::sync::{Arc, OnceLock};

use crate::snapshot;
use crate::state::State;
use crate::store::Store;

/// (path, content) of the fixture repository.
pub const FILES: &[(&str, &str)] = &[
    (
        "app/models.py",
        r#""""Models of the shop."""
from app.util import slugify


class Product:
    """A thing for sale."""

    def __init__(self, name, price):
        self.name = name
        self.price = price

    def slug(self):
        """The product's URL slug."""
        return slugify(self.name)


class Book(Product):
    def slug(self):
        return "book-" + slugify(self.name)
"#,
    ),
    (
        "app/util.py",
        r#"import re


def slugify(text):
    """Lower-case words joined by dashes: parse a title into a URL slug."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


# TODO: retry with backoff when the price service is down
def price_with_tax(price, rate=0.2):
    return round(price * (1 + rate), 2)
"#,
    ),
    (
        "tests/test_util.py",
        r#"from app.util import slugify


def test_slugify():
    assert slugify("Hello World") == "hello-world"
"#,
    ),
    (
        "src/lib.rs",
        r#"//! Parsing of durations.

/// Parse "5s" or "2m" into seconds.
pub fn parse_duration(s: &str) -> Option<u64> {
    let (n, unit) = s.split_at(s.len().checked_sub(1)?);
    let n: u64 = n.parse().ok()?;
    match unit {
        "s" => Some(n),
        "m" => Some(n * 60),
        _ => None,
    }
}

pub fn timeout_seconds(cfg: &str) -> u64 {
    parse_duration(cfg).unwrap_or(30)
}
"#,
    ),
    (
        "README.md",
        "# shop\n\nProducts live in `app/models.py`; `slugify` makes URL slugs.\n",
    ),
];

/// The loaded fixture (built on first use, shared by every test).
pub fn state() -> Arc<State> {
    static STATE: OnceLock<Arc<State>> = OnceLock::new();
    STATE.get_or_init(build).clone()
}

fn build() -> Arc<State> {
    let dir = tempfile::tempdir().expect("temp dir").keep();
    let repo = dir.join("shop");
    for (path, content) in FILES {
        let p = repo.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, content).unwrap();
    }
    let out = dir.join("snapshots");
    let summary = code_index_builder::index::run(&code_index_builder::index::Options {
        repo: repo.clone(),
        out: out.clone(),
        previous: None,
        threads: 1,
        name: None,
        max_file_size: None,
        follow_symlinks: false,
        skip_unreadable: false,
        progress: false,
        embeddings: None,
        secrets: None,
        overlay: None,
        changed: None,
    })
    .expect("the builder indexes the fixture");
    let snap = snapshot::load(Path::new(&summary.snapshot_dir)).expect("the fixture loads");
    let snaps = vec![snap];
    let store = Store::load(&snaps, &dir.join("cache")).expect("the store loads");
    Arc::new(State::new(snaps, store, std::time::Instant::now()))
}

/// A tool's arguments from JSON, as the router deserializes them.
pub fn args<T: serde::de::DeserializeOwned>(v: serde_json::Value) -> T {
    serde_json::from_value(v).expect("valid arguments")
}

/// 1-based line of the first line of fixture file `path` holding `needle`.
pub fn line_of(path: &str, needle: &str) -> u64 {
    let (_, content) = FILES
        .iter()
        .find(|(p, _)| *p == path)
        .expect("a fixture file");
    content
        .lines()
        .position(|l| l.contains(needle))
        .map(|i| i as u64 + 1)
        .unwrap_or_else(|| panic!("{needle:?} not in {path}"))
}
