//! `code-indexer metrics`: summaries of the metrics JSONL the server and the
//! hooks write (`code_index_schemas::ops::record`): what agents searched, how
//! fast, what found nothing, and whether suggested files were read.
//!
//! Percentiles are nearest-rank (the value at rank ⌈p·n⌉ of the sorted list).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use crate::error::{codes, Error, Result};

/// One parsed event.
#[derive(Debug, Clone)]
pub struct Event {
    pub ts_ms: i64,
    pub v: Value,
}

impl Event {
    fn kind(&self) -> &str {
        self.v["event"].as_str().unwrap_or("")
    }
    fn str(&self, k: &str) -> &str {
        self.v[k].as_str().unwrap_or("")
    }
    fn latency(&self) -> Option<f64> {
        self.v["latency_ms"].as_f64()
    }
    fn is_error(&self) -> bool {
        !self.v["error"].is_null()
    }
}

/// The events of `file` and its rotated predecessors (`file.N`), oldest
/// first; lines that are not JSON objects with a readable `ts` are counted.
pub fn read(file: &Path) -> Result<(Vec<Event>, u64)> {
    let dir = file.parent().unwrap_or(Path::new("."));
    let mut files: Vec<(u32, PathBuf)> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| code_index_schemas::ops::is_rotated_of(p, file))
        .filter_map(|p| {
            let n = p.extension()?.to_str()?.parse().ok()?;
            Some((n, p))
        })
        .collect();
    files.sort_by_key(|f| std::cmp::Reverse(f.0));
    let mut paths: Vec<PathBuf> = files.into_iter().map(|(_, p)| p).collect();
    if file.is_file() {
        paths.push(file.to_path_buf());
    }
    if paths.is_empty() {
        return Err(Error::new(
            codes::NO_METRICS,
            format!("no metrics at {}", file.display()),
            "metrics are written by code-index-mcp and the hooks once they run; pass --file <events.jsonl>, or check CODE_INDEX_METRICS",
        )
        .at(file));
    }
    let (mut events, mut bad) = (Vec::new(), 0u64);
    for p in paths {
        let text = std::fs::read_to_string(&p).map_err(|e| {
            Error::io(
                codes::NO_METRICS,
                "cannot read",
                &p,
                e,
                "check the file's permissions",
            )
        })?;
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let ev = serde_json::from_str::<Value>(line).ok().and_then(|v| {
                let ts = code_index_schemas::ops::parse_time(v["ts"].as_str()?)?;
                v.is_object().then_some(Event { ts_ms: ts, v })
            });
            match ev {
                Some(e) => events.push(e),
                None => bad += 1,
            }
        }
    }
    events.sort_by_key(|e| e.ts_ms);
    Ok((events, bad))
}

