//! Definitions and references by name: search_symbols' ranked and regex
//! lookups, definitions a name designates, identifier occurrences,
//! "did you mean" names.

use duckdb::types::Value;
use serde::Serialize;

use super::{internal, quote, repos_in, val_i64, val_str, Store};
use crate::error::{codes, ToolError};

/// The `symbols` condition for the definitions a name designates: a
/// qualified name ("Model.save", "Foo::bar") that definition only, matched
/// on the end of `qualified_name` at a dot; a bare name every definition of
/// that name.
pub(super) fn definition_condition(name: &str) -> (&'static str, Vec<Value>) {
    let q = written_name(name);
    match q.split_once('.') {
        // `Server.ListenAndServe` as a qualified name, or `http.Server.ListenAndServe`
        // / `query.QuerySet`: a package directory or module file, then the name in it.
        Some((pkg, rest)) => (
            "(qualified_name = ? OR ends_with(qualified_name, ?) OR (qualified_name = ? AND \
             (regexp_extract(path, '([^/]+)/[^/]*$', 1) = ? OR regexp_extract(path, '([^/.]+)[^/]*$', 1) = ?)))",
            vec![
                Value::Text(q.clone()),
                Value::Text(format!(".{q}")),
                Value::Text(rest.to_string()),
                Value::Text(pkg.to_string()),
                Value::Text(pkg.to_string()),
            ],
        ),
        None => ("name = ?", vec![Value::Text(q)]),
    }
}

/// A name as agents copy it from docs and stack traces, in the index's
/// form: `a::b::C` → `a.b.C`; Go's `(*Server).ListenAndServe` and
/// `net/http.(*Server).Serve` → `Server.ListenAndServe`, `http.Server.Serve`.
pub(crate) fn written_name(name: &str) -> String {
    let q = name.trim().replace("::", ".");
    let q = q.rsplit('/').next().unwrap_or(&q).to_string();
    let q = q.replace("(*", "").replace(['(', ')'], "");
    q.trim_matches('.').to_string()
}

/// A definition row.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct SymbolRow {
    pub repo: String,
    pub path: String,
    pub name: String,
    pub qualified_name: String,
    pub kind: String,
    pub language: String,
    pub container: Option<String>,
    pub signature: String,
    pub doc: Option<String>,
    pub line: u64,
    pub end_line: u64,
    pub name_line: u64,
}

/// A reference row.
#[derive(Clone, Debug, Serialize)]
pub struct RefRow {
    pub repo: String,
    pub path: String,
    pub line: u64,
    pub column: u64,
    pub ref_kind: String,
    pub enclosing_symbol: Option<String>,
}

/// How `search_symbols` matches names.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum NameMatch {
    /// exact, then prefix, then substring (case-insensitive), ranked in that order.
    Ranked,
    Regex,
    /// name or qualified_name equal, or qualified_name ending in `.name`.
    Definition,
}

#[derive(Clone, Debug, Default)]
pub struct SymbolFilter {
    pub repos: Vec<String>,
    pub kind: Option<String>,
    pub lang: Option<String>,
    pub path: Option<String>,
}

/// A definition found for search_code's routing.
#[derive(Clone, Debug, PartialEq)]
pub struct DefinitionRow {
    pub repo: String,
    pub path: String,
    /// Its first line.
    pub line: i64,
    pub qualified_name: String,
    pub kind: String,
    /// How closely its name matches: 0 the whole qualified name, 1 a suffix
    /// at a dot, 2 the last part alone (the rows come in this order).
    pub tier: i64,
}

