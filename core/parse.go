package core

import (
	"sort"
	"strconv"
	"unicode/utf8"

	"github.com/pkg/errors"
)

// The parser reads the text syntax documented in the package comment in two phases: a
// hand-written lexer and recursive-descent parser build a small syntax tree (syn) with
// source positions, and an elaborator turns it into core terms through the type-checking
// constructors. Elaboration is where floating literals get their dtype from the context and
// where rank-0 operands of binary operations are broadcast with replicate.

// maxParseDepth bounds the nesting of parentheses, brackets, lambdas and prefix minus signs,
// so that hostile input gives an error instead of exhausting the stack.
const maxParseDepth = 10000

// ParseProgram parses a program fn (x : [3] f64, …) => body, type-checks it with the core
// constructors and returns it. Errors have the form
//
//	core: parse: line 1:23: expected ")", found "=>"
//
// and type errors carry the position of the offending construct in front of the
// constructor's message.
func ParseProgram(src string) (*Program, error) {
	p, err := newParser(src)
	if err != nil {
		return nil, err
	}
	if _, err := p.expect("fn"); err != nil {
		return nil, err
	}
	if _, err := p.expect("("); err != nil {
		return nil, err
	}
	type param struct {
		at  token
		typ Type
	}
	var params []param
	seen := map[string]bool{}
	err = p.commaList(")", false, func() error {
		name, err := p.varName()
		if err != nil {
			return err
		}
		if seen[name.text] {
			return p.errAt(name, "parameter %s declared twice", name.text)
		}
		seen[name.text] = true
		typ, err := after(p, ":", p.typ)
		if err != nil {
			return err
		}
		params = append(params, param{name, typ})
		return nil
	})
	if err != nil {
		return nil, err
	}
	body, err := after(p, "=>", p.whole)
	if err != nil {
		return nil, err
	}
	e := newElaborator()
	vars := make([]*Var, len(params))
	for i, pr := range params {
		v, err := NewVar(pr.at.text, pr.typ)
		if err != nil {
			return nil, wrapAt(pr.at, err)
		}
		vars[i] = v
		e.scope[v.Name] = v
	}
	b, err := e.term(body, InvalidDtype)
	if err != nil {
		return nil, err
	}
	prog, err := NewProgram(vars, b)
	if err != nil {
		return nil, errors.Wrap(err, "core: parse")
	}
	return prog, nil
}

// whole parses the rest of the input as one top-level term (a result tuple allowed) and
// checks its nesting height.
func (p *parser) whole() (*syn, error) {
	body, err := p.top()
	if err != nil {
		return nil, err
	}
	if err := p.end(); err != nil {
		return nil, err
	}
	return body, checkHeight(body)
}

// Parse parses a term whose free variables are typed by env (a variable that is neither in
// env nor bound in the term is an error). A result tuple is allowed as the whole term.
func Parse(src string, env map[string]Type) (Term, error) {
	p, err := newParser(src)
	if err != nil {
		return nil, err
	}
	body, err := p.whole()
	if err != nil {
		return nil, err
	}
	e := newElaborator()
	names := make([]string, 0, len(env))
	for name := range env {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		v, err := NewVar(name, env[name])
		if err != nil {
			return nil, errors.Wrap(err, "core: parse: environment")
		}
		e.scope[name] = v
	}
	return e.term(body, InvalidDtype)
}

// ---- lexer ----

type tokKind uint8

const (
	tokEOF tokKind = iota
	tokIdent
	tokInt
	tokFloat
	tokSym
)

type token struct {
	kind      tokKind
	text      string
	line, col int
}

func (t token) describe() string {
	if t.kind == tokEOF {
		return "end of input"
	}
	return strconv.Quote(t.text)
}

func isLetter(c byte) bool { return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }

var twoCharSyms = [...]string{"<=", ">=", "==", "!=", "&&", "||", "=>", "->"}

const oneCharSyms = "()[],:\\+-*/<>!="

func lex(src string) ([]token, error) {
	var toks []token
	line, col := 1, 1
	i := 0
	for i < len(src) {
		c := src[i]
		switch c {
		case '\n':
			line++
			col = 1
			i++
			continue
		case ' ', '\t', '\r':
			i++
			col++
			continue
		case '-':
			if i+1 < len(src) && src[i+1] == '-' { // a comment runs to the end of the line
				for i < len(src) && src[i] != '\n' {
					i++
				}
				continue
			}
		}
		start := i
		var kind tokKind
		switch {
		case isLetter(c):
			kind = tokIdent
			for i < len(src) && (isLetter(src[i]) || isDigit(src[i]) || src[i] == '\'') {
				i++
			}
		case isDigit(c):
			kind = tokInt
			for i < len(src) && isDigit(src[i]) {
				i++
			}
			if i+1 < len(src) && src[i] == '.' && isDigit(src[i+1]) {
				kind = tokFloat
				i++
				for i < len(src) && isDigit(src[i]) {
					i++
				}
			}
			if i < len(src) && (src[i] == 'e' || src[i] == 'E') {
				j := i + 1
				if j < len(src) && (src[j] == '+' || src[j] == '-') {
					j++
				}
				if j < len(src) && isDigit(src[j]) {
					kind = tokFloat
					i = j
					for i < len(src) && isDigit(src[i]) {
						i++
					}
				}
			}
		default:
			kind = tokSym
			for _, s := range twoCharSyms {
				if i+2 <= len(src) && src[i:i+2] == s {
					i += 2
					break
				}
			}
			if i == start {
				found := false
				for k := 0; k < len(oneCharSyms); k++ {
					if oneCharSyms[k] == c {
						found = true
						break
					}
				}
				if !found {
					r, _ := utf8.DecodeRuneInString(src[i:])
					return nil, errors.Errorf("core: parse: line %d:%d: expected a term, operator or punctuation, found unexpected character %q", line, col, r)
				}
				i++
			}
		}
		toks = append(toks, token{kind: kind, text: src[start:i], line: line, col: col})
		col += i - start
	}
	toks = append(toks, token{kind: tokEOF, line: line, col: col})
	return toks, nil
}

// ---- syntax tree ----

type synKind uint8

const (
	synVar synKind = iota
	synInt
	synFloat
	synBool
	synLit
	synLet
	synShare
	synCond
	synUnary
	synCast
	synBinary
	synIndex
	synSumOuter
	synArgmax
	synGather
	synScatter
	synFromVector
	synReplicate
	synTr
	synReshape
	synBuild1
	synBuild
	synIota
	synMatMul
	synTuple
)

// syn is a node of the syntax tree. Share references point to the defining syn node, so the
// tree is a DAG exactly where the text says so.
type syn struct {
	kind  synKind
	at    token   // position; for variables, lets and literals also the text
	name  string  // Var, Let: the variable
	vars  []token // Build1, Build, Gather, Scatter: lambda binders
	neg   bool    // Float: negated
	ival  int64   // Int
	bval  bool    // Bool
	n     int     // Share: ID; Replicate, Iota, Build1: size
	ints  []int   // Gather, Scatter, Reshape, Build: shape; Tr: permutation
	typ   Type    // Lit
	fvals []float64
	ivals []int64
	bvals []bool
	unop  UnOp
	binop BinOp
	dtype Dtype // Cast
	kids  []*syn
	flex  int8 // memo of flexible: 0 unknown, 1 yes, -1 no
}
