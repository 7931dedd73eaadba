package core

import (
	"math"
	"strconv"
	"strings"
)

// Precedence levels of the text syntax, loosest first.
const (
	precLet  = iota // let, lambdas: extend as far right as possible
	precOr          // ||
	precAnd         // &&
	precCmp         // < <= > >= == != (non-associative)
	precAdd         // + - (left-associative)
	precMul         // * / (left-associative)
	precApp         // prefix operations applied to atoms: exp t, index t [..], …
	precAtom        // variables, literals, (t), [t1, …]
)

func binPrec(op BinOp) int {
	switch op {
	case OpOr:
		return precOr
	case OpAnd:
		return precAnd
	case OpLt, OpLe, OpGt, OpGe, OpEq, OpNe:
		return precCmp
	case OpAdd, OpSub:
		return precAdd
	case OpMul, OpDiv:
		return precMul
	}
	return precApp
}

type printer struct {
	b      strings.Builder
	shared map[int]bool // share IDs whose body was already printed
}

// String prints the program in the text syntax: fn (x : [3] f64, …) => body.
func (p *Program) String() string {
	pr := &printer{shared: map[int]bool{}}
	pr.b.WriteString("fn (")
	for i, v := range p.Params {
		if i > 0 {
			pr.b.WriteString(", ")
		}
		pr.b.WriteString(v.Name)
		pr.b.WriteString(" : ")
		pr.b.WriteString(v.Type().String())
	}
	pr.b.WriteString(") => ")
	pr.term(p.Body, precLet)
	return pr.b.String()
}

func termString(t Term) string {
	pr := &printer{shared: map[int]bool{}}
	pr.term(t, precLet)
	return pr.b.String()
}

func (t *Var) String() string         { return termString(t) }
func (t *Lit) String() string         { return termString(t) }
func (t *Let) String() string         { return termString(t) }
func (t *Share) String() string       { return termString(t) }
func (t *Cond) String() string        { return termString(t) }
func (t *Unary) String() string       { return termString(t) }
func (t *Cast) String() string        { return termString(t) }
func (t *Binary) String() string      { return termString(t) }
func (t *Index) String() string       { return termString(t) }
func (t *SumOuter) String() string    { return termString(t) }
func (t *ArgmaxOuter) String() string { return termString(t) }
func (t *Gather) String() string      { return termString(t) }
func (t *Scatter) String() string     { return termString(t) }
func (t *FromVector) String() string  { return termString(t) }
func (t *Replicate) String() string   { return termString(t) }
func (t *Transpose) String() string   { return termString(t) }
func (t *Reshape) String() string     { return termString(t) }
func (t *Build1) String() string      { return termString(t) }
func (t *Iota) String() string        { return termString(t) }
func (t *MatMul) String() string      { return termString(t) }
func (t *Tuple) String() string       { return termString(t) }

// String prints the index function: \[i, j] -> [e1, e2].
func (f *IndexFn) String() string {
	pr := &printer{shared: map[int]bool{}}
	pr.indexFn(f)
	return pr.b.String()
}

func (pr *printer) w(s string) { pr.b.WriteString(s) }

// open writes "(" and reports true when a construct of precedence need appears in a context
// that requires precedence prec or tighter.
func (pr *printer) open(need, prec int) bool {
	if need < prec {
		pr.w("(")
		return true
	}
	return false
}

func (pr *printer) close(p bool) {
	if p {
		pr.w(")")
	}
}

// FormatFloat prints a float so that it reads back as a floating literal: it always has a
// '.' or an exponent (1.0, 2.5e-07); infinities and NaN print as inf, -inf and nan.
func FormatFloat(v float64, d Dtype) string {
	switch {
	case math.IsNaN(v):
		return "nan"
	case math.IsInf(v, 1):
		return "inf"
	case math.IsInf(v, -1):
		return "-inf"
	}
	bits := 64
	if d == Float32 {
		bits = 32
	}
	s := strconv.FormatFloat(v, 'g', -1, bits)
	if !strings.ContainsAny(s, ".e") {
		s += ".0"
	}
	return s
}

// commaList prints terms separated by ", ".
func (pr *printer) commaList(ts []Term) {
	for i, e := range ts {
		if i > 0 {
			pr.w(", ")
		}
		pr.term(e, precLet)
	}
}

func (pr *printer) lit(t *Lit, prec int) {
	typ := t.Type()
	if typ.IsScalar() {
		switch typ.Dtype {
		case Float64:
			s := FormatFloat(t.F[0], Float64)
			p := pr.open(precAtom, prec)
			if strings.HasPrefix(s, "-") && !p {
				pr.w("(" + s + ")")
			} else {
				pr.w(s)
			}
			pr.close(p)
			return
		case Int64:
			if t.I[0] < 0 {
				pr.w("(" + strconv.FormatInt(t.I[0], 10) + ")")
			} else {
				pr.w(strconv.FormatInt(t.I[0], 10))
			}
			return
		case Bool:
			pr.w(strconv.FormatBool(t.B[0]))
			return
		}
	}
	p := pr.open(precApp, prec)
	pr.w("lit ")
	pr.w(typ.String())
	pr.w(" [")
	n := typ.Shape.Size()
	for i := 0; i < n; i++ {
		if i > 0 {
			pr.w(",")
		}
		switch typ.Dtype {
		case Float64, Float32:
			pr.w(FormatFloat(t.F[i], typ.Dtype))
		case Int64:
			pr.w(strconv.FormatInt(t.I[i], 10))
		case Bool:
			pr.w(strconv.FormatBool(t.B[i]))
		}
	}
	pr.w("]")
	pr.close(p)
}

