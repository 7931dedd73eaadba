package core_test

import (
	"math"
	"testing"

	"github.com/bulkad/bulkad/core"
)

// distinct counts the distinct terms reachable from t (by identity) for which keep is true.
func distinct(t core.Term, keep func(core.Term) bool) int {
	seen := map[core.Term]bool{}
	n := 0
	var walk func(core.Term)
	walk = func(t core.Term) {
		if t == nil || seen[t] {
			return
		}
		seen[t] = true
		if keep(t) {
			n++
		}
		for _, k := range core.Children(t) {
			walk(k)
		}
	}
	walk(t)
	return n
}

func isGather(t core.Term) bool { _, ok := t.(*core.Gather); return ok }
func isArgmax(t core.Term) bool { _, ok := t.(*core.ArgmaxOuter); return ok }
func isBinary(t core.Term) bool { _, ok := t.(*core.Binary); return ok }

// TestCSE: equal closed subterms, up to the names of index variables and with a use of a
// top-level let equal to its bound term, become one term and the program computes the same
// bits (core.Eval before and after); terms under a binder that
// refer to it stay apart; literals equal as numbers but not to the bit (−0 and +0) stay
// apart; CSE is idempotent; a program whose binders hide a top-level name is returned
// unchanged.
func TestCSE(t *testing.T) {
	cases := []struct {
		name, src                 string
		gathers, argmaxes, binary int // distinct terms of these constructs after CSE (-1: not checked)
		unchanged                 bool
	}{
		{"two copies of a gather and of an argmax",
			`fn (x : [4,6] f64) =>
			  (sumOuter (gather [6,4] x (\[i, j] -> [j, i])) + sumOuter (gather [6,4] x (\[i, j] -> [j, i])),
			   argmaxOuter (tr [1,0] x) + argmaxOuter (tr [1,0] x))`, 1, 1, -1, false},
		{"copies whose index variables have other names",
			`fn (x : [4,6] f64) => sumOuter (gather [6,4] x (\[i, j] -> [j, i])) + sumOuter (gather [6,4] x (\[a, b] -> [b, a]))`, 1, 0, 1, false},
		{"gathers with other index functions stay apart",
			`fn (x : [4,4] f64) => gather [4,4] x (\[i, j] -> [j, i]) + gather [4,4] x (\[i, j] -> [i, j])`, 2, 0, -1, false},
		{"equal index terms under the binders of different gathers stay apart",
			`fn (x : [5] f64) => gather [4] x (\[i] -> [i + 1]) * gather [4] (x * x) (\[i] -> [i + 1])`, 2, 0, -1, false},
		{"zero and negative zero",
			`fn (x : [6] f64) => (x + lit [6] f64 [1.0, 1.0, 2.0, 3.0, 4.0, 0.0], x + lit [6] f64 [1.0, 1.0, 2.0, 3.0, 4.0, -0.0])`, 0, 0, 2, false},
		{"lets",
			`fn (x : [3] f64) => let a = x * x in let b = x * x in (a + b, sumOuter (x * x))`, 0, 0, 2, false},
		// a use of a top-level let is of its bound term's class: r·r is x·x read through r
		{"a let's uses and its bound term inline",
			`fn (x : [3] f64) => let a = x * x in let r = x in (a + x * x, r * r + x * x)`, 0, 0, 2, false},
		{"a let of a view and the view inline",
			`fn (x : [2,3] f64) => let r = tr [1,0] x in (tr [1,0] x * tr [1,0] x, r * r)`, 0, 0, 1, false},
		{"a binder hiding a top-level name",
			`fn (x : [3] f64) => let a = x * x in (build1 3 (\a -> x * x), x * x + a)`, 0, 0, -1, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := core.ParseProgram(c.src)
			if err != nil {
				t.Fatal(err)
			}
			q, err := core.CSE(p)
			if err != nil {
				t.Fatal(err)
			}
			if c.unchanged && q != p {
				t.Fatal("the program changed")
			}
			for _, k := range []struct {
				what string
				want int
				is   func(core.Term) bool
			}{{"gathers", c.gathers, isGather}, {"argmaxes", c.argmaxes, isArgmax}, {"binary terms", c.binary, isBinary}} {
				if got := distinct(q.Body, k.is); k.want >= 0 && got != k.want {
					t.Errorf("%d distinct %s after CSE, want %d", got, k.what, k.want)
				}
			}
			if b, ok := q.Body.(*core.Binary); ok {
				gx, okx := b.X.(*core.Gather)
				gy, oky := b.Y.(*core.Gather)
				if okx && oky && gx != gy && gx.Fn.Out[0] == gy.Fn.Out[0] {
					t.Fatal("an index term under two binders became one term")
				}
			}
			r, err := core.CSE(q)
			if err != nil {
				t.Fatal(err)
			}
			if !core.ProgramEqual(r, q) {
				t.Fatal("CSE of CSE's result differs from it")
			}
			args := map[string]*core.Lit{}
			for _, v := range p.Params {
				vals := make([]float64, v.Type().Shape.Size())
				for i := range vals {
					vals[i] = float64((i*7)%11) - 5.5
				}
				vals[0], vals[len(vals)-1] = math.Copysign(0, -1), math.Copysign(0, -1)
				l, err := core.NewLitF(v.Type(), vals)
				if err != nil {
					t.Fatal(err)
				}
				args[v.Name] = l
			}
			want, err := core.EvalTuple(p, args)
			if err != nil {
				t.Fatal(err)
			}
			got, err := core.EvalTuple(q, args)
			if err != nil {
				t.Fatal(err)
			}
			for k := range want {
				for i := range want[k].F {
					if math.Float64bits(got[k].F[i]) != math.Float64bits(want[k].F[i]) {
						t.Fatalf("result %d element %d: %v, before CSE %v", k, i, got[k].F[i], want[k].F[i])
					}
				}
				for i := range want[k].I {
					if got[k].I[i] != want[k].I[i] {
						t.Fatalf("result %d element %d: %v, before CSE %v", k, i, got[k].I[i], want[k].I[i])
					}
				}
			}
		})
	}
}