impl Store {
    /// Definitions matching `query`, ranked; returns one page and the total.
    pub fn symbols(
        &self,
        query: &str,
        how: NameMatch,
        f: &SymbolFilter,
        limit: usize,
        offset: usize,
    ) -> Result<(Vec<SymbolRow>, u64), ToolError> {
        let mut params: Vec<Value> = Vec::new();
        let (cond, rank) = match how {
            NameMatch::Ranked => {
                params.extend([
                    Value::Text(query.to_string()),
                    Value::Text(query.to_string()),
                    Value::Text(query.to_lowercase()),
                    Value::Text(query.to_lowercase()),
                ]);
                (
                    "(name = ? OR qualified_name = ? OR starts_with(lower(name), ?) OR contains(lower(qualified_name), ?))",
                    format!(
                        "CASE WHEN name = {q} OR qualified_name = {q} THEN 0 WHEN starts_with(lower(name), {l}) THEN 1 ELSE 2 END, ",
                        q = quote(query),
                        l = quote(&query.to_lowercase())
                    ),
                )
            }
            NameMatch::Regex => {
                params.push(Value::Text(query.to_string()));
                ("regexp_matches(name, ?)", String::new())
            }
            NameMatch::Definition => {
                let (cond, p) = definition_condition(query);
                params.extend(p);
                (cond, String::new())
            }
        };
        let mut sql = format!("FROM symbols WHERE {cond}");
        if !f.repos.is_empty() {
            sql.push_str(&format!(
                " AND repo IN ({})",
                f.repos
                    .iter()
                    .map(|r| quote(r))
                    .collect::<Vec<_>>()
                    .join(",")
            ));
        }
        if let Some(k) = &f.kind {
            sql.push_str(" AND kind = ?");
            params.push(Value::Text(k.clone()));
        }
        if let Some(l) = &f.lang {
            sql.push_str(" AND language = ?");
            params.push(Value::Text(l.clone()));
        }
        if let Some(p) = &f.path {
            let p = p.trim_matches('/');
            if !p.is_empty() {
                sql.push_str(" AND (path = ? OR starts_with(path, ?))");
                params.push(Value::Text(p.to_string()));
                params.push(Value::Text(format!("{p}/")));
            }
        }
        let conn = self.conn()?;
        let total: i64 = conn
            .prepare(&format!("SELECT count(*) {sql}"))
            .and_then(|mut s| s.query_row(duckdb::params_from_iter(params.iter()), |r| r.get(0)))
            .map_err(|e| {
                if how == NameMatch::Regex {
                    // DuckDB's message names its own error class; the
                    // pattern and what is wrong with it follow the colon.
                    let m = e.to_string();
                    let m = m
                        .strip_prefix("Invalid Input Error: ")
                        .unwrap_or(&m)
                        .to_string();
                    ToolError::new(
                        codes::INVALID_PATTERN,
                        format!("invalid regex: {m}"),
                        "fix the regex (RE2 syntax, as grep's without look-around), or drop regex: true",
                    )
                } else {
                    internal(e)
                }
            })?;
        let q = format!(
            "SELECT repo, path, name, qualified_name, kind, language, container, signature, doc, start_line, end_line, name_line \
             {sql} ORDER BY {rank}repo, path, start_line, qualified_name LIMIT {limit} OFFSET {offset}"
        );
        let mut stmt = conn.prepare(&q).map_err(internal)?;
        let rows = stmt
            .query_map(duckdb::params_from_iter(params.iter()), |r| {
                Ok(SymbolRow {
                    repo: r.get(0)?,
                    path: r.get(1)?,
                    name: r.get(2)?,
                    qualified_name: r.get(3)?,
                    kind: r.get(4)?,
                    language: r.get(5)?,
                    container: r.get(6)?,
                    signature: r.get(7)?,
                    doc: r.get(8)?,
                    line: r.get::<_, i32>(9)? as u64,
                    end_line: r.get::<_, i32>(10)? as u64,
                    name_line: r.get::<_, i32>(11)? as u64,
                })
            })
            .map_err(internal)?
            .collect::<Result<Vec<_>, _>>()
            .map_err(internal)?;
        Ok((rows, total as u64))
    }