func (pr *printer) indexList(ix []Term) {
	pr.w("[")
	for i, e := range ix {
		if i > 0 {
			pr.w(", ")
		}
		pr.term(e, precLet)
	}
	pr.w("]")
}

func (pr *printer) indexFn(f *IndexFn) {
	if f == nil {
		pr.w("<nil>")
		return
	}
	pr.w("\\[")
	for i, v := range f.Vars {
		if i > 0 {
			pr.w(", ")
		}
		pr.w(v.Name)
	}
	pr.w("] -> ")
	pr.indexList(f.Out)
}

func (pr *printer) varName(v *Var) {
	if v == nil {
		pr.w("<nil>")
		return
	}
	pr.w(v.Name)
}

func (pr *printer) ints(xs []int) {
	pr.w("[")
	for i, x := range xs {
		if i > 0 {
			pr.w(",")
		}
		pr.w(strconv.Itoa(x))
	}
	pr.w("]")
}

// app prints an application: the head word, then each argument after a space, in
// parentheses when the context needs them.
func (pr *printer) app(prec int, head string, args ...func()) {
	p := pr.open(precApp, prec)
	pr.w(head)
	for _, a := range args {
		pr.w(" ")
		a()
	}
	pr.close(p)
}

// atom, num, shape and fn are app's arguments: a term as an atom, an integer, a shape and a
// parenthesised index function.
func (pr *printer) atom(t Term) func() { return func() { pr.term(t, precAtom) } }
func (pr *printer) num(n int) func()   { return func() { pr.w(strconv.Itoa(n)) } }
func (pr *printer) shape(xs []int) func() {
	return func() { pr.ints(xs) }
}
func (pr *printer) fn(f *IndexFn) func() {
	return func() {
		pr.w("(")
		pr.indexFn(f)
		pr.w(")")
	}
}

// term prints t in a context that accepts precedence prec or tighter.
func (pr *printer) term(t Term, prec int) {
	switch t := t.(type) {
	case nil:
		pr.w("<nil>")
	case *Var:
		pr.w(t.Name)
	case *Lit:
		pr.lit(t, prec)
	case *Let:
		p := pr.open(precLet, prec)
		pr.w("let ")
		pr.varName(t.Var)
		pr.w(" = ")
		pr.term(t.Bound, precLet)
		pr.w(" in ")
		pr.term(t.Body, precLet)
		pr.close(p)
	case *Share:
		if pr.shared[t.ID] {
			pr.app(prec, "share", pr.num(t.ID))
			return
		}
		pr.shared[t.ID] = true
		pr.app(prec, "share", pr.num(t.ID), pr.atom(t.Body))
	case *Cond:
		pr.app(prec, "cond", pr.atom(t.C), pr.atom(t.Then), pr.atom(t.Else))
	case *Unary:
		pr.app(prec, t.Op.String(), pr.atom(t.X))
	case *Cast:
		pr.app(prec, "cast", func() { pr.w(t.To.String()) }, pr.atom(t.X))
	case *Binary:
		if t.Op.IsInfix() {
			bp := binPrec(t.Op)
			p := pr.open(bp, prec)
			left, right := bp, bp+1
			if bp == precCmp {
				left = bp + 1
			}
			pr.term(t.X, left)
			pr.w(" ")
			pr.w(t.Op.String())
			pr.w(" ")
			pr.term(t.Y, right)
			pr.close(p)
			return
		}
		pr.app(prec, t.Op.String(), pr.atom(t.X), pr.atom(t.Y))
	case *Index:
		pr.app(prec, "index", pr.atom(t.X), func() { pr.indexList(t.Ix) })
	case *SumOuter:
		pr.app(prec, "sumOuter", pr.atom(t.X))
	case *ArgmaxOuter:
		pr.app(prec, "argmaxOuter", pr.atom(t.X))
	case *Gather:
		pr.app(prec, "gather", pr.shape(t.Shape), pr.atom(t.X), pr.fn(t.Fn))
	case *Scatter:
		pr.app(prec, "scatter", pr.shape(t.Shape), pr.atom(t.X), pr.fn(t.Fn))
	case *FromVector:
		pr.w("[")
		pr.commaList(t.Elems)
		pr.w("]")
	case *Replicate:
		pr.app(prec, "replicate", pr.num(t.N), pr.atom(t.X))
	case *Transpose:
		pr.app(prec, "tr", pr.shape(t.Perm), pr.atom(t.X))
	case *Reshape:
		pr.app(prec, "reshape", pr.shape(t.Shape), pr.atom(t.X))
	case *Build1:
		pr.app(prec, "build1", pr.num(t.N), func() {
			pr.w("(\\")
			pr.varName(t.Var)
			pr.w(" -> ")
			pr.term(t.Body, precLet)
			pr.w(")")
		})
	case *Iota:
		pr.app(prec, "iota", pr.num(t.N))
	case *MatMul:
		pr.app(prec, "matmul", pr.atom(t.X), pr.atom(t.Y))
	case *Tuple:
		pr.w("(")
		pr.commaList(t.Elems)
		if len(t.Elems) == 1 {
			pr.w(",")
		}
		pr.w(")")
	default:
		pr.w("<unknown term>")
	}
}
