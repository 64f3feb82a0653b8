// Every call `f(…)` / `x.m(…)` / `new C(…)` in a TypeScript tree, resolved by
// the TypeScript compiler's type checker (typescript 5.9.3, pinned by
// tests/ts/package-lock.json): the oracle of TypeScript call resolution.
//
//   cd ~/.cache/code-index/ts-client && node /path/to/calls.mjs TREE > calls.tsv
//
// One tab-separated line per call: calling file (relative to TREE), line of
// the callee's name (1-based), the callee as written (`f`, `x.m`, `this.m`,
// `new C`: the receiver's text cut to 60 bytes), its shape (bare, member,
// this, super, new), and the declaration the checker picks after following
// import aliases: its file relative to TREE (`-` outside it: lib.d.ts, a
// package), the line of its name, its name. A call the checker cannot
// resolve (an `any` receiver, a computed callee) prints `?` for all three.
// The program: every .ts/.tsx file under TREE, module resolution `bundler`
// (`./a.js` finds `./a.ts`), strict, ES2022 + DOM libs, no emit.
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";

const require = createRequire(path.join(process.cwd(), "package.json"));
const ts = require("typescript");

const root = path.resolve(process.argv[2]);
function files(dir) {
  const r = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) {
      if (e.name !== "node_modules" && !e.name.startsWith(".")) r.push(...files(p));
    } else if (/\.tsx?$/.test(e.name)) r.push(p);
  }
  return r;
}

const program = ts.createProgram(files(root).sort(), {
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.ESNext,
  moduleResolution: ts.ModuleResolutionKind.Bundler,
  lib: ["lib.es2022.d.ts", "lib.dom.d.ts"],
  strict: true,
  noEmit: true,
  skipLibCheck: true,
  allowImportingTsExtensions: true,
  jsx: ts.JsxEmit.Preserve,
});
const checker = program.getTypeChecker();
const out = [];
const rel = (f) => {
  const r = path.relative(root, f);
  return r.startsWith("..") || path.isAbsolute(r) ? "-" : r;
};

for (const sf of program.getSourceFiles()) {
  if (rel(sf.fileName) === "-" || sf.isDeclarationFile) continue;
  const src = rel(sf.fileName);
  const visit = (n) => {
    if (ts.isCallExpression(n) || ts.isNewExpression(n)) {
      const e = n.expression;
      let nameNode = null;
      let shape = null;
      let written = null;
      if (ts.isNewExpression(n)) {
        nameNode = ts.isPropertyAccessExpression(e) ? e.name : e;
        shape = "new";
        written = "new " + e.getText(sf).slice(0, 60);
      } else if (ts.isIdentifier(e)) {
        nameNode = e;
        shape = "bare";
        written = e.text;
      } else if (ts.isPropertyAccessExpression(e)) {
        nameNode = e.name;
        const recv = e.expression;
        shape = recv.kind === ts.SyntaxKind.ThisKeyword ? "this" : recv.kind === ts.SyntaxKind.SuperKeyword ? "super" : "member";
        written = recv.getText(sf).replace(/\s+/g, " ").slice(0, 60) + "." + e.name.text;
      } else if (e.kind === ts.SyntaxKind.SuperKeyword) {
        nameNode = e;
        shape = "super";
        written = "super";
      }
      if (nameNode) {
        const line = sf.getLineAndCharacterOfPosition(nameNode.getStart(sf)).line + 1;
        let target = ["?", "?", "?"];
        let sym = checker.getSymbolAtLocation(nameNode);
        if (sym && sym.flags & ts.SymbolFlags.Alias) {
          try {
            sym = checker.getAliasedSymbol(sym);
          } catch {}
        }
        // The declaration the call selects: a signature's, else the symbol's.
        let decl = null;
        if (ts.isCallExpression(n) || ts.isNewExpression(n)) {
          const sig = checker.getResolvedSignature(n);
          // A named function's or method's overload; a call signature of a
          // type (`const map: { <A>(…): … }`) names nothing: its symbol's
          // declaration does.
          const d = sig && sig.declaration;
          if (d && !ts.isJSDocSignature(d) && d.name && (ts.isFunctionDeclaration(d) || ts.isMethodDeclaration(d) || ts.isMethodSignature(d))) decl = d;
          if (d && ts.isConstructorDeclaration(d)) decl = d;
        }
        if (!decl && sym) decl = sym.valueDeclaration || (sym.declarations && sym.declarations[0]) || null;
        // `new C(…)` selects C's constructor: C is the callee. One of several
        // overloads: the first declaration names them all, as an index would.
        if (decl && ts.isConstructorDeclaration(decl)) decl = decl.parent;
        const decls = decl && decl.symbol && decl.symbol.declarations;
        if (decls && decls.length > 1 && decls.includes(decl) && decls.every((d) => ts.isFunctionLike(d))) decl = decls[0];
        if (decl) {
          const dsf = decl.getSourceFile();
          const dn = decl.name || decl;
          const nm = decl.name && decl.name.getText ? decl.name.getText(dsf) : (sym ? sym.name : "?");
          target = [rel(dsf.fileName), String(dsf.getLineAndCharacterOfPosition(dn.getStart(dsf)).line + 1), nm];
        }
        out.push([src, String(line), written.replace(/\t/g, " "), shape, ...target].join("\t"));
      }
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
}
process.stdout.write(out.join("\n") + "\n");
