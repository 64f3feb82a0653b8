//! Operations shared by both binaries: the user settings file, append-only
//! files rotated by size (the metrics JSONL and the logs), UTC timestamps and
//! the metrics events themselves.
//!
//! # Settings
//! `$CODE_INDEX_CONFIG`, else `~/.config/code-index/config.yaml`; every key
//! optional:
//!
//! ```yaml
//! logging: {level: info, max_size_mb: 10, max_files: 5}
//! metrics: {enabled: true, max_size_mb: 10, max_files: 5}
//! ```
//!
//! # Rotation
//! [`Rotating::append`] writes each record with one `write` on a file opened
//! for appending, so processes writing the same file (the server, hooks)
//! never interleave a line. When the file passes its size it is renamed to
//! `<name>.1` (`.1` to `.2`, …; the oldest beyond `max_files` removed) under
//! an exclusive lock on `<name>.lock`, so two writers never rotate twice.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

/// Where the user settings are read from.
pub fn settings_path() -> PathBuf {
    if let Some(p) = std::env::var_os("CODE_INDEX_CONFIG") {
        return PathBuf::from(p);
    }
    crate::dirs::home()
        .unwrap_or_else(|| PathBuf::from("/tmp"))
        .join(".config/code-index/config.yaml")
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Logging {
    /// `error`, `warn`, `info`, `debug` or `trace`.
    pub level: String,
    pub max_size_mb: f64,
    pub max_files: usize,
}

impl Default for Logging {
    fn default() -> Self {
        Logging {
            level: "info".into(),
            max_size_mb: 10.0,
            max_files: 5,
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Metrics {
    pub enabled: bool,
    pub max_size_mb: f64,
    pub max_files: usize,
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics {
            enabled: true,
            max_size_mb: 10.0,
            max_files: 5,
        }
    }
}

/// The user settings file.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Settings {
    pub logging: Logging,
    pub metrics: Metrics,
}

/// The settings; a missing file is the defaults, a broken one an error
/// naming the file and the fix.
pub fn settings() -> Result<Settings, crate::diag::Diagnostic> {
    let p = settings_path();
    let Ok(text) = fs::read_to_string(&p) else {
        return Ok(Settings::default());
    };
    parse_settings(&text).map_err(|e| {
        crate::diag::Diagnostic::new(
            crate::diag::Code::ServerConfig,
            format!("{}: {e}", p.display()),
            "fix the file (keys: logging: {level, max_size_mb, max_files}, metrics: {enabled, max_size_mb, max_files}) or remove it",
        )
        .at(&p)
    })
}

pub fn parse_settings(text: &str) -> Result<Settings, String> {
    if text.trim().is_empty() {
        return Ok(Settings::default());
    }
    let s: Settings = serde_yaml::from_str(text).map_err(|e| e.to_string())?;
    if !["error", "warn", "info", "debug", "trace"].contains(&s.logging.level.as_str()) {
        return Err(format!(
            "logging.level '{}' is none of error, warn, info, debug, trace",
            s.logging.level
        ));
    }
    for (k, v) in [
        ("logging.max_size_mb", s.logging.max_size_mb),
        ("metrics.max_size_mb", s.metrics.max_size_mb),
    ] {
        if !(v.is_finite() && v > 0.0) {
            return Err(format!("{k} must be a number above 0"));
        }
    }
    if s.logging.max_files == 0 || s.metrics.max_files == 0 {
        return Err("max_files must be at least 1".into());
    }
    Ok(s)
}

/// An append-only file rotated by size (see the module documentation).
#[derive(Clone, Debug)]
pub struct Rotating {
    pub path: PathBuf,
    pub max_bytes: u64,
    pub max_files: usize,
}

impl Rotating {
    pub fn new(path: PathBuf, max_size_mb: f64, max_files: usize) -> Rotating {
        Rotating {
            path,
            max_bytes: (max_size_mb * 1024.0 * 1024.0).max(1.0) as u64,
            max_files: max_files.max(1),
        }
    }

    /// Append `record` (one line; a newline is added when missing).
    pub fn append(&self, record: &[u8]) -> io::Result<()> {
        if let Some(d) = self.path.parent() {
            fs::create_dir_all(d)?;
        }
        let mut buf = Vec::with_capacity(record.len() + 1);
        buf.extend_from_slice(record);
        if !buf.ends_with(b"\n") {
            buf.push(b'\n');
        }
        let mut f = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)?;
        f.write_all(&buf)?;
        if f.metadata()?.len() > self.max_bytes {
            self.rotate()?;
        }
        Ok(())
    }

    /// The file and its rotated predecessors, oldest first.
    pub fn files(&self) -> Vec<PathBuf> {
        let mut out: Vec<PathBuf> = (1..=self.max_files)
            .rev()
            .map(|i| self.numbered(i))
            .filter(|p| p.is_file())
            .collect();
        if self.path.is_file() {
            out.push(self.path.clone());
        }
        out
    }

    fn numbered(&self, i: usize) -> PathBuf {
        let mut s = self.path.as_os_str().to_owned();
        s.push(format!(".{i}"));
        PathBuf::from(s)
    }

    fn rotate(&self) -> io::Result<()> {
        let mut lock = self.path.as_os_str().to_owned();
        lock.push(".lock");
        let lock = File::create(PathBuf::from(lock))?;
        lock.lock()?;
        // Another writer may have rotated while this one waited.
        if fs::metadata(&self.path).map(|m| m.len()).unwrap_or(0) <= self.max_bytes {
            return Ok(());
        }
        let _ = fs::remove_file(self.numbered(self.max_files));
        for i in (1..self.max_files).rev() {
            let from = self.numbered(i);
            if from.exists() {
                fs::rename(&from, self.numbered(i + 1))?;
            }
        }
        fs::rename(&self.path, self.numbered(1))
    }
}

/// A writer over a [`Rotating`] file that appends what it was given when
/// dropped (one record per log event).
pub struct RecordWriter<'a> {
    file: &'a Rotating,
    buf: Vec<u8>,
}

