package kernel

import (
	"math"
	"math/rand"
	"testing"

	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/lower"
)

// TestConcatAxis: the ConcatAxis kernel computes lower.Concat (a sum of gathers, each 0
// outside its operand) bit for bit as core's evaluator does, −0 turned into +0 by the sum
// included, in every numeric dtype, along the first, a middle and the last axis, with empty
// operands and over a dirty output; split across goroutines it gives the serial bits.
func TestConcatAxis(t *testing.T) {
	cases := []struct {
		name   string
		shapes [][]int
		axis   int
	}{
		{"channels of NCHW maps", [][]int{{2, 3, 4, 4}, {2, 1, 4, 4}, {2, 5, 4, 4}}, 1},
		{"first axis", [][]int{{2, 3}, {4, 3}}, 0},
		{"last axis", [][]int{{3, 2}, {3, 7}, {3, 1}}, 1},
		{"an empty operand", [][]int{{2, 0, 3}, {2, 4, 3}, {2, 0, 3}, {2, 2, 3}}, 1},
		{"one element each", [][]int{{1}, {1}, {1}}, 0},
		{"32 operands (a dense block)", nOf(32, []int{2, 4, 3, 3}), 1},
	}
	rng := rand.New(rand.NewSource(5))
	for _, c := range cases {
		for _, d := range []core.Dtype{core.Float64, core.Float32, core.Int64} {
			lits := make([]core.Term, len(c.shapes))
			ins := make([]any, len(c.shapes))
			k := ConcatAxis{Outer: core.Shape(c.shapes[0][:c.axis]).Size(),
				Inner: core.Shape(c.shapes[0][c.axis+1:]).Size(), AddZero: d.IsFloat()}
			off := 0
			for i, sh := range c.shapes {
				l := clipLit(t, rng, core.Type{Shape: sh, Dtype: d})
				if d.IsFloat() && len(l.F) > 0 {
					l.F[0] = math.Copysign(0, -1)
				}
				lits[i], ins[i] = l, flatOf(l)
				k.Sizes, k.Offs = append(k.Sizes, sh[c.axis]), append(k.Offs, off)
				off += sh[c.axis]
			}
			term, err := lower.Concat(c.axis, lits...)
			if err != nil {
				t.Fatal(err)
			}
			ref, err := core.EvalTerm(term, nil)
			if err != nil {
				t.Fatalf("%s %v: core.Eval: %v", c.name, d, err)
			}
			want := flatOf(ref)
			if d.IsFloat() {
				// the reference's own −0 → +0 (the rule AddZero follows)
				for i, l := range lits {
					if f := l.(*core.Lit).F; len(f) > 0 && math.Signbit(at64(want, k.Offs[i]*k.Inner)) {
						t.Fatalf("%s %v: core's sum kept operand %d's −0", c.name, d, i)
					}
				}
			}
			got := dirty(zeroLike(ins[0]), SliceLen(want))
			if err := k.Run(got, ins); err != nil {
				t.Fatalf("%s %v: %v", c.name, d, err)
			}
			if err := sameAsLitFrom(got, want, 0); err != nil {
				t.Errorf("%s %v: %v", c.name, d, err)
			}
		}
	}
	t.Run("split", func(t *testing.T) {
		k := ConcatAxis{Outer: 4, Inner: 1 << 12, Sizes: []int{30, 1, 33}, Offs: []int{0, 30, 31}, AddZero: true}
		ins := make([]any, 3)
		for i, s := range k.Sizes {
			x := make([]float32, k.Outer*s*k.Inner)
			for j := range x {
				x[j] = float32(rng.NormFloat64())
			}
			x[0] = float32(math.Copysign(0, -1))
			ins[i] = x
		}
		checkSplit(t, "concat", func() any {
			out := make([]float32, k.Outer*64*k.Inner)
			if err := k.Run(out, ins); err != nil {
				t.Fatal(err)
			}
			return out
		})
	})
}

// at64 is element i of a float slice as a float64.
func at64(s any, i int) float64 {
	switch v := s.(type) {
	case []float64:
		return v[i]
	case []float32:
		return float64(v[i])
	}
	return 0
}

// nOf is n copies of shape sh.
func nOf(n int, sh []int) [][]int {
	out := make([][]int, n)
	for i := range out {
		out[i] = sh
	}
	return out
}

// TestConcatAxisErrors: geometry and type mismatches are errors naming the kernel and the
// sizes, not panics.
func TestConcatAxisErrors(t *testing.T) {
	k := ConcatAxis{Outer: 2, Inner: 3, Sizes: []int{1, 2}, Offs: []int{0, 1}}
	good := []any{make([]float64, 6), make([]float64, 12)}
	cases := []struct {
		name string
		k    ConcatAxis
		out  any
		ins  []any
	}{
		{"short output", k, make([]float64, 17), good},
		{"short input", k, make([]float64, 18), []any{make([]float64, 6), make([]float64, 11)}},
		{"missing input", k, make([]float64, 18), good[:1]},
		{"mixed dtypes", k, make([]float64, 18), []any{make([]float64, 6), make([]float32, 12)}},
		{"negative offset", ConcatAxis{Outer: 2, Inner: 3, Sizes: []int{1, 2}, Offs: []int{0, -1}}, make([]float64, 18), good},
		{"overlap and gap", ConcatAxis{Outer: 2, Inner: 3, Sizes: []int{2, 2, 1}, Offs: []int{0, 1, 4}}, make([]float64, 30),
			[]any{make([]float64, 12), make([]float64, 12), make([]float64, 6)}},
		{"sizes without offsets", ConcatAxis{Outer: 2, Inner: 3, Sizes: []int{1, 2}}, make([]float64, 18), good},
	}
	for _, c := range cases {
		if err := c.k.Run(c.out, c.ins); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
	if err := k.Run(make([]float64, 18), good); err != nil {
		t.Errorf("well-formed: %v", err)
	}
}
