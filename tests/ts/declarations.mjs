// The declarations the TypeScript compiler's parser finds in every .ts/.tsx
// file under a directory (tests/test_ts_declarations.py's oracle).
//
//   node declarations.mjs ROOT > decls.json
//
// Prints {path: {"defs": [[kind, name, line], ...], "names": [[name, line], ...],
// "errors": n}}: `defs` are the definitions compared with our symbols
// (functions and methods with a body, classes, interfaces, type aliases,
// enums, namespaces, and variables declared at a file's or namespace's top
// level), `names` every named declaration of any kind (properties,
// signatures, parameters, ...: what a symbol of ours may legitimately name),
// `errors` the parser's syntax diagnostics. Lines are 1-based, of the name.
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";

const require = createRequire(path.join(process.cwd(), "package.json"));
const ts = require("typescript");

const root = process.argv[2];
const out = {};

function files(dir) {
  const r = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) {
      if (e.name !== "node_modules" && !e.name.startsWith(".")) r.push(...files(p));
    } else if (/\.tsx?$/.test(e.name) && !e.name.endsWith(".d.ts")) {
      r.push(p);
    }
  }
  return r;
}

for (const file of files(root).sort()) {
  const text = fs.readFileSync(file, "utf8");
  const kind = file.endsWith(".tsx") ? ts.ScriptKind.TSX : ts.ScriptKind.TS;
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, kind);
  const defs = [];
  const names = [];
  const line = (n) => sf.getLineAndCharacterOfPosition(n.getStart(sf)).line + 1;
  const topLevel = (n) => {
    // A variable statement directly in the file or in a namespace's block.
    const stmt = n.parent && n.parent.parent;
    if (!stmt || !ts.isVariableStatement(stmt)) return false;
    const holder = stmt.parent;
    return ts.isSourceFile(holder) || ts.isModuleBlock(holder);
  };
  const visit = (n) => {
    if (ts.isConstructorDeclaration(n)) names.push(["constructor", line(n.getChildren(sf).find((c) => c.kind === ts.SyntaxKind.ConstructorKeyword) || n)]);
    const name = n.name;
    const named = name && (ts.isIdentifier(name) || ts.isPrivateIdentifier(name) || ts.isStringLiteral(name));
    // A computed name (`[Symbol.iterator]`) is written as the source writes it.
    if (name && ts.isComputedPropertyName(name)) names.push([name.getText(sf), line(name)]);
    if (named) {
      const nm = name.text;
      names.push([nm, line(name)]);
      // A module named by a string (`declare module "./Option.js"`) also as written.
      if (ts.isStringLiteral(name)) names.push([name.getText(sf), line(name)]);
      let k = null;
      if (ts.isFunctionDeclaration(n) && n.body) k = "function";
      else if (ts.isClassDeclaration(n)) k = "class";
      else if (ts.isInterfaceDeclaration(n)) k = "interface";
      else if (ts.isTypeAliasDeclaration(n)) k = "type";
      else if (ts.isEnumDeclaration(n)) k = "enum";
      else if (ts.isModuleDeclaration(n) && ts.isIdentifier(name)) k = "namespace";
      else if (ts.isMethodDeclaration(n) && n.body && ts.isClassLike(n.parent)) k = "method";
      else if (ts.isVariableDeclaration(n) && ts.isIdentifier(name) && topLevel(n)) k = "variable";
      if (k) defs.push([k, nm, line(name)]);
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  out[path.relative(root, file)] = { defs, names, errors: sf.parseDiagnostics.length };
}
process.stdout.write(JSON.stringify(out));
