package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Finding is one fmt.Errorf that may wrap a nil error.
type Finding struct {
	Pos token.Position
	// Name is the error variable, Why the condition under which it is nil.
	Name, Why string
}

func (f Finding) String() string {
	return fmt.Sprintf("%s: fmt.Errorf wraps %s with %%w where %s can be nil (%s): it would print %%!w(<nil>); check %s on its own",
		f.Pos, f.Name, f.Name, f.Why, f.Name)
}

// CheckDir parses every .go file under dir, whatever its build constraints
// (darwin files included), skipping testdata, vendor and hidden
// directories, and returns the findings in file order.
func CheckDir(dir string) ([]Finding, error) {
	fset := token.NewFileSet()
	var findings []Finding
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error { //nolint:gosec // G703: walks the directory named on the command line
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != dir && (name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		src, err := os.ReadFile(path) //nolint:gosec // G304: a source file under the directory named on the command line
		if err != nil {
			return err
		}
		found, err := CheckFile(fset, path, src)
		if err != nil {
			return err
		}
		findings = append(findings, found...)
		return nil
	})
	sort.SliceStable(findings, func(i, j int) bool {
		a, b := findings[i].Pos, findings[j].Pos
		if a.Filename != b.Filename {
			return a.Filename < b.Filename
		}
		return a.Offset < b.Offset
	})
	return findings, err
}

// CheckFile reports, in one file, every fmt.Errorf that wraps with %w an
// error variable the enclosing if statement lets be nil:
//
//   - in the body of `if A || err != nil`, where A alone lets the body run
//     with err nil (the `!ok || err != nil` of a call that returns both);
//   - in the body of `if err == nil` or `if A && err == nil`;
//   - in the else branch of `if err != nil`, or of an if whose condition
//     joins `err != nil` to others with && or ||.
//
// A variable assigned in the branch before the call is taken as set there.
// Only the syntax is read, so a file of any platform can be checked.
func CheckFile(fset *token.FileSet, name string, src []byte) ([]Finding, error) {
	f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	var out []Finding
	ast.Inspect(f, func(n ast.Node) bool {
		s, ok := n.(*ast.IfStmt)
		if !ok {
			return true
		}
		for _, c := range nilInBody(s.Cond) {
			out = append(out, wrapsIn(fset, s.Body, c)...)
		}
		if s.Else != nil {
			for _, c := range nilInElse(s.Cond) {
				out = append(out, wrapsIn(fset, s.Else, c)...)
			}
		}
		return true
	})
	return out, nil
}

// nilCase is a variable an if branch may run with as nil, and why.
type nilCase struct{ name, why string }

// nilInBody names the variables cond lets the if's body see as nil.
func nilInBody(cond ast.Expr) []nilCase {
	var out []nilCase
	if ors := flatten(cond, token.LOR); len(ors) > 1 {
		for _, d := range ors {
			if name, ok := compareNil(d, token.NEQ); ok && !allCompare(ors, name, token.NEQ) {
				out = append(out, nilCase{name, fmt.Sprintf("the body also runs when %s, with %s nil", others(ors, d), name)})
			}
		}
	}
	for _, c := range flatten(cond, token.LAND) {
		if name, ok := compareNil(c, token.EQL); ok {
			out = append(out, nilCase{name, "the body runs when " + name + " == nil"})
		}
	}
	return out
}

// nilInElse names the variables an else branch may see as nil: those cond
// tests with != nil, alone or among other terms.
func nilInElse(cond ast.Expr) []nilCase {
	var out []nilCase
	terms := flatten(cond, token.LAND)
	if len(terms) == 1 {
		terms = flatten(cond, token.LOR)
	}
	for _, c := range terms {
		if name, ok := compareNil(c, token.NEQ); ok {
			out = append(out, nilCase{name, "the else branch runs when " + name + " == nil"})
		}
	}
	return out
}

// flatten splits e into the operands of a chain of op.
func flatten(e ast.Expr, op token.Token) []ast.Expr {
	e = ast.Unparen(e)
	if b, ok := e.(*ast.BinaryExpr); ok && b.Op == op {
		return append(flatten(b.X, op), flatten(b.Y, op)...)
	}
	return []ast.Expr{e}
}

// compareNil reports whether e is `name op nil` (either way round) for a
// plain identifier name.
func compareNil(e ast.Expr, op token.Token) (string, bool) {
	b, ok := ast.Unparen(e).(*ast.BinaryExpr)
	if !ok || b.Op != op {
		return "", false
	}
	x, y := ast.Unparen(b.X), ast.Unparen(b.Y)
	if isNil(x) {
		x, y = y, x
	}
	id, ok := x.(*ast.Ident)
	if !ok || !isNil(y) {
		return "", false
	}
	return id.Name, true
}

func isNil(e ast.Expr) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == "nil"
}