/// Nearest-rank percentile of sorted values.
fn pct(sorted: &[f64], p: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = ((p * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    Some(sorted[rank - 1])
}

fn sorted(mut v: Vec<f64>) -> Vec<f64> {
    v.sort_by(|a, b| a.total_cmp(b));
    v
}

#[derive(Debug, Serialize, Default, PartialEq)]
pub struct ToolStats {
    pub calls: u64,
    pub zero_results: u64,
    pub errors: u64,
    pub p50_ms: Option<f64>,
    pub p95_ms: Option<f64>,
}

#[derive(Debug, Serialize, Default)]
pub struct QueryCount {
    pub tool: String,
    pub query: String,
    pub count: u64,
    pub last_ts: String,
}

/// A window's summary.
#[derive(Debug, Serialize, Default)]
pub struct Summary {
    pub from: Option<String>,
    pub to: Option<String>,
    pub events: u64,
    pub by_event: BTreeMap<String, u64>,
    pub searches: u64,
    pub zero_results: u64,
    pub zero_result_rate: Option<f64>,
    pub errors: u64,
    pub p50_ms: Option<f64>,
    pub p95_ms: Option<f64>,
    pub by_tool: BTreeMap<String, ToolStats>,
    pub top_queries: Vec<QueryCount>,
    pub file_reads: u64,
    pub suggested_reads: u64,
    /// Share of file reads whose file had been suggested as context.
    pub suggestion_hit_rate: Option<f64>,
    pub context_injects: u64,
}

/// `a / b` to four decimals (`None` when `b` is 0).
pub(crate) fn rate(a: u64, b: u64) -> Option<f64> {
    (b > 0).then(|| (a as f64 / b as f64 * 10000.0).round() / 10000.0)
}

/// Queries grouped by (tool, query), most frequent first.
fn group_queries<'a>(events: impl Iterator<Item = &'a Event>, limit: usize) -> Vec<QueryCount> {
    let mut m: BTreeMap<(String, String), (u64, i64)> = BTreeMap::new();
    for e in events {
        let k = (e.str("tool").to_string(), e.str("query").to_string());
        let x = m.entry(k).or_default();
        x.0 += 1;
        x.1 = x.1.max(e.ts_ms);
    }
    let mut v: Vec<QueryCount> = m
        .into_iter()
        .map(|((tool, query), (count, last))| QueryCount {
            tool,
            query,
            count,
            last_ts: code_index_schemas::ops::rfc3339_ms(last),
        })
        .collect();
    v.sort_by(|a, b| b.count.cmp(&a.count).then(b.last_ts.cmp(&a.last_ts)));
    v.truncate(limit);
    v
}

pub fn summarize(events: &[&Event], top: usize) -> Summary {
    let mut s = Summary {
        events: events.len() as u64,
        from: events
            .first()
            .map(|e| code_index_schemas::ops::rfc3339_ms(e.ts_ms)),
        to: events
            .last()
            .map(|e| code_index_schemas::ops::rfc3339_ms(e.ts_ms)),
        ..Summary::default()
    };
    let mut lat = Vec::new();
    let mut tool_lat: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for e in events {
        *s.by_event.entry(e.kind().to_string()).or_default() += 1;
        match e.kind() {
            "search" => {
                s.searches += 1;
                let t = s.by_tool.entry(e.str("tool").to_string()).or_default();
                t.calls += 1;
                if e.v["zero_results"].as_bool() == Some(true) {
                    s.zero_results += 1;
                    t.zero_results += 1;
                }
                if e.is_error() {
                    s.errors += 1;
                    t.errors += 1;
                }
                if let Some(l) = e.latency() {
                    lat.push(l);
                    tool_lat
                        .entry(e.str("tool").to_string())
                        .or_default()
                        .push(l);
                }
            }
            "file_read" => {
                s.file_reads += 1;
                if e.v["was_suggested"].as_bool() == Some(true) {
                    s.suggested_reads += 1;
                }
            }
            "context_inject" => s.context_injects += 1,
            _ => {}
        }
    }
    let lat = sorted(lat);
    (s.p50_ms, s.p95_ms) = (pct(&lat, 0.5), pct(&lat, 0.95));
    for (tool, l) in tool_lat {
        let l = sorted(l);
        if let Some(t) = s.by_tool.get_mut(&tool) {
            (t.p50_ms, t.p95_ms) = (pct(&l, 0.5), pct(&l, 0.95));
        }
    }
    s.zero_result_rate = rate(s.zero_results, s.searches);
    s.suggestion_hit_rate = rate(s.suggested_reads, s.file_reads);
    s.top_queries = group_queries(events.iter().copied().filter(|e| e.kind() == "search"), top);
    s
}

/// What `metrics` was asked.
pub enum Report {
    /// The last `span_ms` (before `now_ms`).
    Summary { span_ms: i64 },
    /// Searches whose query contains this (case-insensitive).
    Query { text: String, span_ms: i64 },
    /// Zero-result searches, grouped.
    ZeroResults { span_ms: i64 },
    /// Before `before` against from `after` on.
    Compare { before: i64, after: i64 },
}

#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum Output {
    Summary(Box<Summary>),
    Query {
        query: String,
        matches: u64,
        events: Vec<Value>,
    },
    ZeroResults {
        searches: u64,
        zero_results: u64,
        queries: Vec<QueryCount>,
    },
    Compare {
        before: Box<Summary>,
        after: Box<Summary>,
    },
}

pub fn report(events: &[Event], r: &Report, now_ms: i64, limit: usize) -> Output {
    let since = |span: i64| -> Vec<&Event> {
        events
            .iter()
            .filter(|e| e.ts_ms >= now_ms - span && e.ts_ms <= now_ms)
            .collect()
    };
    match r {
        Report::Summary { span_ms } => {
            Output::Summary(Box::new(summarize(&since(*span_ms), limit)))
        }
        Report::Query { text, span_ms } => {
            let needle = text.to_lowercase();
            let hits: Vec<&Event> = since(*span_ms)
                .into_iter()
                .filter(|e| e.kind() == "search" && e.str("query").to_lowercase().contains(&needle))
                .collect();
            Output::Query {
                query: text.clone(),
                matches: hits.len() as u64,
                events: hits.iter().rev().take(limit).map(|e| e.v.clone()).collect(),
            }
        }
        Report::ZeroResults { span_ms } => {
            let w = since(*span_ms);
            let searches: Vec<&Event> = w.into_iter().filter(|e| e.kind() == "search").collect();
            let zero: Vec<&Event> = searches
                .iter()
                .copied()
                .filter(|e| e.v["zero_results"].as_bool() == Some(true))
                .collect();
            Output::ZeroResults {
                searches: searches.len() as u64,
                zero_results: zero.len() as u64,
                queries: group_queries(zero.into_iter(), limit),
            }
        }
        Report::Compare { before, after } => {
            let b: Vec<&Event> = events.iter().filter(|e| e.ts_ms < *before).collect();
            let a: Vec<&Event> = events.iter().filter(|e| e.ts_ms >= *after).collect();
            Output::Compare {
                before: Box::new(summarize(&b, limit)),
                after: Box::new(summarize(&a, limit)),
            }
        }
    }
}

