//! The MCP surface (rmcp, stdio): the one module that touches rmcp. It
//! routes each tool to its module in [`crate::tools`], checks every call's
//! arguments first, serves the resources, and turns every outcome into a
//! result: `structuredContent` (with an `outputSchema`) plus a compact
//! text rendering, or `isError` with a body `{code, message, hint}` the
//! model can act on.

use std::sync::Arc;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::*;
use rmcp::service::RequestContext;
use rmcp::{tool, tool_handler, tool_router, ErrorData, RoleServer, ServerHandler};
use serde::Serialize;
use serde_json::Value;

use crate::error::{codes, ToolError};
use crate::resources;
use crate::state::{Busy, State};
use crate::tools;

#[derive(Clone)]
pub struct Server {
    tool_router: ToolRouter<Self>,
    /// Each tool's input schema, cleaned, as the arguments are checked against it.
    input_schemas: Arc<std::collections::HashMap<String, Value>>,
    live: Arc<crate::live::Live>,
}

impl Server {
    /// A server answering from `st` alone.
    pub fn new(st: Arc<State>) -> Server {
        Self::with_live(crate::live::Live::fixed(st))
    }

    /// A server answering from the state in force (see [`crate::live`]).
    pub fn with_live(live: crate::live::Live) -> Server {
        let mut tool_router = Self::tool_router();
        let mut input_schemas = std::collections::HashMap::new();
        // Standard JSON Schema only (the TypeScript SDK's Ajv warns at every
        // start about schemars' `uint32`/`uint64` formats).
        for route in tool_router.map.values_mut() {
            let mut v = Value::Object((*route.attr.input_schema).clone());
            crate::args::clean_schema(&mut v);
            if let Value::Object(m) = &v {
                route.attr.input_schema = Arc::new(m.clone());
            }
            input_schemas.insert(route.attr.name.to_string(), v);
            if let Some(out) = &route.attr.output_schema {
                let mut v = Value::Object((**out).clone());
                crate::args::clean_schema(&mut v);
                if let Value::Object(m) = v {
                    route.attr.output_schema = Some(Arc::new(m));
                }
            }
        }
        Server {
            tool_router,
            input_schemas: Arc::new(input_schemas),
            live: Arc::new(live),
        }
    }

    /// The state to answer from.
    pub(crate) fn state(&self) -> Arc<State> {
        self.live.get()
    }

    /// The checks every call passes before its tool runs: the arguments
    /// against the tool's input schema, then the values that need the
    /// loaded snapshots (`lang`, `path`).
    fn check_call(&self, req: &mut CallToolRequestParams) -> Result<(), ToolError> {
        let Some(schema) = self.input_schemas.get(req.name.as_ref()) else {
            return Ok(());
        };
        let args = req.arguments.get_or_insert_with(JsonObject::new);
        crate::args::check(&req.name, schema, args)?;
        // One state for all the checks (a snapshot swap between them would mix two).
        let st = self.state();
        if st.snaps.is_empty() && !matches!(req.name.as_ref(), "health" | "list_repos") {
            return Err(ToolError::new(
                crate::error::codes::NOT_FOUND,
                "no snapshot is loaded yet",
                "build one: `code-indexer index <repo> --out <the server's --index directory>`, or `code-indexer sync` in the repository; the server serves it within a second, no restart",
            ));
        }
        if let Some(Value::String(l)) = args.get("lang").filter(|l| l.as_str() != Some("")) {
            st.check_lang(l)?;
        }
        if args.get("cursor").and_then(Value::as_str) == Some("") {
            // An empty cursor is how many clients say "the first page".
            args.remove("cursor");
        }
        if let Some(Value::String(p)) = args.get("path") {
            crate::args::check_path(p).map_err(|e| st.suggest_relative(p, e))?;
            let norm = crate::args::normalize_path(p);
            if !matches!(req.name.as_ref(), "read_file" | "related_files") {
                let repo = args.get("repo").and_then(Value::as_str);
                st.check_path_exists(&norm, repo)?;
            }
            args.insert("path".into(), Value::String(norm));
        }
        Ok(())
    }
}