// allCompare reports whether every term is `name op nil`: `err != nil ||
// err != nil` cannot run with err nil.
func allCompare(terms []ast.Expr, name string, op token.Token) bool {
	for _, t := range terms {
		if n, ok := compareNil(t, op); !ok || n != name {
			return false
		}
	}
	return true
}

// others prints the terms other than skip, joined by ||.
func others(terms []ast.Expr, skip ast.Expr) string {
	var parts []string
	for _, t := range terms {
		if t != skip {
			parts = append(parts, source(t))
		}
	}
	return strings.Join(parts, " || ")
}

// source prints an expression as it reads in the code, shortly.
func source(e ast.Expr) string {
	var b strings.Builder
	printExpr(&b, e)
	return b.String()
}

func printExpr(b *strings.Builder, e ast.Expr) {
	switch e := e.(type) {
	case *ast.Ident:
		b.WriteString(e.Name)
	case *ast.UnaryExpr:
		b.WriteString(e.Op.String())
		printExpr(b, e.X)
	case *ast.BinaryExpr:
		printExpr(b, e.X)
		b.WriteString(" " + e.Op.String() + " ")
		printExpr(b, e.Y)
	case *ast.ParenExpr:
		b.WriteString("(")
		printExpr(b, e.X)
		b.WriteString(")")
	case *ast.SelectorExpr:
		printExpr(b, e.X)
		b.WriteString("." + e.Sel.Name)
	case *ast.CallExpr:
		printExpr(b, e.Fun)
		b.WriteString("(...)")
	case *ast.BasicLit:
		b.WriteString(e.Value)
	default:
		b.WriteString("...")
	}
}

// wrapsIn finds the fmt.Errorf calls in branch that wrap c.name with %w
// before any assignment to it in the branch.
func wrapsIn(fset *token.FileSet, branch ast.Stmt, c nilCase) []Finding {
	var out []Finding
	assigned := token.NoPos
	ast.Inspect(branch, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false // runs later, when the variable may have changed
		case *ast.AssignStmt:
			for _, l := range n.Lhs {
				if id, ok := l.(*ast.Ident); ok && id.Name == c.name && (assigned == token.NoPos || n.Pos() < assigned) {
					assigned = n.Pos()
				}
			}
		case *ast.CallExpr:
			if !isErrorf(n) || (assigned != token.NoPos && assigned < n.Pos()) {
				return true
			}
			for _, arg := range wrappedArgs(n) {
				if id, ok := ast.Unparen(arg).(*ast.Ident); ok && id.Name == c.name {
					out = append(out, Finding{Pos: fset.Position(n.Pos()), Name: c.name, Why: c.why})
				}
			}
		}
		return true
	})
	return out
}

// isErrorf reports whether call is fmt.Errorf(...).
func isErrorf(call *ast.CallExpr) bool {
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "Errorf" {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	return ok && pkg.Name == "fmt"
}

// wrappedArgs are the arguments of an Errorf call that its format's %w
// verbs take. A format that is not a string literal (or a sum of them)
// yields none.
func wrappedArgs(call *ast.CallExpr) []ast.Expr {
	if len(call.Args) == 0 {
		return nil
	}
	format, ok := literal(call.Args[0])
	if !ok {
		return nil
	}
	var out []ast.Expr
	for _, i := range wrapVerbs(format) {
		if 1+i < len(call.Args) {
			out = append(out, call.Args[1+i])
		}
	}
	return out
}

// literal is the value of a string literal or a + of them.
func literal(e ast.Expr) (string, bool) {
	switch e := ast.Unparen(e).(type) {
	case *ast.BasicLit:
		if e.Kind != token.STRING {
			return "", false
		}
		s, err := strconv.Unquote(e.Value)
		return s, err == nil
	case *ast.BinaryExpr:
		if e.Op != token.ADD {
			return "", false
		}
		x, ok1 := literal(e.X)
		y, ok2 := literal(e.Y)
		return x + y, ok1 && ok2
	}
	return "", false
}

// wrapVerbs returns the argument index (0-based, after the format) of each
// %w in format, following fmt's rules for flags, width and precision (a *
// takes an argument) and explicit [n] indexes.
func wrapVerbs(format string) []int {
	var out []int
	arg := 0
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			continue
		}
		i++
		if i < len(format) && format[i] == '%' {
			continue
		}
		for ; i < len(format); i++ {
			ch := format[i]
			switch {
			case strings.IndexByte("+-# 0.", ch) >= 0 || ('0' <= ch && ch <= '9'):
				continue
			case ch == '*':
				arg++
				continue
			case ch == '[':
				end := strings.IndexByte(format[i:], ']')
				if end < 0 {
					return out
				}
				if n, err := strconv.Atoi(format[i+1 : i+end]); err == nil && n > 0 {
					arg = n - 1
				}
				i += end
				continue
			}
			break
		}
		if i >= len(format) {
			break
		}
		if format[i] == 'w' {
			out = append(out, arg)
		}
		arg++
	}
	return out
}
