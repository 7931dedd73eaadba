package core_test

import (
	"math"
	"testing"

	"github.com/bulkad/bulkad/core"
)

// distinct counts the distinct terms reachable from t (by identity).
func distinct(t core.Term) int {
	seen := map[core.Term]bool{}
	var walk func(core.Term)
	walk = func(t core.Term) {
		if t == nil || seen[t] {
			return
		}
		seen[t] = true
		for _, k := range core.Children(t) {
			walk(k)
		}
	}
	walk(t)
	return len(seen)
}

// TestCSE: structurally equal closed subterms become one term and the program computes the
// same bits (core.Eval before and after); terms under a binder that refer to it stay apart;
// literals equal as numbers but not to the bit (−0 and +0, NaN payloads) stay apart; a
// program whose binders hide a top-level name, or with a top-level name bound twice, is
// returned unchanged.
func TestCSE(t *testing.T) {
	cases := []struct {
		name, src string
		shrinks   bool // fewer distinct terms after CSE
		unchanged bool // CSE returns the program itself
	}{
		{"two copies of a gather and its argmax",
			`fn (x : [4,6] f64) =>
			  (sumOuter (gather [6,4] x (\[i, j] -> [j, i])) + sumOuter (gather [6,4] x (\[i, j] -> [j, i])),
			   argmaxOuter (tr [1,0] x) + argmaxOuter (tr [1,0] x))`, true, false},
		{"copies whose binders have other names stay apart (not alpha-equal)",
			`fn (x : [4,6] f64) => sumOuter (gather [6,4] x (\[i, j] -> [j, i])) + sumOuter (gather [6,4] x (\[a, b] -> [b, a]))`, false, false},
		// the literal 1 is shared, the index terms i + 1 are not (checked below)
		{"equal index terms under different binders",
			`fn (x : [5] f64) => gather [4] x (\[i] -> [i + 1]) * gather [4] (x * x) (\[i] -> [i + 1])`, true, false},
		{"zero and negative zero",
			`fn (x : [6] f64) => (x + lit [6] f64 [1.0, 1.0, 2.0, 3.0, 4.0, 0.0], x + lit [6] f64 [1.0, 1.0, 2.0, 3.0, 4.0, -0.0])`, false, false},
		{"lets",
			`fn (x : [3] f64) => let a = x * x in let b = x * x in (a + b, sumOuter (x * x))`, true, false},
		{"a binder hiding a top-level name",
			`fn (x : [3] f64) => let a = x * x in (build1 3 (\a -> x * x), x * x + a)`, false, true},
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
			before, after := distinct(p.Body), distinct(q.Body)
			if c.shrinks != (after < before) {
				t.Fatalf("%d distinct terms before, %d after (shrinks %v wanted)", before, after, c.shrinks)
			}
			if b, ok := q.Body.(*core.Binary); ok {
				gx, okx := b.X.(*core.Gather)
				gy, oky := b.Y.(*core.Gather)
				if okx && oky && gx != gy && gx.Fn.Out[0] == gy.Fn.Out[0] {
					t.Fatal("an index term under two binders became one term")
				}
			}
			if !core.ProgramEqual(p, q) {
				t.Fatal("not structurally equal to the input")
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