impl<'a> RecordWriter<'a> {
    pub fn new(file: &'a Rotating) -> Self {
        RecordWriter {
            file,
            buf: Vec::new(),
        }
    }
}

impl Write for RecordWriter<'_> {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        self.buf.extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Drop for RecordWriter<'_> {
    fn drop(&mut self) {
        if !self.buf.is_empty() {
            let _ = self.file.append(&self.buf);
        }
    }
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// Days since 1970-01-01 of a civil date (proleptic Gregorian).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let doy = (153 * (m + if m > 2 { -3 } else { 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146097 + doe - 719468
}

fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719468;
    let era = if z >= 0 { z } else { z - 146096 } / 146097;
    let doe = z - era * 146097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// `2026-11-25T08:00:00.123Z` for milliseconds since the epoch.
pub fn rfc3339_ms(ms: i64) -> String {
    let (days, rem) = (ms.div_euclid(86_400_000), ms.rem_euclid(86_400_000));
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3_600_000,
        rem / 60_000 % 60,
        rem / 1000 % 60,
        rem % 1000
    )
}

/// Milliseconds since the epoch of `YYYY-MM-DD`, `YYYY-MM-DDTHH:MM[:SS[.mmm]]`
/// with an optional `Z` (UTC is assumed).
pub fn parse_time(s: &str) -> Option<i64> {
    let s = s.trim().trim_end_matches('Z');
    let (date, time) = s.split_once(['T', ' ']).unwrap_or((s, ""));
    let mut dp = date.split('-').map(|p| p.parse::<i64>().ok());
    let (y, m, d) = (dp.next()??, dp.next()??, dp.next()??);
    if dp.next().is_some() || !(1..=12).contains(&m) || !(1..=31).contains(&d) {
        return None;
    }
    let mut ms = days_from_civil(y, m, d) * 86_400_000;
    if !time.is_empty() {
        let mut tp = time.split(':');
        let h: i64 = tp.next()?.parse().ok()?;
        let mi: i64 = tp.next()?.parse().ok()?;
        let sec: f64 = tp.next().map_or(Some(0.0), |x| x.parse().ok())?;
        if h > 23 || mi > 59 || !(0.0..61.0).contains(&sec) {
            return None;
        }
        ms += h * 3_600_000 + mi * 60_000 + (sec * 1000.0).round() as i64;
    }
    Some(ms)
}

/// A duration like `7d`, `12h`, `30m`, `90s` in milliseconds.
pub fn parse_span(s: &str) -> Option<i64> {
    let s = s.trim();
    let i = s.find(|c: char| !c.is_ascii_digit())?;
    let n: i64 = s[..i].parse().ok()?;
    let unit = match &s[i..] {
        "s" => 1000,
        "m" => 60_000,
        "h" => 3_600_000,
        "d" => 86_400_000,
        "w" => 7 * 86_400_000,
        _ => return None,
    };
    (n > 0).then_some(n * unit)
}

/// The cache root when `HOME` is set: metrics and logs are never written
/// relative to the working directory.
fn home_cache() -> Option<PathBuf> {
    crate::dirs::home().map(|_| crate::dirs::cache_root())
}

