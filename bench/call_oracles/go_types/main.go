// Command go_types_oracle type-checks a Go source tree laid out as GOROOT
// (the pinned go-stdlib corpus: src/<import path>, src/vendor, src/cmd/vendor)
// with go/types, and prints one tab-separated line per method call `x.M(…)`
// go/types resolves: the calling file (relative to the tree), the line of `M`,
// the receiver (a name, else `(…)`) and method name, and the file and line of the method's
// declaration (a struct's, a promoted embedded one's, or an interface's
// method). tests/test_go_typed_receivers.py uses it as the oracle for Go calls through a
// typed receiver (feature 19).
//
// Usage: go run . TREE > calls.tsv
package main

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

type loader struct {
	root  string
	fset  *token.FileSet
	ctx   build.Context
	cache map[string]*types.Package
}

func (l *loader) Import(path string) (*types.Package, error) {
	return l.ImportFrom(path, "", 0)
}

// The directory an import path names, seen from dir: the cmd vendor tree
// for the commands, the std vendor tree, else src/<path>.
func (l *loader) dirOf(path, from string) string {
	src := filepath.Join(l.root, "src")
	cands := []string{}
	if strings.HasPrefix(from, filepath.Join(src, "cmd")) {
		cands = append(cands, filepath.Join(src, "cmd", "vendor", path))
	}
	cands = append(cands, filepath.Join(src, "vendor", path), filepath.Join(src, path))
	for _, c := range cands {
		if st, err := os.Stat(c); err == nil && st.IsDir() {
			return c
		}
	}
	return filepath.Join(src, path)
}

func (l *loader) ImportFrom(path, from string, _ types.ImportMode) (*types.Package, error) {
	if path == "unsafe" {
		return types.Unsafe, nil
	}
	dir := l.dirOf(path, from)
	if p, ok := l.cache[dir]; ok {
		return p, nil
	}
	bp, err := l.ctx.ImportDir(dir, 0)
	if err != nil && bp == nil {
		return nil, err
	}
	files := l.parse(dir, append(append([]string{}, bp.GoFiles...), bp.CgoFiles...))
	conf := types.Config{Importer: l, FakeImportC: true, Error: func(error) {}}
	p, _ := conf.Check(path, l.fset, files, nil)
	l.cache[dir] = p
	return p, nil
}

func (l *loader) parse(dir string, names []string) []*ast.File {
	var out []*ast.File
	for _, n := range names {
		f, err := parser.ParseFile(l.fset, filepath.Join(dir, n), nil, parser.SkipObjectResolution)
		if err == nil {
			out = append(out, f)
		}
	}
	return out
}

func main() {
	root, _ := filepath.Abs(os.Args[1])
	ctx := build.Default
	ctx.GOROOT = root
	ctx.GOOS, ctx.GOARCH = "linux", "amd64"
	ctx.CgoEnabled = true
	l := &loader{root: root, fset: token.NewFileSet(), ctx: ctx, cache: map[string]*types.Package{}}
	var dirs []string
	filepath.WalkDir(filepath.Join(root, "src"), func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		if err == nil && d.IsDir() {
			dirs = append(dirs, p)
		}
		return nil
	})
	sort.Strings(dirs)
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	for _, dir := range dirs {
		bp, err := ctx.ImportDir(dir, 0)
		if err != nil && bp == nil || bp == nil || len(bp.GoFiles)+len(bp.CgoFiles)+len(bp.TestGoFiles)+len(bp.XTestGoFiles) == 0 {
			continue
		}
		rel, _ := filepath.Rel(filepath.Join(root, "src"), dir)
		path := filepath.ToSlash(rel)
		if strings.HasPrefix(path, "vendor/") {
			path = strings.TrimPrefix(path, "vendor/")
		} else if i := strings.Index(path, "cmd/vendor/"); i == 0 {
			path = strings.TrimPrefix(path, "cmd/vendor/")
		}
		// The package with its in-package tests, then its external tests.
		groups := [][]string{append(append(append([]string{}, bp.GoFiles...), bp.CgoFiles...), bp.TestGoFiles...)}
		if len(bp.XTestGoFiles) > 0 {
			groups = append(groups, bp.XTestGoFiles)
		}
		for gi, names := range groups {
			files := l.parse(dir, names)
			if len(files) == 0 {
				continue
			}
			info := &types.Info{Selections: map[*ast.SelectorExpr]*types.Selection{}}
			conf := types.Config{Importer: l, FakeImportC: true, Error: func(error) {}}
			pp := path
			if gi == 1 {
				pp += "_test"
			}
			conf.Check(pp, l.fset, files, info)
			for _, f := range files {
				ast.Inspect(f, func(n ast.Node) bool {
					call, ok := n.(*ast.CallExpr)
					if !ok {
						return true
					}
					sel, ok := call.Fun.(*ast.SelectorExpr)
					if !ok {
						return true
					}
					s := info.Selections[sel]
					if s == nil || s.Kind() != types.MethodVal || !s.Obj().Pos().IsValid() {
						return true
					}
					at := l.fset.Position(sel.Sel.Pos())
					def := l.fset.Position(s.Obj().Pos())
					src, _ := filepath.Rel(root, at.Filename)
					dst, err := filepath.Rel(root, def.Filename)
					if err != nil || strings.HasPrefix(dst, "..") {
						return true
					}
					// The receiver as written when it is a name (`t.Errorf`), else `(…)`.
					recv := "(…)"
					if id, ok := sel.X.(*ast.Ident); ok {
						recv = id.Name
					}
					fmt.Fprintf(w, "%s\t%d\t%s.%s\t%s\t%d\n", filepath.ToSlash(src), at.Line,
						recv, sel.Sel.Name, filepath.ToSlash(dst), def.Line)
					return true
				})
			}
		}
	}
}