pub(crate) fn ok<T: Serialize>(out: &T, mut text: String) -> Result<CallToolResult, ErrorData> {
    let v =
        serde_json::to_value(out).map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
    with_cursor(&v, &mut text);
    let mut r = CallToolResult::structured(v);
    r.content = vec![ContentBlock::text(text)];
    Ok(r)
}

/// The text of a page that has a `next_cursor` ends with it, so a client
/// that shows the model only the text can still ask for the next page.
fn with_cursor(v: &Value, text: &mut String) {
    if let Some(c) = v.get("next_cursor").and_then(Value::as_str) {
        if !text.contains(c) {
            if !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str(&format!("next_cursor: {c}\n"));
        }
    }
}

fn fail(e: ToolError) -> Result<CallToolResult, ErrorData> {
    let text = e.to_string();
    let mut r = CallToolResult::structured_error(
        serde_json::json!({"code": e.code, "message": e.message, "hint": e.hint}),
    );
    r.content = vec![ContentBlock::text(text)];
    Ok(r)
}

/// A tool's result, each of its items from an overlaid file marked: an
/// object with a `path` (and `repo`) answered from an overlay gets
/// `"overlay": true`, and the text says which files those are. An item of
/// the working directory's repo whose file changed in the checkout since the
/// snapshot (and no overlay stands in for it) gets `"stale": true`, and the
/// text says so and how to update it.
pub(crate) fn ok_marked<T: Serialize>(
    st: &State,
    stale: &std::collections::BTreeSet<String>,
    out: &T,
    mut text: String,
) -> Result<CallToolResult, ErrorData> {
    let overlays = st.snaps.iter().any(|s| s.overlay_of().is_some());
    if !overlays && stale.is_empty() {
        return ok(out, text);
    }
    let mut v =
        serde_json::to_value(out).map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
    with_cursor(&v, &mut text);
    let mut marked = Marked::default();
    mark_overlaid(st, stale, &mut v, &mut marked);
    let list = |set: &std::collections::BTreeSet<String>| {
        let names: Vec<&str> = set.iter().take(10).map(String::as_str).collect();
        format!(
            "{}{}",
            names.join(", "),
            if set.len() > 10 { ", ..." } else { "" }
        )
    };
    if !marked.overlay.is_empty() {
        text.push_str(&format!(
            "\n(overlay: {} from the working tree as of the last `code-indexer invalidate-file`, not the snapshot: {})",
            if marked.overlay.len() == 1 { "this file is" } else { "these files are" },
            list(&marked.overlay)
        ));
    }
    if !marked.stale.is_empty() {
        text.push_str(&format!(
            "\n(stale: {} changed in the checkout since the snapshot, so lines and names there may be out of date: {}; `code-indexer invalidate-file <file>` or `code-indexer sync` updates the index)",
            if marked.stale.len() == 1 { "this file" } else { "these files" },
            list(&marked.stale)
        ));
    }
    let mut r = CallToolResult::structured(v);
    r.content = vec![ContentBlock::text(text)];
    Ok(r)
}

#[derive(Default)]
struct Marked {
    overlay: std::collections::BTreeSet<String>,
    stale: std::collections::BTreeSet<String>,
}

fn mark_overlaid(
    st: &State,
    stale: &std::collections::BTreeSet<String>,
    v: &mut Value,
    marked: &mut Marked,
) {
    match v {
        Value::Array(a) => a
            .iter_mut()
            .for_each(|x| mark_overlaid(st, stale, x, marked)),
        Value::Object(m) => {
            if let Some(Value::String(path)) = m.get("path") {
                let repo = match m.get("repo") {
                    Some(Value::String(r)) => Some(r.clone()),
                    _ => None,
                };
                let repo = repo.as_deref();
                let path = path.clone();
                if st.overlaid(repo, &path) {
                    marked.overlay.insert(path.clone());
                    m.insert("overlay".into(), Value::Bool(true));
                }
                let default = st.default_repo.as_deref();
                if stale.contains(&path)
                    && default.is_some()
                    && repo.is_none_or(|r| Some(r) == default)
                {
                    marked.stale.insert(path);
                    m.insert("stale".into(), Value::Bool(true));
                }
            }
            m.values_mut()
                .for_each(|x| mark_overlaid(st, stale, x, marked));
        }
        _ => {}
    }
}