/// The metrics file: `$CODE_INDEX_METRICS` (a file path, or `off`), else
/// `<cache root>/metrics/events.jsonl`; `None` when turned off (or `HOME`
/// is unset).
pub fn metrics_file() -> Option<Rotating> {
    let set = settings().unwrap_or_default().metrics;
    let path = match std::env::var_os("CODE_INDEX_METRICS") {
        Some(v) if v == "off" || v.is_empty() => return None,
        Some(v) => PathBuf::from(v),
        None if !set.enabled => return None,
        None => home_cache()?.join("metrics/events.jsonl"),
    };
    Some(Rotating::new(path, set.max_size_mb, set.max_files))
}

static METRICS: OnceLock<Option<Rotating>> = OnceLock::new();

/// Record one metrics event: `event` names its kind; `fields` (a JSON
/// object) is merged after `ts` and `event`. Never file content or secrets:
/// callers pass paths, counts, timings and the agent's query (cut to 300
/// characters). A write that fails is dropped: metrics never fail a call.
pub fn record(event: &str, fields: serde_json::Value) {
    let Some(file) = METRICS.get_or_init(metrics_file) else {
        return;
    };
    let mut m = serde_json::Map::new();
    m.insert("ts".into(), rfc3339_ms(now_ms()).into());
    m.insert("event".into(), event.into());
    if let serde_json::Value::Object(f) = fields {
        for (k, v) in f {
            let v = match v {
                serde_json::Value::String(s) if s.chars().count() > 300 => {
                    serde_json::Value::String(s.chars().take(300).collect())
                }
                v => v,
            };
            m.insert(k, v);
        }
    }
    if let Ok(line) = serde_json::to_vec(&serde_json::Value::Object(m)) {
        let _ = file.append(&line);
    }
}

/// The log file of `binary` (`code-index-mcp`, `code-indexer`):
/// `$CODE_INDEX_LOG_DIR` or `<cache root>/logs` (none when `HOME` is unset),
/// rotated per the settings.
pub fn log_file(binary: &str, logging: &Logging) -> Option<Rotating> {
    let dir = match std::env::var_os("CODE_INDEX_LOG_DIR") {
        Some(d) => PathBuf::from(d),
        None => home_cache()?.join("logs"),
    };
    Some(Rotating::new(
        dir.join(format!("{binary}.log")),
        logging.max_size_mb,
        logging.max_files,
    ))
}

/// Is `p` one of a [`Rotating`] file's rotated predecessors (`name.N`)?
pub fn is_rotated_of(p: &Path, base: &Path) -> bool {
    let (Some(n), Some(b)) = (p.file_name(), base.file_name()) else {
        return false;
    };
    let (n, b) = (n.to_string_lossy(), b.to_string_lossy());
    n.strip_prefix(b.as_ref())
        .and_then(|r| r.strip_prefix('.'))
        .is_some_and(|r| r.parse::<u32>().is_ok())
}

/// A [`Rotating`] log file as a `tracing` writer: one append per event.
pub struct LogFile(pub Rotating);

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for LogFile {
    type Writer = RecordWriter<'a>;
    fn make_writer(&'a self) -> Self::Writer {
        RecordWriter::new(&self.0)
    }
}

/// Our crates at `level`; libraries (rmcp logs every message at info) at
/// most at `warn`.
fn level_filter(level: &str) -> tracing_subscriber::filter::Targets {
    use tracing_subscriber::filter::{LevelFilter, Targets};
    let l = match level {
        "error" => LevelFilter::ERROR,
        "warn" => LevelFilter::WARN,
        "debug" => LevelFilter::DEBUG,
        "trace" => LevelFilter::TRACE,
        "off" => LevelFilter::OFF,
        _ => LevelFilter::INFO,
    };
    Targets::new()
        .with_default(l.min(LevelFilter::WARN))
        .with_targets(
            [
                "code_index_mcp",
                "code_indexer",
                "code_index_server",
                "code_index_builder",
                "code_index_schemas",
            ]
            .map(|t| (t, l)),
        )
}