    /// Identifier occurrences named `name` (from the references table).
    pub fn references(
        &self,
        name: &str,
        repos: &[String],
        path: Option<&str>,
    ) -> Result<Vec<RefRow>, ToolError> {
        let mut sql = String::from("SELECT repo, path, line, \"column\", ref_kind, enclosing_symbol FROM refs WHERE name = ?");
        let mut params = vec![Value::Text(name.to_string())];
        if !repos.is_empty() {
            sql.push_str(&format!(
                " AND repo IN ({})",
                repos.iter().map(|r| quote(r)).collect::<Vec<_>>().join(",")
            ));
        }
        if let Some(p) = path.map(|p| p.trim_matches('/')).filter(|p| !p.is_empty()) {
            sql.push_str(" AND (path = ? OR starts_with(path, ?))");
            params.push(Value::Text(p.to_string()));
            params.push(Value::Text(format!("{p}/")));
        }
        sql.push_str(" ORDER BY repo, path, line, \"column\"");
        let conn = self.conn()?;
        let mut stmt = conn.prepare(&sql).map_err(internal)?;
        let rows = stmt
            .query_map(duckdb::params_from_iter(params.iter()), |r| {
                Ok(RefRow {
                    repo: r.get(0)?,
                    path: r.get(1)?,
                    line: r.get::<_, i32>(2)? as u64,
                    column: r.get::<_, i32>(3)? as u64,
                    ref_kind: r.get(4)?,
                    enclosing_symbol: r.get(5)?,
                })
            })
            .map_err(internal)?
            .collect::<Result<Vec<_>, _>>()
            .map_err(internal)?;
        Ok(rows)
    }

    /// Names of definitions close to `name` (for "did you mean").
    pub fn similar_names(&self, name: &str, limit: usize) -> Vec<String> {
        let Ok(conn) = self.conn() else {
            return Vec::new();
        };
        let q = format!(
            "SELECT name FROM (SELECT DISTINCT name FROM symbols) ORDER BY jaro_winkler_similarity(lower(name), lower(?)) DESC, name LIMIT {limit}"
        );
        conn.prepare(&q)
            .and_then(|mut s| {
                s.query_map([name], |r| r.get::<_, String>(0))
                    .and_then(|rows| rows.collect())
            })
            .unwrap_or_default()
    }

    /// Whether any of `repos` defines something named exactly `name`.
    pub fn has_symbol(&self, name: &str, repos: &[String]) -> Result<bool, ToolError> {
        self.rows(
            &format!(
                "SELECT 1 FROM symbols WHERE name = ? AND repo IN ({}) LIMIT 1",
                repos_in(repos)
            ),
            &[Value::Text(name.to_string())],
        )
        .map(|r| !r.is_empty())
    }

    /// Definitions (not fields or variables) that `name` designates, for
    /// search_code's routing: its last segment as a name, or the qualified
    /// name exactly or at a dot; exact qualified names first, then by
    /// qualified ending, non-tests first, repo, path, line (at most 50).
    pub fn definitions_named(
        &self,
        name: &str,
        repos: &[String],
    ) -> Result<Vec<DefinitionRow>, ToolError> {
        let last = name.rsplit(['.', ':']).next().unwrap_or(name);
        let rows = self.rows(
            &format!(
                "SELECT repo, path, start_line, qualified_name, kind, \
                 CASE WHEN qualified_name = ? THEN 0 WHEN ends_with(qualified_name, ?) THEN 1 ELSE 2 END AS tier \
                 FROM symbols WHERE (name = ? OR qualified_name = ? OR ends_with(qualified_name, ?)) AND repo IN ({}) \
                 AND kind NOT IN ('field', 'variable') \
                 ORDER BY tier, is_test, repo, path, start_line LIMIT 50",
                repos_in(repos)
            ),
            &[
                Value::Text(name.to_string()),
                Value::Text(format!(".{name}")),
                Value::Text(last.to_string()),
                Value::Text(name.to_string()),
                Value::Text(format!(".{name}")),
            ],
        )?;
        Ok(rows
            .iter()
            .map(|r| DefinitionRow {
                repo: val_str(&r[0]),
                path: val_str(&r[1]),
                line: val_i64(&r[2]),
                qualified_name: val_str(&r[3]),
                kind: val_str(&r[4]),
                tier: val_i64(&r[5]),
            })
            .collect())
    }
}

#[cfg(test)]
mod name_tests {
    use super::written_name;

    #[test]
    fn names_as_agents_write_them() {
        for (w, n) in [
            ("(*Server).ListenAndServe", "Server.ListenAndServe"),
            ("net/http.(*Server).Serve", "http.Server.Serve"),
            ("(Server).Close", "Server.Close"),
            ("serde::de::Deserialize", "serde.de.Deserialize"),
            (" QuerySet.get ", "QuerySet.get"),
            ("save", "save"),
        ] {
            assert_eq!(written_name(w), n, "{w}");
        }
    }
}