/// A synchronous tool's outcome as a result.
fn answer<T: Serialize>(r: Result<(T, String), ToolError>) -> Result<CallToolResult, ErrorData> {
    match r {
        Ok((out, text)) => ok(&out, text),
        Err(e) => fail(e),
    }
}

/// Run `f` off the async runtime; a panic in it is an `INTERNAL` error for
/// this call only.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, ToolError> + Send + 'static,
) -> Result<T, ToolError> {
    match tokio::task::spawn_blocking(move || crate::guard::catch(f)).await {
        Ok(r) => r,
        Err(e) => Err(crate::guard::internal(&e.to_string())),
    }
}

/// Run a tool body off the async runtime and render its outcome.
pub(crate) async fn respond<T: Serialize + Send + 'static>(
    st: &Arc<State>,
    f: impl FnOnce() -> Result<(T, String), ToolError> + Send + 'static,
) -> Result<CallToolResult, ErrorData> {
    let _busy = Busy::new(st);
    let st2 = st.clone();
    // The checkout's changed paths (a few git calls, reused for seconds) are
    // read off the async runtime, like the tool itself.
    match blocking(move || f().map(|r| (r, st2.stale_paths()))).await {
        Ok(((out, text), stale)) => ok_marked(st, &stale, &out, text),
        Err(e) => fail(e),
    }
}

