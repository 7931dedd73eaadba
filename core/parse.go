package core

import (
	"math"
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
	if !p.is(")") {
		for {
			name, err := p.varName()
			if err != nil {
				return nil, err
			}
			if seen[name.text] {
				return nil, p.errAt(name, "parameter %s declared twice", name.text)
			}
			seen[name.text] = true
			if _, err := p.expect(":"); err != nil {
				return nil, err
			}
			typ, err := p.typ()
			if err != nil {
				return nil, err
			}
			params = append(params, param{name, typ})
			if !p.is(",") {
				break
			}
			p.next()
		}
	}
	if err := p.closeList(")"); err != nil {
		return nil, err
	}
	if _, err := p.expect("=>"); err != nil {
		return nil, err
	}
	body, err := p.top()
	if err != nil {
		return nil, err
	}
	if err := p.end(); err != nil {
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

// Parse parses a term whose free variables are typed by env (a variable that is neither in
// env nor bound in the term is an error). A result tuple is allowed as the whole term.
func Parse(src string, env map[string]Type) (Term, error) {
	p, err := newParser(src)
	if err != nil {
		return nil, err
	}
	body, err := p.top()
	if err != nil {
		return nil, err
	}
	if err := p.end(); err != nil {
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

// ---- parser ----

type parser struct {
	toks   []token
	pos    int
	depth  int
	shares map[int]*syn
}

func newParser(src string) (*parser, error) {
	toks, err := lex(src)
	if err != nil {
		return nil, err
	}
	return &parser{toks: toks, shares: map[int]*syn{}}, nil
}

func (p *parser) peek() token { return p.toks[p.pos] }

func (p *parser) next() token {
	t := p.toks[p.pos]
	if t.kind != tokEOF {
		p.pos++
	}
	return t
}

// is reports whether the next token is the symbol or keyword s.
func (p *parser) is(s string) bool {
	t := p.peek()
	return (t.kind == tokSym || t.kind == tokIdent) && t.text == s
}

func (p *parser) errAt(t token, format string, args ...interface{}) error {
	return errors.Errorf("core: parse: line %d:%d: "+format, append([]interface{}{t.line, t.col}, args...)...)
}

func (p *parser) errExpected(what string) error {
	t := p.peek()
	return p.errAt(t, "expected %s, found %s", what, t.describe())
}

func (p *parser) expect(s string) (token, error) {
	if !p.is(s) {
		return token{}, p.errExpected(strconv.Quote(s))
	}
	return p.next(), nil
}

// closeList expects the closing symbol of a comma-separated list.
func (p *parser) closeList(close string) error {
	if !p.is(close) {
		return p.errExpected(strconv.Quote(",") + " or " + strconv.Quote(close))
	}
	p.next()
	return nil
}

func (p *parser) end() error {
	if p.peek().kind != tokEOF {
		return p.errExpected("an infix operator or end of input")
	}
	return nil
}

func (p *parser) enter() error {
	p.depth++
	if p.depth > maxParseDepth {
		return p.errAt(p.peek(), "terms nested deeper than %d levels", maxParseDepth)
	}
	return nil
}

func (p *parser) leave() { p.depth-- }

func (p *parser) varName() (token, error) {
	t := p.peek()
	if t.kind != tokIdent || IsKeyword(t.text) {
		return token{}, p.errExpected("variable name")
	}
	return p.next(), nil
}

// integer reads a non-negative integer that fits an int (sizes, IDs, dimensions).
func (p *parser) integer() (int, error) {
	t := p.peek()
	if t.kind != tokInt {
		return 0, p.errExpected("non-negative integer")
	}
	v, err := strconv.Atoi(t.text)
	if err != nil {
		return 0, p.errAt(t, "integer %s out of range", t.text)
	}
	p.next()
	return v, nil
}

// ints reads [k1, k2, …] (possibly empty).
func (p *parser) ints() ([]int, error) {
	if _, err := p.expect("["); err != nil {
		return nil, err
	}
	xs := []int{}
	if p.is("]") {
		p.next()
		return xs, nil
	}
	for {
		k, err := p.integer()
		if err != nil {
			return nil, err
		}
		xs = append(xs, k)
		if !p.is(",") {
			break
		}
		p.next()
	}
	if err := p.closeList("]"); err != nil {
		return nil, err
	}
	return xs, nil
}

// shape reads a shape [k1, …] whose element count fits an int.
func (p *parser) shape() (Shape, error) {
	at := p.peek()
	xs, err := p.ints()
	if err != nil {
		return nil, err
	}
	if tooLarge(xs) {
		return nil, p.errAt(at, "shape %v has too many elements", xs)
	}
	return Shape(xs), nil
}

// tooLarge reports whether an array of shape sh would have more than 2^62 elements (so that
// element counts and byte sizes computed from it cannot overflow).
func tooLarge(sh []int) bool {
	n := int64(1)
	for _, k := range sh {
		if k != 0 && n > (1<<62)/int64(k) {
			return true
		}
		n *= int64(k)
	}
	return false
}

func (p *parser) dtype() (Dtype, error) {
	t := p.peek()
	if t.kind == tokIdent {
		if d, ok := ParseDtype(t.text); ok {
			p.next()
			return d, nil
		}
	}
	return InvalidDtype, p.errExpected("dtype (f64, f32, i64 or bool)")
}

func (p *parser) typ() (Type, error) {
	sh, err := p.shape()
	if err != nil {
		return Type{}, err
	}
	d, err := p.dtype()
	if err != nil {
		return Type{}, err
	}
	return Type{sh, d}, nil
}

// top parses a program body or a Parse term: a term, or a result tuple, possibly under lets.
func (p *parser) top() (*syn, error) {
	if p.is("let") {
		return p.letChain(true)
	}
	if p.tupleAhead() {
		return p.tuple()
	}
	return p.expr()
}

// tupleAhead reports whether the input from here is exactly a tuple: "(" … ")" with a comma
// at its outer level (or nothing inside), followed by the end of the input.
func (p *parser) tupleAhead() bool {
	if !p.is("(") {
		return false
	}
	depth, comma := 0, false
	for j := p.pos; j < len(p.toks); j++ {
		t := p.toks[j]
		if t.kind == tokEOF {
			return false
		}
		if t.kind != tokSym {
			continue
		}
		switch t.text {
		case "(", "[":
			depth++
		case ")", "]":
			depth--
			if depth == 0 {
				return (comma || j == p.pos+1) && p.toks[j+1].kind == tokEOF
			}
		case ",":
			if depth == 1 {
				comma = true
			}
		}
	}
	return false
}

func (p *parser) tuple() (*syn, error) {
	at, err := p.expect("(")
	if err != nil {
		return nil, err
	}
	s := &syn{kind: synTuple, at: at}
	for !p.is(")") {
		e, err := p.expr()
		if err != nil {
			return nil, err
		}
		s.kids = append(s.kids, e)
		if !p.is(",") {
			break
		}
		p.next()
	}
	if err := p.closeList(")"); err != nil {
		return nil, err
	}
	return s, nil
}

// expr parses a term at the loosest precedence (let, or an infix expression).
func (p *parser) expr() (*syn, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.leave()
	if p.is("let") {
		return p.letChain(false)
	}
	return p.infix(precOr)
}

// letChain parses let x1 = u1 in let x2 = u2 in … body iteratively (long let chains are
// common in generated programs). At the top level the body may be a tuple.
func (p *parser) letChain(top bool) (*syn, error) {
	var lets []*syn
	for p.is("let") {
		lt := p.next()
		name, err := p.varName()
		if err != nil {
			return nil, err
		}
		if _, err := p.expect("="); err != nil {
			return nil, err
		}
		bound, err := p.expr()
		if err != nil {
			return nil, err
		}
		if _, err := p.expect("in"); err != nil {
			return nil, err
		}
		lets = append(lets, &syn{kind: synLet, at: lt, name: name.text, kids: []*syn{bound, nil}})
	}
	var body *syn
	var err error
	if top && p.tupleAhead() {
		body, err = p.tuple()
	} else {
		body, err = p.infix(precOr)
	}
	if err != nil {
		return nil, err
	}
	for i := len(lets) - 1; i >= 0; i-- {
		lets[i].kids[1] = body
		body = lets[i]
	}
	return body, nil
}

// infixOp returns the infix operation of precedence level spelled by t.
func infixOp(t token, level int) (BinOp, bool) {
	if t.kind != tokSym {
		return 0, false
	}
	op, ok := ParseBinOp(t.text)
	if !ok || !op.IsInfix() || binPrec(op) != level {
		return 0, false
	}
	return op, true
}

// infix parses the operators of precedence level and tighter: || and && and + - * / are
// left-associative, comparisons do not associate.
func (p *parser) infix(level int) (*syn, error) {
	if level > precMul {
		return p.prefix()
	}
	x, err := p.infix(level + 1)
	if err != nil {
		return nil, err
	}
	for {
		t := p.peek()
		op, ok := infixOp(t, level)
		if !ok {
			return x, nil
		}
		p.next()
		y, err := p.infix(level + 1)
		if err != nil {
			return nil, err
		}
		x = &syn{kind: synBinary, at: t, binop: op, kids: []*syn{x, y}}
		if level == precCmp {
			if _, ok := infixOp(p.peek(), level); ok {
				return nil, p.errExpected("the end of the comparison (comparisons do not associate; use parentheses)")
			}
			return x, nil
		}
	}
}

func (p *parser) isNumberAhead() bool {
	t := p.peek()
	return t.kind == tokInt || t.kind == tokFloat || (t.kind == tokIdent && (t.text == "inf" || t.text == "nan"))
}

// prefix parses unary minus (a negative literal when applied directly to a number) and an
// application followed by any number of postfix indexings t ! [e1, …].
func (p *parser) prefix() (*syn, error) {
	if p.is("-") {
		if err := p.enter(); err != nil {
			return nil, err
		}
		defer p.leave()
		mt := p.next()
		if p.isNumberAhead() {
			lit, err := p.number(mt, true)
			if err != nil {
				return nil, err
			}
			return p.postfix(lit)
		}
		x, err := p.prefix()
		if err != nil {
			return nil, err
		}
		return &syn{kind: synUnary, at: mt, unop: OpNeg, kids: []*syn{x}}, nil
	}
	x, err := p.app()
	if err != nil {
		return nil, err
	}
	return p.postfix(x)
}

func (p *parser) postfix(x *syn) (*syn, error) {
	for p.is("!") {
		bt := p.next()
		ix, err := p.termList()
		if err != nil {
			return nil, err
		}
		x = &syn{kind: synIndex, at: bt, kids: append([]*syn{x}, ix...)}
	}
	return x, nil
}

// termList parses [e1, …, en] (possibly empty).
func (p *parser) termList() ([]*syn, error) {
	if _, err := p.expect("["); err != nil {
		return nil, err
	}
	xs := []*syn{}
	if p.is("]") {
		p.next()
		return xs, nil
	}
	for {
		e, err := p.expr()
		if err != nil {
			return nil, err
		}
		xs = append(xs, e)
		if !p.is(",") {
			break
		}
		p.next()
	}
	if err := p.closeList("]"); err != nil {
		return nil, err
	}
	return xs, nil
}

// number parses a numeric literal token (or inf, nan); at is the position to report (the
// minus sign of a negative literal).
func (p *parser) number(at token, neg bool) (*syn, error) {
	t := p.next()
	if t.kind == tokInt {
		v, err := parseInt64(t.text, neg)
		if err != nil {
			return nil, p.errAt(t, "integer literal %s out of the i64 range", signed(t.text, neg))
		}
		return &syn{kind: synInt, at: at, ival: v}, nil
	}
	// Check the range now (as f64) so that the error has the literal's position.
	if _, err := parseFloat(t.text, neg, 64); err != nil {
		return nil, p.errAt(t, "floating literal %s out of range", signed(t.text, neg))
	}
	s := &syn{kind: synFloat, at: at, neg: neg}
	s.at.text = t.text
	return s, nil
}

func signed(text string, neg bool) string {
	if neg {
		return "-" + text
	}
	return text
}

func parseInt64(text string, neg bool) (int64, error) {
	u, err := strconv.ParseUint(text, 10, 64)
	if err != nil {
		return 0, err
	}
	if neg {
		if u > 1<<63 {
			return 0, errors.New("out of range")
		}
		return -int64(u-1) - 1, nil
	}
	if u > math.MaxInt64 {
		return 0, errors.New("out of range")
	}
	return int64(u), nil
}

// parseFloat converts a floating literal (digits, inf or nan) for a dtype of the given bit size.
func parseFloat(text string, neg bool, bits int) (float64, error) {
	var v float64
	switch text {
	case "inf":
		v = math.Inf(1)
	case "nan":
		v = math.NaN()
	default:
		var err error
		v, err = strconv.ParseFloat(text, bits)
		if err != nil {
			return 0, err
		}
	}
	if neg {
		v = -v
	}
	return v, nil
}

// atom parses a variable, a literal, a parenthesised term or [t1, …] (fromVector).
func (p *parser) atom() (*syn, error) {
	t := p.peek()
	switch t.kind {
	case tokInt, tokFloat:
		return p.number(t, false)
	case tokIdent:
		switch t.text {
		case "true", "false":
			p.next()
			return &syn{kind: synBool, at: t, bval: t.text == "true"}, nil
		case "inf", "nan":
			return p.number(t, false)
		}
		if isOpWord(t.text) {
			return nil, p.errExpected("an atomic argument (parenthesise operations used as arguments)")
		}
		if IsKeyword(t.text) {
			return nil, p.errExpected("term")
		}
		p.next()
		return &syn{kind: synVar, at: t, name: t.text}, nil
	case tokSym:
		switch t.text {
		case "(":
			if err := p.enter(); err != nil {
				return nil, err
			}
			defer p.leave()
			p.next()
			x, err := p.expr()
			if err != nil {
				return nil, err
			}
			if p.is(",") {
				return nil, p.errExpected(`")" (a tuple may only be the whole result)`)
			}
			if _, err := p.expect(")"); err != nil {
				return nil, err
			}
			return x, nil
		case "[":
			if err := p.enter(); err != nil {
				return nil, err
			}
			defer p.leave()
			xs, err := p.termList()
			if err != nil {
				return nil, err
			}
			return &syn{kind: synFromVector, at: t, kids: xs}, nil
		}
	}
	return nil, p.errExpected("term")
}

// isOpWord reports whether s names an operation written in prefix form.
func isOpWord(s string) bool {
	if _, ok := ParseUnOp(s); ok {
		return true
	}
	if op, ok := ParseBinOp(s); ok && !op.IsInfix() {
		return true
	}
	switch s {
	case "cond", "cast", "index", "sumOuter", "argmaxOuter", "gather", "scatter", "replicate",
		"tr", "reshape", "build1", "build", "iota", "matmul", "share", "lit":
		return true
	}
	return false
}

// atoms parses n atomic arguments.
func (p *parser) atoms(n int) ([]*syn, error) {
	xs := make([]*syn, n)
	for i := range xs {
		x, err := p.atom()
		if err != nil {
			return nil, err
		}
		xs[i] = x
	}
	return xs, nil
}

// lambda parses (\i -> …) or (\[i, j] -> …) up to the arrow; it returns the position of the
// backslash and the binders.
func (p *parser) lambdaHead() (token, []token, error) {
	if _, err := p.expect("("); err != nil {
		return token{}, nil, err
	}
	bs, err := p.expect("\\")
	if err != nil {
		return token{}, nil, err
	}
	var vars []token
	if p.is("[") {
		p.next()
		if !p.is("]") {
			for {
				v, err := p.varName()
				if err != nil {
					return token{}, nil, err
				}
				vars = append(vars, v)
				if !p.is(",") {
					break
				}
				p.next()
			}
		}
		if err := p.closeList("]"); err != nil {
			return token{}, nil, err
		}
	} else {
		v, err := p.varName()
		if err != nil {
			return token{}, nil, err
		}
		vars = []token{v}
	}
	if _, err := p.expect("->"); err != nil {
		return token{}, nil, err
	}
	return bs, vars, nil
}

// app parses an operation applied to its arguments, or an atom.
func (p *parser) app() (*syn, error) {
	t := p.peek()
	if t.kind != tokIdent || !IsKeyword(t.text) {
		return p.atom()
	}
	if op, ok := ParseUnOp(t.text); ok {
		p.next()
		xs, err := p.atoms(1)
		if err != nil {
			return nil, err
		}
		return &syn{kind: synUnary, at: t, unop: op, kids: xs}, nil
	}
	if op, ok := ParseBinOp(t.text); ok && !op.IsInfix() {
		p.next()
		xs, err := p.atoms(2)
		if err != nil {
			return nil, err
		}
		return &syn{kind: synBinary, at: t, binop: op, kids: xs}, nil
	}
	one := func(kind synKind, n int) (*syn, error) {
		p.next()
		xs, err := p.atoms(n)
		if err != nil {
			return nil, err
		}
		return &syn{kind: kind, at: t, kids: xs}, nil
	}
	switch t.text {
	case "cond":
		return one(synCond, 3)
	case "sumOuter":
		return one(synSumOuter, 1)
	case "argmaxOuter":
		return one(synArgmax, 1)
	case "matmul":
		return one(synMatMul, 2)
	case "cast":
		p.next()
		d, err := p.dtype()
		if err != nil {
			return nil, err
		}
		xs, err := p.atoms(1)
		if err != nil {
			return nil, err
		}
		return &syn{kind: synCast, at: t, dtype: d, kids: xs}, nil
	case "index":
		p.next()
		x, err := p.atom()
		if err != nil {
			return nil, err
		}
		ix, err := p.termList()
		if err != nil {
			return nil, err
		}
		return &syn{kind: synIndex, at: t, kids: append([]*syn{x}, ix...)}, nil
	case "replicate":
		p.next()
		n, err := p.integer()
		if err != nil {
			return nil, err
		}
		xs, err := p.atoms(1)
		if err != nil {
			return nil, err
		}
		return &syn{kind: synReplicate, at: t, n: n, kids: xs}, nil
	case "iota":
		p.next()
		n, err := p.integer()
		if err != nil {
			return nil, err
		}
		return &syn{kind: synIota, at: t, n: n}, nil
	case "tr", "reshape":
		p.next()
		kind := synTr
		var sh []int
		var err error
		if t.text == "reshape" {
			kind = synReshape
			sh, err = p.shape()
		} else {
			sh, err = p.ints()
		}
		if err != nil {
			return nil, err
		}
		xs, err := p.atoms(1)
		if err != nil {
			return nil, err
		}
		return &syn{kind: kind, at: t, ints: sh, kids: xs}, nil
	case "gather", "scatter":
		p.next()
		kind := synGather
		if t.text == "scatter" {
			kind = synScatter
		}
		sh, err := p.shape()
		if err != nil {
			return nil, err
		}
		x, err := p.atom()
		if err != nil {
			return nil, err
		}
		if err := p.enter(); err != nil {
			return nil, err
		}
		defer p.leave()
		_, vars, err := p.lambdaHead()
		if err != nil {
			return nil, err
		}
		out, err := p.termList()
		if err != nil {
			return nil, err
		}
		if _, err := p.expect(")"); err != nil {
			return nil, err
		}
		return &syn{kind: kind, at: t, ints: sh, vars: vars, kids: append([]*syn{x}, out...)}, nil
	case "build1", "build":
		p.next()
		var sh []int
		var err error
		if t.text == "build1" {
			var n int
			n, err = p.integer()
			sh = []int{n}
		} else {
			sh, err = p.shape()
		}
		if err != nil {
			return nil, err
		}
		if err := p.enter(); err != nil {
			return nil, err
		}
		defer p.leave()
		bs, vars, err := p.lambdaHead()
		if err != nil {
			return nil, err
		}
		if len(vars) != len(sh) {
			return nil, p.errAt(bs, "%s: shape %v needs %d index variables, found %d", t.text, Shape(sh), len(sh), len(vars))
		}
		body, err := p.expr()
		if err != nil {
			return nil, err
		}
		if _, err := p.expect(")"); err != nil {
			return nil, err
		}
		if t.text == "build1" {
			return &syn{kind: synBuild1, at: t, n: sh[0], vars: vars, kids: []*syn{body}}, nil
		}
		return &syn{kind: synBuild, at: t, ints: sh, vars: vars, kids: []*syn{body}}, nil
	case "share":
		p.next()
		id, err := p.integer()
		if err != nil {
			return nil, err
		}
		if s, ok := p.shares[id]; ok {
			return s, nil
		}
		xs, err := p.atoms(1)
		if err != nil {
			return nil, err
		}
		s := &syn{kind: synShare, at: t, n: id, kids: xs}
		p.shares[id] = s
		return s, nil
	case "lit":
		p.next()
		return p.lit(t)
	}
	return p.atom()
}

// lit parses the rest of lit [sh] ρ [v1, …].
func (p *parser) lit(at token) (*syn, error) {
	typ, err := p.typ()
	if err != nil {
		return nil, err
	}
	if _, err := p.expect("["); err != nil {
		return nil, err
	}
	s := &syn{kind: synLit, at: at, typ: typ}
	bits := 64
	if typ.Dtype == Float32 {
		bits = 32
	}
	what := typ.Dtype.String() + " value"
	for !p.is("]") {
		switch typ.Dtype {
		case Bool:
			t := p.peek()
			if !p.is("true") && !p.is("false") {
				return nil, p.errExpected(what)
			}
			p.next()
			s.bvals = append(s.bvals, t.text == "true")
		default:
			neg := false
			if p.is("-") {
				p.next()
				neg = true
			}
			t := p.peek()
			switch {
			case t.kind == tokInt && typ.Dtype == Int64:
				v, err := parseInt64(t.text, neg)
				if err != nil {
					return nil, p.errAt(t, "integer literal %s out of the i64 range", signed(t.text, neg))
				}
				s.ivals = append(s.ivals, v)
			case typ.Dtype.IsFloat() && (t.kind == tokInt || t.kind == tokFloat || (t.kind == tokIdent && (t.text == "inf" || t.text == "nan"))):
				v, err := parseFloat(t.text, neg, bits)
				if err != nil {
					return nil, p.errAt(t, "floating literal %s out of the %v range", signed(t.text, neg), typ.Dtype)
				}
				s.fvals = append(s.fvals, v)
			default:
				return nil, p.errExpected(what)
			}
			p.next()
		}
		if !p.is(",") {
			break
		}
		p.next()
	}
	if err := p.closeList("]"); err != nil {
		return nil, err
	}
	return s, nil
}

// ---- elaboration ----

type elaborator struct {
	scope  map[string]*Var
	shares map[*syn]Term
}

func newElaborator() *elaborator {
	return &elaborator{scope: map[string]*Var{}, shares: map[*syn]Term{}}
}

// wrapAt prefixes a constructor's error with the position of the construct.
func wrapAt(t token, err error) error {
	return errors.Wrapf(err, "core: parse: line %d:%d", t.line, t.col)
}

// flexible reports whether the dtype of s is decided by its context: a floating literal, or
// an element-wise, stacking or reshaping construct over flexible operands only. A flexible
// subtree contains no variables and no shares, so the order in which it is elaborated
// relative to its siblings does not matter.
func flexible(s *syn) bool {
	if s.flex == 0 {
		s.flex = -1
		if flexibleNode(s) {
			s.flex = 1
		}
	}
	return s.flex > 0
}

func flexibleNode(s *syn) bool {
	switch s.kind {
	case synFloat:
		return true
	case synUnary:
		return s.unop != OpNot && flexible(s.kids[0])
	case synBinary:
		switch s.binop {
		case OpAdd, OpSub, OpMul, OpDiv, OpPow, OpMax, OpMin, OpAtan2:
			return flexible(s.kids[0]) && flexible(s.kids[1])
		}
	case synFromVector:
		for _, k := range s.kids {
			if !flexible(k) {
				return false
			}
		}
		return len(s.kids) > 0
	case synReplicate, synTr, synReshape:
		return flexible(s.kids[0])
	}
	return false
}

// bind puts variables in scope and returns a function restoring the previous scope.
func (e *elaborator) bind(vs []*Var) func() {
	type saved struct {
		old *Var
		had bool
	}
	olds := make([]saved, len(vs))
	for i, v := range vs {
		o, had := e.scope[v.Name]
		olds[i] = saved{o, had}
		e.scope[v.Name] = v
	}
	return func() {
		for i := len(vs) - 1; i >= 0; i-- {
			if olds[i].had {
				e.scope[vs[i].Name] = olds[i].old
			} else {
				delete(e.scope, vs[i].Name)
			}
		}
	}
}

func (e *elaborator) indexVars(ts []token) ([]*Var, error) {
	vs := make([]*Var, len(ts))
	for i, t := range ts {
		v, err := NewVar(t.text, Scalar(Int64))
		if err != nil {
			return nil, wrapAt(t, err)
		}
		vs[i] = v
	}
	return vs, nil
}

// pair elaborates two operands that must have one dtype, the flexible one last so that it
// takes the other's dtype.
func (e *elaborator) pair(a, b *syn, hint Dtype) (Term, Term, error) {
	if flexible(a) && !flexible(b) {
		y, err := e.term(b, hint)
		if err != nil {
			return nil, nil, err
		}
		x, err := e.term(a, y.Type().Dtype)
		if err != nil {
			return nil, nil, err
		}
		return x, y, nil
	}
	x, err := e.term(a, hint)
	if err != nil {
		return nil, nil, err
	}
	y, err := e.term(b, x.Type().Dtype)
	if err != nil {
		return nil, nil, err
	}
	return x, y, nil
}

// broadcast replicates the scalar x to shape sh.
func broadcast(x Term, sh Shape) (Term, error) {
	for i := len(sh) - 1; i >= 0; i-- {
		r, err := NewReplicate(sh[i], x)
		if err != nil {
			return nil, err
		}
		x = r
	}
	return x, nil
}

func (e *elaborator) terms(ss []*syn, hint Dtype) ([]Term, error) {
	ts := make([]Term, len(ss))
	for i, s := range ss {
		t, err := e.term(s, hint)
		if err != nil {
			return nil, err
		}
		ts[i] = t
	}
	return ts, nil
}

// term elaborates s; hint is the dtype the context needs (InvalidDtype when none), used by
// floating literals.
func (e *elaborator) term(s *syn, hint Dtype) (Term, error) {
	at := s.at
	// keep wraps a constructor result.
	keep := func(t Term, err error) (Term, error) {
		if err != nil {
			return nil, wrapAt(at, err)
		}
		if sh := t.Type().Shape; tooLarge(sh) {
			return nil, errors.Errorf("core: parse: line %d:%d: result shape %v has too many elements", at.line, at.col, sh)
		}
		return t, nil
	}
	switch s.kind {
	case synVar:
		v, ok := e.scope[s.name]
		if !ok {
			return nil, errors.Errorf("core: parse: line %d:%d: variable %s is not bound", at.line, at.col, s.name)
		}
		return v, nil
	case synInt:
		return ScalarI(s.ival), nil
	case synBool:
		return ScalarB(s.bval), nil
	case synFloat:
		d := Float64
		if hint == Float32 {
			d = Float32
		}
		bits := 64
		if d == Float32 {
			bits = 32
		}
		v, err := parseFloat(at.text, s.neg, bits)
		if err != nil {
			return nil, errors.Errorf("core: parse: line %d:%d: floating literal %s out of the %v range", at.line, at.col, signed(at.text, s.neg), d)
		}
		return ScalarF(d, v), nil
	case synLit:
		switch {
		case s.typ.Dtype.IsFloat():
			vals := s.fvals
			if vals == nil {
				vals = []float64{}
			}
			return keep(NewLitF(s.typ, vals))
		case s.typ.Dtype == Int64:
			vals := s.ivals
			if vals == nil {
				vals = []int64{}
			}
			return keep(NewLitI(s.typ.Shape, vals))
		default:
			vals := s.bvals
			if vals == nil {
				vals = []bool{}
			}
			return keep(NewLitB(s.typ.Shape, vals))
		}
	case synLet:
		return e.letChain(s, hint)
	case synShare:
		if t, ok := e.shares[s]; ok {
			return t, nil
		}
		body, err := e.term(s.kids[0], InvalidDtype)
		if err != nil {
			return nil, err
		}
		t, err := keep(NewShare(s.n, body))
		if err != nil {
			return nil, err
		}
		e.shares[s] = t
		return t, nil
	case synCond:
		c, err := e.term(s.kids[0], InvalidDtype)
		if err != nil {
			return nil, err
		}
		u, v, err := e.pair(s.kids[1], s.kids[2], hint)
		if err != nil {
			return nil, err
		}
		return keep(NewCond(c, u, v))
	case synUnary:
		x, err := e.term(s.kids[0], hint)
		if err != nil {
			return nil, err
		}
		return keep(NewUnary(s.unop, x))
	case synCast:
		x, err := e.term(s.kids[0], InvalidDtype)
		if err != nil {
			return nil, err
		}
		return keep(NewCast(s.dtype, x))
	case synBinary:
		h := hint
		if s.binop.IsComparison() || s.binop == OpAnd || s.binop == OpOr {
			h = InvalidDtype
		}
		x, y, err := e.pair(s.kids[0], s.kids[1], h)
		if err != nil {
			return nil, err
		}
		rx, ry := len(x.Type().Shape), len(y.Type().Shape)
		switch {
		case rx == 0 && ry > 0:
			x, err = broadcast(x, y.Type().Shape)
		case ry == 0 && rx > 0:
			y, err = broadcast(y, x.Type().Shape)
		}
		if err != nil {
			return nil, wrapAt(at, err)
		}
		return keep(NewBinary(s.binop, x, y))
	case synIndex:
		x, err := e.term(s.kids[0], hint)
		if err != nil {
			return nil, err
		}
		ix, err := e.terms(s.kids[1:], InvalidDtype)
		if err != nil {
			return nil, err
		}
		return keep(NewIndex(x, ix))
	case synSumOuter:
		x, err := e.term(s.kids[0], hint)
		if err != nil {
			return nil, err
		}
		return keep(NewSumOuter(x))
	case synArgmax:
		x, err := e.term(s.kids[0], InvalidDtype)
		if err != nil {
			return nil, err
		}
		return keep(NewArgmaxOuter(x))
	case synGather, synScatter:
		x, err := e.term(s.kids[0], hint)
		if err != nil {
			return nil, err
		}
		vs, err := e.indexVars(s.vars)
		if err != nil {
			return nil, err
		}
		restore := e.bind(vs)
		out, err := e.terms(s.kids[1:], InvalidDtype)
		restore()
		if err != nil {
			return nil, err
		}
		fn, err := NewIndexFn(vs, out)
		if err != nil {
			return nil, wrapAt(at, err)
		}
		if s.kind == synGather {
			return keep(NewGather(Shape(s.ints), x, fn))
		}
		return keep(NewScatter(Shape(s.ints), x, fn))
	case synFromVector:
		ts := make([]Term, len(s.kids))
		d := hint
		first := true
		for i, k := range s.kids {
			if flexible(k) {
				continue
			}
			t, err := e.term(k, d)
			if err != nil {
				return nil, err
			}
			if first {
				d, first = t.Type().Dtype, false
			}
			ts[i] = t
		}
		for i, k := range s.kids {
			if ts[i] != nil {
				continue
			}
			t, err := e.term(k, d)
			if err != nil {
				return nil, err
			}
			ts[i] = t
		}
		return keep(NewFromVector(ts))
	case synReplicate:
		x, err := e.term(s.kids[0], hint)
		if err != nil {
			return nil, err
		}
		return keep(NewReplicate(s.n, x))
	case synTr:
		x, err := e.term(s.kids[0], hint)
		if err != nil {
			return nil, err
		}
		return keep(NewTranspose(s.ints, x))
	case synReshape:
		x, err := e.term(s.kids[0], hint)
		if err != nil {
			return nil, err
		}
		return keep(NewReshape(Shape(s.ints), x))
	case synBuild1, synBuild:
		vs, err := e.indexVars(s.vars)
		if err != nil {
			return nil, err
		}
		restore := e.bind(vs)
		body, err := e.term(s.kids[0], hint)
		restore()
		if err != nil {
			return nil, err
		}
		sh := s.ints
		if s.kind == synBuild1 {
			sh = []int{s.n}
		}
		for k := len(sh) - 1; k >= 0; k-- {
			b, err := NewBuild1(sh[k], vs[k], body)
			if err != nil {
				return nil, wrapAt(at, err)
			}
			body = b
		}
		return body, nil
	case synIota:
		return keep(NewIota(s.n))
	case synMatMul:
		x, y, err := e.pair(s.kids[0], s.kids[1], hint)
		if err != nil {
			return nil, err
		}
		return keep(NewMatMul(x, y))
	case synTuple:
		ts, err := e.terms(s.kids, InvalidDtype)
		if err != nil {
			return nil, err
		}
		return keep(NewTuple(ts))
	}
	return nil, errors.Errorf("core: parse: line %d:%d: internal error: unknown syntax node %d", at.line, at.col, s.kind)
}

// letChain elaborates a chain of lets iteratively.
func (e *elaborator) letChain(s *syn, hint Dtype) (Term, error) {
	type frame struct {
		s       *syn
		v       *Var
		bound   Term
		restore func()
	}
	var frames []frame
	defer func() {
		for i := len(frames) - 1; i >= 0; i-- {
			frames[i].restore()
		}
	}()
	cur := s
	for cur.kind == synLet {
		b, err := e.term(cur.kids[0], InvalidDtype)
		if err != nil {
			return nil, err
		}
		if _, ok := b.(*Tuple); ok {
			return nil, errors.Errorf("core: parse: line %d:%d: let %s: the bound term is a tuple", cur.at.line, cur.at.col, cur.name)
		}
		v, err := NewVar(cur.name, b.Type())
		if err != nil {
			return nil, wrapAt(cur.at, err)
		}
		frames = append(frames, frame{s: cur, v: v, bound: b, restore: e.bind([]*Var{v})})
		cur = cur.kids[1]
	}
	body, err := e.term(cur, hint)
	if err != nil {
		return nil, err
	}
	for i := len(frames) - 1; i >= 0; i-- {
		f := frames[i]
		l, err := NewLet(f.v, f.bound, body)
		if err != nil {
			return nil, wrapAt(f.s.at, err)
		}
		body = l
	}
	return body, nil
}