/// Start `binary`'s logs: its log file ([`log_file`]) at the settings' level
/// (`$CODE_INDEX_LOG` overrides it), rotated by size, and stderr at
/// `stderr_level` (`off`: the caller prints its own errors). A broken
/// settings file is reported on stderr and the defaults are used. Returns
/// the log file.
pub fn init_logging(binary: &str, stderr_level: &str) -> Option<Rotating> {
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    use tracing_subscriber::Layer;
    let (settings, problem) = match settings() {
        Ok(s) => (s, None),
        Err(e) => (Settings::default(), Some(e)),
    };
    let level = std::env::var("CODE_INDEX_LOG").unwrap_or(settings.logging.level.clone());
    let file = log_file(binary, &settings.logging);
    let stderr_level = match stderr_level {
        "off" | "warn" | "info" | "debug" | "trace" => stderr_level,
        _ => "error",
    };
    let _ = tracing_subscriber::registry()
        .with(file.clone().map(|f| {
            tracing_subscriber::fmt::layer()
                .with_ansi(false)
                .with_target(false)
                .with_writer(LogFile(f))
                .with_filter(level_filter(&level))
        }))
        .with(
            tracing_subscriber::fmt::layer()
                .without_time()
                .with_target(false)
                .with_ansi(false)
                .with_writer(std::io::stderr)
                .with_filter(level_filter(stderr_level)),
        )
        .try_init();
    if let Some(e) = problem {
        if stderr_level == "off" {
            eprintln!("{e}");
        }
        tracing::error!("{}", e.one_line());
    }
    file
}

/// The file of recently suggested paths, beside the metrics file.
fn suggested_file() -> Option<PathBuf> {
    let m = METRICS.get_or_init(metrics_file).as_ref()?;
    Some(m.path.with_file_name("suggested.txt"))
}

/// How many suggested paths are remembered.
const SUGGESTED_KEPT: usize = 500;

/// Remember paths (repo-relative) offered to an agent as context, so a later
/// read of one counts as `was_suggested`.
pub fn remember_suggested(paths: &[String]) {
    let Some(p) = suggested_file() else {
        return;
    };
    if paths.is_empty() {
        return;
    }
    let old = fs::read_to_string(&p).unwrap_or_default();
    let mut lines: Vec<&str> = old.lines().collect();
    lines.retain(|l| !paths.iter().any(|x| x == l));
    lines.extend(paths.iter().map(String::as_str));
    let start = lines.len().saturating_sub(SUGGESTED_KEPT);
    let tmp = p.with_extension(format!("tmp{}", std::process::id()));
    if let Some(d) = p.parent() {
        let _ = fs::create_dir_all(d);
    }
    if fs::write(&tmp, lines[start..].join("\n") + "\n").is_ok() {
        let _ = fs::rename(&tmp, &p);
    }
}

/// Was `path` (repo-relative) among the recently suggested paths?
pub fn was_suggested(path: &str) -> bool {
    suggested_file()
        .and_then(|p| fs::read_to_string(p).ok())
        .is_some_and(|t| t.lines().any(|l| l == path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_round_trips() {
        for ms in [0, 1_764_057_600_123, 951_782_400_000, 4_102_444_799_999] {
            let s = rfc3339_ms(ms);
            assert_eq!(parse_time(&s), Some(ms), "{s}");
        }
        assert_eq!(rfc3339_ms(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(parse_time("2000-02-29"), Some(951_782_400_000));
        assert_eq!(parse_time("2026-13-01"), None);
        assert_eq!(parse_span("7d"), Some(7 * 86_400_000));
        assert_eq!(parse_span("7x"), None);
    }

    #[test]
    fn rotates_by_size_keeping_max_files() {
        let d = tempfile::tempdir().unwrap();
        let r = Rotating {
            path: d.path().join("m.jsonl"),
            max_bytes: 100,
            max_files: 3,
        };
        for i in 0..100 {
            r.append(format!("{{\"i\":{i:04}}}").as_bytes()).unwrap();
        }
        let files = r.files();
        // Three rotated files, and the current one unless the last append rotated it.
        assert!(files.len() == 3 || files.len() == 4, "{files:?}");
        let mut lines = Vec::new();
        for f in &files {
            assert!(fs::metadata(f).unwrap().len() <= 100 + 11);
            lines.extend(fs::read_to_string(f).unwrap().lines().map(String::from));
        }
        // The newest lines survive, in order, none torn.
        assert_eq!(lines.last().unwrap(), "{\"i\":0099}");
        let nums: Vec<u32> = lines.iter().map(|l| l[5..9].parse().unwrap()).collect();
        assert!(nums.windows(2).all(|w| w[1] == w[0] + 1), "{nums:?}");
        assert!(!d.path().join("m.jsonl.4").exists());
    }

    #[test]
    fn settings_parse_and_reject() {
        let s = parse_settings(
            "logging:\n  level: debug\n  max_size_mb: 2\nmetrics: {enabled: false}\n",
        )
        .unwrap();
        assert_eq!(s.logging.level, "debug");
        assert_eq!(s.logging.max_size_mb, 2.0);
        assert!(!s.metrics.enabled);
        assert!(parse_settings("logging:\n  level: loud\n").is_err());
        assert!(parse_settings("logging:\n  colour: red\n").is_err());
        assert!(parse_settings("logging: {max_files: 0}\n").is_err());
    }
}