#[tool_router]
impl Server {
    #[tool(
        description = tools::grep::DESCRIPTION,
        annotations(read_only_hint = true, open_world_hint = false),
        output_schema = crate::outschema::output_schema::<tools::grep::GrepOut>()
    )]
    async fn grep(
        &self,
        Parameters(a): Parameters<tools::grep::GrepArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let st = self.state();
        respond(&st.clone(), move || tools::grep::run(&st, a)).await
    }

    #[tool(
        description = tools::search_files::DESCRIPTION,
        annotations(read_only_hint = true, open_world_hint = false),
        output_schema = crate::outschema::output_schema::<tools::search_files::SearchFilesOut>()
    )]
    async fn search_files(
        &self,
        Parameters(a): Parameters<tools::search_files::SearchFilesArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let st = self.state();
        respond(&st.clone(), move || tools::search_files::run(&st, a)).await
    }

    #[tool(
        description = tools::read_file::DESCRIPTION,
        annotations(read_only_hint = true, open_world_hint = false),
        output_schema = crate::outschema::output_schema::<tools::read_file::ReadFileOut>()
    )]
    async fn read_file(
        &self,
        Parameters(a): Parameters<tools::read_file::ReadFileArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let st = self.state();
        respond(&st.clone(), move || tools::read_file::run(&st, a)).await
    }

    #[tool(
        description = tools::changes::DESCRIPTION,
        annotations(read_only_hint = true, open_world_hint = false),
        output_schema = crate::outschema::output_schema::<tools::changes::ChangesOut>()
    )]
    async fn changes(
        &self,
        Parameters(a): Parameters<tools::changes::ChangesArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let st = self.state();
        respond(&st.clone(), move || tools::changes::run(&st, a)).await
    }

    #[tool(
        description = tools::search_symbols::DESCRIPTION,
        annotations(read_only_hint = true, open_world_hint = false),
        output_schema = crate::outschema::output_schema::<tools::SymbolsOut>()
    )]
    async fn search_symbols(
        &self,
        Parameters(a): Parameters<tools::search_symbols::SearchSymbolsArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let st = self.state();
        respond(&st.clone(), move || tools::search_symbols::run(&st, a)).await
    }

    #[tool(
        description = tools::find_definitions::DESCRIPTION,
        annotations(read_only_hint = true, open_world_hint = false),
        output_schema = crate::outschema::output_schema::<tools::SymbolsOut>()
    )]
    async fn find_definitions(
        &self,
        Parameters(a): Parameters<tools::SymbolArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let st = self.state();
        respond(&st.clone(), move || tools::find_definitions::run(&st, a)).await
    }

    #[tool(
        description = tools::find_references::DESCRIPTION,
        annotations(read_only_hint = true, open_world_hint = false),
        output_schema = crate::outschema::output_schema::<tools::find_references::ReferencesOut>()
    )]
    async fn find_references(
        &self,
        Parameters(a): Parameters<tools::SymbolArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let st = self.state();
        respond(&st.clone(), move || tools::find_references::run(&st, a)).await
    }

    #[tool(
        description = tools::search::DESCRIPTION,
        annotations(read_only_hint = true, open_world_hint = false),
        output_schema = crate::outschema::output_schema::<tools::search::SearchOut>()
    )]
    async fn search(
        &self,
        Parameters(a): Parameters<tools::search::SearchArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let st = self.state();
        respond(&st.clone(), move || tools::search::run(&st, a)).await
    }

    #[tool(
        description = tools::list_repos::DESCRIPTION,
        annotations(read_only_hint = true, open_world_hint = false),
        output_schema = crate::outschema::output_schema::<tools::list_repos::ListReposOut>()
    )]
    async fn list_repos(
        &self,
        Parameters(a): Parameters<tools::NoArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        answer(tools::list_repos::run(&self.state(), a))
    }

    #[tool(
        description = tools::health::DESCRIPTION,
        annotations(read_only_hint = true, open_world_hint = false),
        output_schema = crate::outschema::output_schema::<tools::health::HealthOut>()
    )]
    async fn health(
        &self,
        Parameters(a): Parameters<tools::NoArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        answer(tools::health::run(&self.state(), a))
    }

    #[tool(
        description = tools::search_code::DESCRIPTION,
        annotations(read_only_hint = true, open_world_hint = false),
        output_schema = crate::outschema::output_schema::<tools::search_code::SearchCodeOut>()
    )]
    async fn search_code(
        &self,
        Parameters(a): Parameters<tools::search_code::SearchCodeArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let st = self.state();
        respond(&st.clone(), move || tools::search_code::run(&st, a)).await
    }

    #[tool(
        description = tools::related_files::DESCRIPTION,
        annotations(read_only_hint = true, open_world_hint = false),
        output_schema = crate::outschema::output_schema::<tools::related_files::RelatedFilesOut>()
    )]
    async fn related_files(
        &self,
        Parameters(a): Parameters<tools::related_files::RelatedFilesArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let st = self.state();
        respond(&st.clone(), move || tools::related_files::run(&st, a)).await
    }

    #[tool(
        description = tools::call_graph::DESCRIPTION,
        annotations(read_only_hint = true, open_world_hint = false),
        output_schema = crate::outschema::output_schema::<tools::call_graph::CallGraphOut>()
    )]
    async fn call_graph(
        &self,
        Parameters(a): Parameters<tools::call_graph::CallGraphArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let st = self.state();
        respond(&st.clone(), move || tools::call_graph::run(&st, a)).await
    }
}