fn ms(v: Option<f64>) -> String {
    v.map_or("-".into(), |x| format!("{x:.1}"))
}

/// A rate as a percentage (`-` when unknown).
pub(crate) fn pc(v: Option<f64>) -> String {
    v.map_or("-".into(), |x| format!("{:.1}%", x * 100.0))
}

fn render_summary(s: &Summary, out: &mut String) {
    out.push_str(&format!(
        "{} event(s) {} .. {}\n",
        s.events,
        s.from.as_deref().unwrap_or("-"),
        s.to.as_deref().unwrap_or("-")
    ));
    out.push_str(&format!(
        "searches {}  zero-result {} ({})  errors {}  latency p50 {} ms  p95 {} ms\n",
        s.searches,
        s.zero_results,
        pc(s.zero_result_rate),
        s.errors,
        ms(s.p50_ms),
        ms(s.p95_ms)
    ));
    out.push_str(&format!(
        "file reads {}  of them suggested {} ({})  context injections {}\n",
        s.file_reads,
        s.suggested_reads,
        pc(s.suggestion_hit_rate),
        s.context_injects
    ));
    if !s.by_tool.is_empty() {
        out.push_str(&format!(
            "\n{:<18} {:>8} {:>10} {:>7} {:>9} {:>9}\n",
            "tool", "calls", "zero-res", "errors", "p50 ms", "p95 ms"
        ));
        for (t, x) in &s.by_tool {
            out.push_str(&format!(
                "{:<18} {:>8} {:>10} {:>7} {:>9} {:>9}\n",
                t,
                x.calls,
                x.zero_results,
                x.errors,
                ms(x.p50_ms),
                ms(x.p95_ms)
            ));
        }
    }
    if !s.top_queries.is_empty() {
        out.push_str("\ntop queries\n");
        for q in &s.top_queries {
            out.push_str(&format!("{:>6}  {:<16} {}\n", q.count, q.tool, q.query));
        }
    }
}

/// The text form of a report, for a terminal.
pub fn render(o: &Output) -> String {
    let mut out = String::new();
    match o {
        Output::Summary(s) => render_summary(s, &mut out),
        Output::Query {
            query,
            matches,
            events,
        } => {
            out.push_str(&format!(
                "{matches} search(es) with '{query}' in the query\n"
            ));
            for e in events {
                out.push_str(&format!(
                    "{}  {:<16} {:>5} result(s) {:>8} ms  {}\n",
                    e["ts"].as_str().unwrap_or(""),
                    e["tool"].as_str().unwrap_or(""),
                    e["results"].as_u64().unwrap_or(0),
                    ms(e["latency_ms"].as_f64()),
                    e["query"].as_str().unwrap_or("")
                ));
            }
        }
        Output::ZeroResults {
            searches,
            zero_results,
            queries,
        } => {
            out.push_str(&format!(
                "{zero_results} of {searches} search(es) found nothing\n"
            ));
            for q in queries {
                out.push_str(&format!(
                    "{:>6}  {:<16} {}  (last {})\n",
                    q.count, q.tool, q.query, q.last_ts
                ));
            }
        }
        Output::Compare { before, after } => {
            out.push_str(&format!(
                "{:<22} {:>14} {:>14}\n{:<22} {:>14} {:>14}\n{:<22} {:>14} {:>14}\n{:<22} {:>14} {:>14}\n{:<22} {:>14} {:>14}\n{:<22} {:>14} {:>14}\n",
                "", "before", "after",
                "searches", before.searches, after.searches,
                "zero-result rate", pc(before.zero_result_rate), pc(after.zero_result_rate),
                "latency p50 ms", ms(before.p50_ms), ms(after.p50_ms),
                "latency p95 ms", ms(before.p95_ms), ms(after.p95_ms),
                "suggestion hit rate", pc(before.suggestion_hit_rate), pc(after.suggestion_hit_rate),
            ));
        }
    }
    out
}
