// The TypeScript MCP SDK as a client of code-index-mcp: list the tools,
// resources and templates, call every tool (the SDK validates each
// structuredContent against the tool's outputSchema with Ajv), read the
// resources, send a few bad calls. Prints one JSON report on stdout.
//
//   node client.mjs SERVER_BIN SNAPSHOT_DIR CALLS_JSON
//
// CALLS_JSON: [[tool, args], ...]. Warnings the SDK prints (Ajv's "unknown
// format") go to this process's stderr, which the test reads.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { readFileSync } from "node:fs";

const [serverBin, snapshot, callsFile] = process.argv.slice(2);
const calls = JSON.parse(readFileSync(callsFile, "utf8"));

const transport = new StdioClientTransport({
  command: serverBin,
  args: ["serve", "--index", snapshot],
  stderr: "ignore",
});
const client = new Client({ name: "code-index-ts-test", version: "1.0.0" });
await client.connect(transport);

const report = { server: client.getServerVersion(), tools: [], resources: [], templates: [], calls: [], reads: [] };
const { tools } = await client.listTools();
report.tools = tools.map((t) => ({ name: t.name, hasOutputSchema: !!t.outputSchema }));
report.resources = (await client.listResources()).resources.map((r) => r.uri);
report.templates = (await client.listResourceTemplates()).resourceTemplates.map((r) => r.uriTemplate);

for (const [name, args] of calls) {
  try {
    const r = await client.callTool({ name, arguments: args });
    report.calls.push({
      name,
      args,
      isError: !!r.isError,
      structured: r.structuredContent ?? null,
      text: (r.content?.[0]?.text ?? "").slice(0, 300),
    });
  } catch (e) {
    report.calls.push({ name, args, thrown: String(e) });
  }
}
for (const uri of report.resources.concat(["codeindex://relevant?path=django/db/models/query.py"])) {
  try {
    const r = await client.readResource({ uri });
    report.reads.push({ uri, bytes: r.contents.reduce((n, c) => n + (c.text?.length ?? 0), 0) });
  } catch (e) {
    report.reads.push({ uri, thrown: String(e) });
  }
}
await client.close();
process.stdout.write(JSON.stringify(report));