impl Server {
    /// A checked call run by its tool: a panic is `INTERNAL` for this call
    /// only, and a deserialization error rmcp reports is an `INVALID_ARGUMENT`.
    async fn call_checked(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        use futures::FutureExt;
        let tcc = rmcp::handler::server::tool::ToolCallContext::new(self, request, context);
        let r = match std::panic::AssertUnwindSafe(self.tool_router.call(tcc))
            .catch_unwind()
            .await
        {
            Ok(r) => r,
            Err(p) => {
                return fail(crate::guard::internal(&crate::guard::panic_message(&*p)))
                    .map(Into::into)
            }
        };
        match r {
            Ok(CallToolResponse::Complete(res))
                if res.is_error == Some(true) && res.structured_content.is_none() =>
            {
                // rmcp's own argument error (text only): give it our code.
                let text = res
                    .content
                    .first()
                    .and_then(|c| c.as_text())
                    .map(|t| t.text.clone())
                    .unwrap_or_default();
                fail(ToolError::invalid_argument(
                    text.trim_start_matches("failed to deserialize parameters: ")
                        .to_string(),
                    "check the argument types against the tool's input schema",
                ))
                .map(Into::into)
            }
            other => other,
        }
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Server {
    /// Every call is checked first ([`Server::check_call`]), whatever goes
    /// wrong after is a coded tool result ([`Server::call_checked`]), and
    /// each is a metrics event ([`crate::metrics`]).
    async fn call_tool(
        &self,
        mut request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let (tool, args, t) = (
            request.name.to_string(),
            request.arguments.clone(),
            std::time::Instant::now(),
        );
        let hits = crate::recent::HITS.load(std::sync::atomic::Ordering::Relaxed);
        let r = match self.check_call(&mut request) {
            Err(e) => fail(e).map(Into::into),
            Ok(()) => self.call_checked(request, context).await,
        };
        let cached = crate::recent::HITS.load(std::sync::atomic::Ordering::Relaxed) > hits;
        crate::metrics::tool_call(&tool, args.as_ref(), &r, t.elapsed(), cached);
        r
    }

    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().enable_resources().build())
            .with_server_info(Implementation::new("code-index-mcp", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Read-only code search over indexed snapshots. search_code = find code by meaning or name when you don't know where it is \
                 (also \"what calls X\", \"from A to B\"); related_files = what else to read for a file; call_graph = callers/callees; \
                 search_symbols / find_definitions = where is X defined; \
                 find_references = where is X used; grep = ripgrep-exact regex search; search_files = find paths; \
                 read_file = read lines; list_repos / health = what is loaded. Paths are repo-relative.",
            )
    }

    async fn list_resources(
        &self,
        _r: Option<PaginatedRequestParams>,
        _c: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(ListResourcesResult::with_all_items(vec![Resource::new(
            resources::HEALTH_URI,
            "health",
        )
        .with_description("Server and snapshot health (JSON)")
        .with_mime_type("application/json")]))
    }

    async fn list_resource_templates(
        &self,
        _r: Option<PaginatedRequestParams>,
        _c: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(ListResourceTemplatesResult::with_all_items(vec![
            ResourceTemplate::new(resources::RELEVANT_TEMPLATE, "relevant")
                .with_description(
                    "What to read next, as condensed markdown: files related to `path` (imports, callers, tests) and the best chunks for `query`.",
                )
                .with_mime_type("text/markdown"),
        ]))
    }

    async fn read_resource(
        &self,
        req: ReadResourceRequestParams,
        _c: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        if let Some(rest) = req.uri.strip_prefix(resources::RELEVANT_PREFIX) {
            let params = resources::parse_query_string(rest.strip_prefix('?').unwrap_or(rest));
            let get = |k: &str| params.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
            let (path, query, repo) = (get("path"), get("query"), get("repo"));
            let as_error = |e: ToolError| ErrorData::invalid_params(e.one_line().to_string(), None);
            for (k, v) in [("path", &path), ("query", &query), ("repo", &repo)] {
                if v.as_ref()
                    .is_some_and(|v| v.len() > crate::args::MAX_STRING_LEN)
                {
                    return Err(as_error(ToolError::invalid_argument(
                        format!("`{k}` is longer than {} bytes", crate::args::MAX_STRING_LEN),
                        format!("shorten `{k}`"),
                    )));
                }
            }
            if let Some(p) = &path {
                crate::args::check_path(p).map_err(as_error)?;
            }
            let st = self.state();
            let _busy = Busy::new(&st);
            let md = blocking(move || {
                crate::resources::relevant_markdown(
                    &st,
                    path.as_deref(),
                    query.as_deref(),
                    repo.as_deref(),
                )
            })
            .await
            .map_err(as_error)?;
            return Ok(ReadResourceResult::new(vec![
                ResourceContents::text(md, req.uri.clone()).with_mime_type("text/markdown")
            ])
            .into());
        }
        if req.uri == resources::HEALTH_URI {
            let body = serde_json::to_string_pretty(&tools::health::report(&self.state()))
                .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
            return Ok(ReadResourceResult::new(vec![ResourceContents::text(
                body,
                req.uri.clone(),
            )
            .with_mime_type("application/json")])
            .into());
        }
        let unknown = ToolError::new(
            codes::NOT_FOUND,
            format!(
                "unknown resource {}",
                req.uri.chars().take(200).collect::<String>()
            ),
            format!(
                "read {} or {}",
                resources::HEALTH_URI,
                resources::RELEVANT_TEMPLATE
            ),
        );
        Err(ErrorData::resource_not_found(
            unknown.one_line().to_string(),
            None,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use code_index_schemas::fuzz;
    use proptest::prelude::*;

    fn deserializes(name: &str, v: Value) -> Result<(), String> {
        fn de<T: serde::de::DeserializeOwned>(v: Value) -> Result<(), String> {
            serde_json::from_value::<T>(v)
                .map(|_| ())
                .map_err(|e| e.to_string())
        }
        use crate::tools::*;
        match name {
            "grep" => de::<grep::GrepArgs>(v),
            "search_files" => de::<search_files::SearchFilesArgs>(v),
            "read_file" => de::<read_file::ReadFileArgs>(v),
            "search_symbols" => de::<search_symbols::SearchSymbolsArgs>(v),
            "find_definitions" | "find_references" => de::<SymbolArgs>(v),
            "search" => de::<search::SearchArgs>(v),
            "list_repos" | "health" => de::<NoArgs>(v),
            "search_code" => de::<search_code::SearchCodeArgs>(v),
            "related_files" => de::<related_files::RelatedFilesArgs>(v),
            "call_graph" => de::<call_graph::CallGraphArgs>(v),
            "changes" => de::<changes::ChangesArgs>(v),
            other => panic!("no argument type for tool {other}: add it here"),
        }
    }

    fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            (-2000i64..2000).prop_map(Value::from),
            any::<f64>().prop_map(Value::from),
            (-5i64..50).prop_map(|x| Value::from(x as f64)),
            ".{0,12}".prop_map(Value::from),
        ];
        leaf.prop_recursive(2, 8, 3, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..3).prop_map(Value::from),
                prop::collection::btree_map("[a-z]{1,3}", inner, 0..3)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    #[test]
    fn fuzz_tool_arguments() {
        let mut router = Server::tool_router();
        let mut tools: Vec<(String, Value)> = Vec::new();
        for (name, route) in router.map.iter_mut() {
            let mut v = Value::Object((*route.attr.input_schema).clone());
            crate::args::clean_schema(&mut v);
            tools.push((name.to_string(), v));
        }
        tools.sort_by(|a, b| a.0.cmp(&b.0));
        let names: Vec<String> = tools
            .iter()
            .flat_map(|(_, s)| {
                s.get("properties")
                    .and_then(Value::as_object)
                    .map(|p| p.keys().cloned().collect::<Vec<_>>())
                    .unwrap_or_default()
            })
            .chain(["bogus".to_string()])
            .collect();
        let call = (
            0..tools.len(),
            prop::collection::vec((prop::sample::select(names), json_value()), 0..6),
        );
        // What the checker accepts, the tool's argument type deserializes.
        fuzz::run("tool_arguments", call, |(t, kv)| {
            let (name, schema) = &tools[t];
            let mut args: JsonObject = kv.into_iter().collect();
            if let Ok(()) = crate::args::check(name, schema, &mut args) {
                let r = deserializes(name, Value::Object(args.clone()));
                prop_assert!(r.is_ok(), "{name} {args:?} passed the check but: {r:?}");
            }
            Ok(())
        });
    }
}
