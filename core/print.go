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
		p := pr.open(precApp, prec)
		pr.w("share ")
		pr.w(strconv.Itoa(t.ID))
		if !pr.shared[t.ID] {
			pr.shared[t.ID] = true
			pr.w(" ")
			pr.term(t.Body, precAtom)
		}
		pr.close(p)
	case *Cond:
		p := pr.open(precApp, prec)
		pr.w("cond ")
		pr.term(t.C, precAtom)
		pr.w(" ")
		pr.term(t.Then, precAtom)
		pr.w(" ")
		pr.term(t.Else, precAtom)
		pr.close(p)
	case *Unary:
		p := pr.open(precApp, prec)
		pr.w(t.Op.String())
		pr.w(" ")
		pr.term(t.X, precAtom)
		pr.close(p)
	case *Cast:
		p := pr.open(precApp, prec)
		pr.w("cast ")
		pr.w(t.To.String())
		pr.w(" ")
		pr.term(t.X, precAtom)
		pr.close(p)
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
		p := pr.open(precApp, prec)
		pr.w(t.Op.String())
		pr.w(" ")
		pr.term(t.X, precAtom)
		pr.w(" ")
		pr.term(t.Y, precAtom)
		pr.close(p)
	case *Index:
		p := pr.open(precApp, prec)
		pr.w("index ")
		pr.term(t.X, precAtom)
		pr.w(" ")
		pr.indexList(t.Ix)
		pr.close(p)
	case *SumOuter:
		p := pr.open(precApp, prec)
		pr.w("sumOuter ")
		pr.term(t.X, precAtom)
		pr.close(p)
	case *ArgmaxOuter:
		p := pr.open(precApp, prec)
		pr.w("argmaxOuter ")
		pr.term(t.X, precAtom)
		pr.close(p)
	case *Gather:
		p := pr.open(precApp, prec)
		pr.w("gather ")
		pr.ints(t.Shape)
		pr.w(" ")
		pr.term(t.X, precAtom)
		pr.w(" (")
		pr.indexFn(t.Fn)
		pr.w(")")
		pr.close(p)
	case *Scatter:
		p := pr.open(precApp, prec)
		pr.w("scatter ")
		pr.ints(t.Shape)
		pr.w(" ")
		pr.term(t.X, precAtom)
		pr.w(" (")
		pr.indexFn(t.Fn)
		pr.w(")")
		pr.close(p)
	case *FromVector:
		pr.w("[")
		for i, e := range t.Elems {
			if i > 0 {
				pr.w(", ")
			}
			pr.term(e, precLet)
		}
		pr.w("]")
	case *Replicate:
		p := pr.open(precApp, prec)
		pr.w("replicate ")
		pr.w(strconv.Itoa(t.N))
		pr.w(" ")
		pr.term(t.X, precAtom)
		pr.close(p)
	case *Transpose:
		p := pr.open(precApp, prec)
		pr.w("tr ")
		pr.ints(t.Perm)
		pr.w(" ")
		pr.term(t.X, precAtom)
		pr.close(p)
	case *Reshape:
		p := pr.open(precApp, prec)
		pr.w("reshape ")
		pr.ints(t.Shape)
		pr.w(" ")
		pr.term(t.X, precAtom)
		pr.close(p)
	case *Build1:
		p := pr.open(precApp, prec)
		pr.w("build1 ")
		pr.w(strconv.Itoa(t.N))
		pr.w(" (\\")
		pr.varName(t.Var)
		pr.w(" -> ")
		pr.term(t.Body, precLet)
		pr.w(")")
		pr.close(p)
	case *Iota:
		p := pr.open(precApp, prec)
		pr.w("iota ")
		pr.w(strconv.Itoa(t.N))
		pr.close(p)
	case *MatMul:
		p := pr.open(precApp, prec)
		pr.w("matmul ")
		pr.term(t.X, precAtom)
		pr.w(" ")
		pr.term(t.Y, precAtom)
		pr.close(p)
	case *Tuple:
		pr.w("(")
		for i, e := range t.Elems {
			if i > 0 {
				pr.w(", ")
			}
			pr.term(e, precLet)
		}
		if len(t.Elems) == 1 {
			pr.w(",")
		}
		pr.w(")")
	default:
		pr.w("<unknown term>")
	}
}
