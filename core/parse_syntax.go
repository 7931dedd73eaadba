package core

import (
	"math"
	"strconv"

	"github.com/pkg/errors"
)

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

// after expects the symbol or keyword s, then parses what follows it with item.
func after[T any](p *parser, s string, item func() (T, error)) (T, error) {
	if _, err := p.expect(s); err != nil {
		var zero T
		return zero, err
	}
	return item()
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
func (p *parser) ints() ([]int, error) { return bracketList(p, p.integer) }

// bracketList reads [x1, …, xn] (possibly empty), each element with item.
func bracketList[T any](p *parser, item func() (T, error)) ([]T, error) {
	if _, err := p.expect("["); err != nil {
		return nil, err
	}
	xs := []T{}
	err := p.commaList("]", false, func() error {
		x, err := item()
		xs = append(xs, x)
		return err
	})
	if err != nil {
		return nil, err
	}
	return xs, nil
}

// commaList parses a comma-separated list of items (each with item) up to the symbol close,
// and close itself; the list may be empty and, with trailing, end with a comma.
func (p *parser) commaList(close string, trailing bool, item func() error) error {
	if !p.is(close) {
		for {
			if err := item(); err != nil {
				return err
			}
			if !p.is(",") {
				break
			}
			p.next()
			if trailing && p.is(close) {
				break
			}
		}
	}
	return p.closeList(close)
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

// unaddressable reports whether an array of type t would need more bytes than any Go
// program can allocate (MaxAddressableBytes).
func unaddressable(t Type) bool { return TypeBytes(t) > MaxAddressableBytes }

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
	at := p.peek()
	sh, err := p.shape()
	if err != nil {
		return Type{}, err
	}
	d, err := p.dtype()
	if err != nil {
		return Type{}, err
	}
	t := Type{sh, d}
	if unaddressable(t) {
		return Type{}, p.errAt(at, "type %v needs %s, more than can be addressed (%s)", t, FormatBytes(TypeBytes(t)), FormatBytes(MaxAddressableBytes))
	}
	return t, nil
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
	err = p.commaList(")", true, func() error {
		e, err := p.expr()
		s.kids = append(s.kids, e)
		return err
	})
	if err != nil {
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
		bound, err := after(p, "=", p.expr)
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
		var err error
		if x, err = p.indexing(p.next(), x); err != nil {
			return nil, err
		}
	}
	return x, nil
}

// indexing parses the index list [e1, …] of an indexing of x at position at (index x […] or
// x ! […]).
func (p *parser) indexing(at token, x *syn) (*syn, error) {
	ix, err := p.termList()
	if err != nil {
		return nil, err
	}
	return &syn{kind: synIndex, at: at, kids: append([]*syn{x}, ix...)}, nil
}

// termList parses [e1, …, en] (possibly empty).
func (p *parser) termList() ([]*syn, error) { return bracketList(p, p.expr) }

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
