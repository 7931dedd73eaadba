package core_test

import (
	"math"
	"math/rand"
	"testing"

	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/core/coretest"
	"github.com/bulkad/bulkad/core/tensors"
	"gorgonia.org/tensor"
)

// Per-rule tests of the simplifier (simplify_rules.go, simplify_inline.go). Every case gives
// an input term and the expected result of Simplify written by hand from the rule's
// definition (and from the other rules that the fixed point applies afterwards, noted in the
// comments); the result is compared structurally with core.Equal, and the values of input
// and output are compared with core.EvalTerm on random inputs.

type simpCase struct {
	rule string
	in   string
	want string // "" means: unchanged (the rule must not fire)
	opts []core.SimplifyOption
}

func runSimpCases(t *testing.T, cases []simpCase) {
	t.Helper()
	runSimpCasesN(t, cases, 12)
}

// runSimpCasesN compares values on trials environments (the first 8 finite); cases with
// AssumeFinite use 8.
func runSimpCasesN(t *testing.T, cases []simpCase, trials int) {
	t.Helper()
	for n, c := range cases {
		t.Run(c.rule, func(t *testing.T) {
			in := coretest.ParseRule(t, c.in)
			want := in
			if c.want != "" {
				want = coretest.ParseRule(t, c.want)
			}
			got, err := core.SimplifyTerm(in, c.opts...)
			if err != nil {
				t.Fatalf("SimplifyTerm(%v): %v", in, err)
			}
			if !core.Equal(got, want) {
				t.Fatalf("SimplifyTerm(%v)\n got  %v\n want %v", in, got, want)
			}
			coretest.SameRuleValues(t, int64(n), in, got, trials)
		})
	}
}

func TestSimplifyGatherRules(t *testing.T) {
	runSimpCases(t, []simpCase{
		// gather sh x (\js -> js), sh = shape x → x
		{"identity", `gather [2,3] m (\[i,l] -> [i, l])`, `m`, nil},
		{"identity prefix", `gather [2,3] m (\[i] -> [i])`, `m`, nil},
		// the domain is smaller than x: not the identity
		{"identity smaller domain", `gather [1,3] m (\[i] -> [i])`, "", nil},
		{"identity larger domain", `gather [5] a (\[i] -> [i])`, "", nil},
		// permutation: result[i,l] = m[l,i] = (tr [1,0] m)[i,l]
		{"permutation 2", `gather [3,2] m (\[i,l] -> [l, i])`, `tr [1,0] m`, nil},
		// result[i,l,r] = t3[l,r,i]: result dim 0 = t3 dim 2, dim 1 = dim 0, dim 2 = dim 1
		{"permutation 3", `gather [4,2,3] t3 (\[i,l,r] -> [l, r, i])`, `tr [2,0,1] t3`, nil},
		// a permutation that does not read all of x is no tr
		{"permutation partial", `gather [2,2] m (\[i,l] -> [l, i])`, "", nil},
		// no outputs: every element is x → replicate per domain dimension
		{"no outputs", `gather [2,5,4] a (\[i,l] -> [])`, `replicate 2 (replicate 5 a)`, nil},
		// gather of gather: a[3 - (l + 1)], inner domain check 0 ≤ l+1 < 4 provable (l < 3)
		{"gather of gather", `gather [3] (gather [4] a (\[i] -> [3 - i])) (\[l] -> [l + 1])`,
			`gather [3] a (\[l] -> [3 - (l + 1)])`, nil},
		// l + 1 may be 4: guard l + 1 < 4 on the composed output (lower bound provable)
		{"gather of gather guarded", `gather [4] (gather [4] a (\[i] -> [3 - i])) (\[l] -> [l + 1])`,
			`gather [4] a (\[l] -> [cond (l + 1 < 4) (3 - (l + 1)) (-1)])`, nil},
		// outer reads fewer components than the inner domain: the inner variable stays
		{"gather of gather partial", `gather [2,4] (gather [3,4] q (\[i,r] -> [2 - i, r])) (\[l] -> [rem (l + 1) 3])`,
			`gather [2,4] q (\[l,r] -> [2 - rem (l + 1) 3, r])`, nil},
		// the inner variable r that stays bound must not capture the build variable r in the
		// substituted outer output: it is renamed (j_0, the Namer's first fresh j)
		{"gather of gather capture", `build1 3 (\r -> gather [2,4] (gather [3,4] q (\[i,r] -> [2 - i, r])) (\[l] -> [rem r 3]))`,
			`build1 3 (\r -> gather [2,4] q (\[l, j_0] -> [2 - rem r 3, j_0]))`, nil},
		// same names without capture: nothing renamed
		{"gather of gather no capture", `build1 3 (\l -> gather [2,4] (gather [3,4] q (\[i,r] -> [2 - i, r])) (\[l] -> [rem l 3]))`,
			`build1 3 (\l -> gather [2,4] q (\[l, r] -> [2 - rem l 3, r]))`, nil},
		// gather of replicate: the first output addresses the replicated dimension (4 < 5)
		{"gather of replicate", `gather [2,3] (replicate 5 m) (\[i] -> [4, 1 - i])`,
			`gather [2,3] m (\[i] -> [1 - i])`, nil},
		{"gather of replicate guarded", `gather [2,3] (replicate 5 m) (\[i] -> [k, 1 - i])`,
			`gather [2,3] m (\[i] -> [cond (0 <= k && k < 5) (1 - i) (-1)])`, nil},
		// no output left and no proof: no rewrite
		{"gather of replicate unprovable", `gather [2,4] (replicate 5 a) (\[i] -> [k])`, "", nil},
		// no output left, in bounds: gather [2,4] a (\[i] -> []) → replicate 2 a
		{"gather of replicate to replicate", `gather [2,4] (replicate 5 a) (\[i] -> [3])`, `replicate 2 a`, nil},
		// gather of tr: (tr [1,0] m)[i, 1] = m[1, i]
		{"gather of transpose", `gather [3] (tr [1,0] m) (\[i] -> [i, 1])`, `gather [3] m (\[i] -> [1, i])`, nil},
	})
}

func TestSimplifyIndexRules(t *testing.T) {
	runSimpCases(t, []simpCase{
		{"index of index", `index (index t3 [1]) [2]`, `index t3 [1, 2]`, nil},
		{"index of index free", `index (index t3 [k]) [j, 1]`, `index t3 [k, j, 1]`, nil},
		{"index of iota literal", `index (iota 5) [3]`, `3`, nil},
		// k may be out of bounds (iota reads 0 there): no rewrite
		{"index of iota unprovable", `index (iota 5) [k]`, "", nil},
		// inside an index function the variable's range [0,4] is known
		{"index of iota in gather", `gather [5] a (\[i] -> [index (iota 5) [i]])`, `gather [5] a (\[i] -> [i])`, nil},
		{"index of replicate", `index (replicate 3 a) [2, k]`, `index a [k]`, nil},
		{"index of replicate unprovable", `index (replicate 3 a) [k]`, "", nil},
		{"index of literal", `index (lit [2,2] f64 [1,2,3,4]) [1]`, `lit [2] f64 [3,4]`, nil},
		{"index of literal full", `index (lit [2,2] f64 [1,2,3,4]) [1, 0]`, `3.0`, nil},
		{"index of literal out of bounds", `index (lit [3] i64 [5,6,7]) [3]`, `0`, nil},
		// index of gather at a literal: a[3 - 2], then constant folding → a[1]
		{"index of gather", `index (gather [3] a (\[i] -> [3 - i])) [2]`, `index a [1]`, nil},
		// at a free k: the gather's domain check becomes a guard
		{"index of gather guarded", `index (gather [3] a (\[i] -> [3 - i])) [k]`,
			`index a [cond (0 <= k && k < 3) (3 - k) (-1)]`, nil},
		// fewer index components than the domain: a smaller gather, 1 + 1 folded
		// the index r is free in the kept function's scope: the gather variable r is renamed;
		// r ranges over [0,2] (build) and [0,3] (gather variable r): the hull needs r < 3
		{"index of gather capture", `build1 3 (\r -> index (gather [3,4] q (\[i,r] -> [2 - i, r])) [r])`,
			`build1 3 (\r -> gather [4] q (\[j_0] -> [cond (r < 3) (2 - r) (-1), j_0]))`, nil},
		{"index of gather partial", `index (gather [2,3] q (\[i,l] -> [l, i + 1])) [1]`,
			`gather [3] q (\[l] -> [l, 2])`, nil},
	})
	// index t [] → t (the parser has no syntax for an empty index)
	a := coretest.ParseRule(t, `a`)
	in, err := core.NewIndex(a, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := core.SimplifyTerm(in)
	if err != nil || got != a {
		t.Fatalf("index a [] → %v, %v; want a", got, err)
	}
}

func TestSimplifyShapeRules(t *testing.T) {
	runSimpCases(t, []simpCase{
		{"identity tr", `tr [0,1] m`, `m`, nil},
		// tr [1,0] (tr [1,0] m) = tr [0,1] m = m
		{"tr of tr to identity", `tr [1,0] (tr [1,0] m)`, `m`, nil},
		// inner dims (d1,d2,d0), outer swaps the first two: (d2,d1,d0)
		{"tr of tr", `tr [1,0] (tr [1,2,0] t3)`, `tr [2,1,0] t3`, nil},
		// inner (d0,d2,d1), outer (d2,d0,d1)
		{"tr of tr shorter", `tr [1,0] (tr [0,2,1] t3)`, `tr [2,0,1] t3`, nil},
		{"identity reshape", `reshape [2,3] m`, `m`, nil},
		{"reshape of reshape", `reshape [6] (reshape [3,2] m)`, `reshape [6] m`, nil},
		{"reshape of reshape to identity", `reshape [2,3] (reshape [6] m)`, `m`, nil},
		{"reshape not identity", `reshape [3,2] m`, "", nil},
	})
}

func TestSimplifySumRules(t *testing.T) {
	runSimpCases(t, []simpCase{
		// Σ over 3 copies of a = a * 3; the constant [4] f64 is a literal (≤ 4 elements)
		{"sumOuter replicate", `sumOuter (replicate 3 a)`, `a * lit [4] f64 [3,3,3,3]`, nil},
		// larger constants are replicated scalars (replicate 3 5.0 then becomes a literal)
		{"sumOuter replicate matrix", `sumOuter (replicate 5 m)`, `m * replicate 2 (lit [3] f64 [5,5,5])`, nil},
		{"sumOuter replicate scalar", `sumOuter (replicate 3 x)`, `x * 3.0`, nil},
		{"sumOuter replicate 1", `sumOuter (replicate 1 a)`, `a`, nil},
		{"sumOuter replicate 0", `sumOuter (replicate 0 a)`, `lit [4] f64 [0,0,0,0]`, nil},
		{"sumOuter replicate i64", `sumOuter (replicate 3 iv)`, `iv * lit [4] i64 [3,3,3,3]`, nil},
		// sumOuter of a constant literal: 2 · 1.5
		{"sumOuter constant", `sumOuter (lit [2,2] f64 [1.5,1.5,1.5,1.5])`, `lit [2] f64 [3,3]`, nil},
		{"sumOuter non-constant literal", `sumOuter (lit [2] f64 [1, 2])`, "", nil},
	})
}

func TestSimplifyArithmeticRules(t *testing.T) {
	runSimpCases(t, []simpCase{
		{"x + 0", `a + 0.0`, `a`, nil},
		{"0 + x", `0.0 + a`, `a`, nil},
		{"x - 0", `a - 0.0`, `a`, nil},
		{"x * 1", `a * 1.0`, `a`, nil},
		{"1 * x", `1.0 * a`, `a`, nil},
		{"x / 1", `a / 1.0`, `a`, nil},
		{"scalar x + 0", `x + 0.0`, `x`, nil},
		{"matrix x * 1", `m * 1.0`, `m`, nil},
		{"float32 x + 0", `ms + 0.0`, `ms`, nil},
		{"0 - x kept", `0.0 - x`, "", nil},
		{"x / 0 kept", `x / 0.0`, "", nil},
		// without AssumeFinite, 0 * x stays (0 * Inf and 0 * NaN are NaN)
		{"0 * x kept", `0.0 * x`, "", nil},
		{"x * 0 kept", `a * 0.0`, `a * lit [4] f64 [0,0,0,0]`, nil},
		// integers have no NaN: 0 * k → 0 always
		{"i64 0 * k", `0 * k`, `0`, nil},
		{"i64 k * 1", `k * 1`, `k`, nil},
		{"i64 k + 0", `k + 0`, `k`, nil},
		{"neg neg", `neg (neg a)`, `a`, nil},
		{"not not", `not (not c)`, `c`, nil},
	})
	// AssumeFinite: 0 * x → 0 (values compared on finite inputs only)
	runSimpCasesN(t, []simpCase{
		{"0 * x finite", `0.0 * x`, `0.0`, []core.SimplifyOption{core.AssumeFinite()}},
		{"x * 0 finite", `a * 0.0`, `lit [4] f64 [0,0,0,0]`, []core.SimplifyOption{core.AssumeFinite()}},
	}, 8)
	// NaN: 0 * x is kept without AssumeFinite, so x = NaN still gives NaN.
	in := coretest.ParseRule(t, `0.0 * x`)
	out, err := core.SimplifyTerm(in)
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]*tensor.Dense{"x": tensor.New(tensor.WithShape(), tensor.WithBacking([]float64{math.NaN()}))}
	r, err := tensors.EvalTerm(out, env)
	if err != nil {
		t.Fatal(err)
	}
	if v := r.Data().(float64); !math.IsNaN(v) {
		t.Errorf("Simplify(0.0 * x) at x = NaN gives %v, want NaN (%v)", v, out)
	}
	env["x"] = tensor.New(tensor.WithShape(), tensor.WithBacking([]float64{math.Inf(1)}))
	if r, err = tensors.EvalTerm(out, env); err != nil || !math.IsNaN(r.Data().(float64)) {
		t.Errorf("Simplify(0.0 * x) at x = +Inf gives %v (%v), want NaN", r, err)
	}
	// Documented: x + 0 → x keeps the sign of a zero x (-0 + 0 is +0, the rewrite gives -0).
	in = coretest.ParseRule(t, `atan2 (neg x + 0.0) (-1.0)`)
	if out, err = core.SimplifyTerm(in); err != nil {
		t.Fatal(err)
	}
	if want := coretest.ParseRule(t, `atan2 (neg x) (-1.0)`); !core.Equal(out, want) {
		t.Fatalf("got %v, want %v", out, want)
	}
	env["x"] = tensor.New(tensor.WithShape(), tensor.WithBacking([]float64{0}))
	r1, err1 := tensors.EvalTerm(in, env)
	r2, err2 := tensors.EvalTerm(out, env)
	if err1 != nil || err2 != nil || r1.Data().(float64) != math.Pi || r2.Data().(float64) != -math.Pi {
		t.Errorf("signed zero: atan2(-0 + 0, -1) = %v, atan2(-0, -1) = %v (%v %v); want π and -π", r1, r2, err1, err2)
	}
}

func TestSimplifyConstantFolding(t *testing.T) {
	runSimpCases(t, []simpCase{
		{"add", `2 + 3`, `5`, nil},
		{"sub", `7 - 10`, `-3`, nil},
		{"mul", `4 * (-3)`, `-12`, nil},
		{"max", `max 2 5`, `5`, nil},
		{"min", `min 2 5`, `2`, nil},
		// quot and rem truncate; by 0 they give 0
		{"quot", `quot 7 2`, `3`, nil},
		{"quot negative", `quot (-7) 2`, `-3`, nil},
		{"rem negative", `rem (-7) 2`, `-1`, nil},
		{"quot by 0", `quot 7 0`, `0`, nil},
		{"rem by 0", `rem 7 0`, `0`, nil},
		{"quot by -1", `quot 7 (-1)`, `-7`, nil},
		{"rem by -1", `rem 7 (-1)`, `0`, nil},
		{"neg literal", `neg 3`, `-3`, nil},
		{"abs literal", `abs (-3)`, `3`, nil},
		{"lt", `2 < 3`, `true`, nil},
		{"ge", `2 >= 3`, `false`, nil},
		{"eq", `3 == 3`, `true`, nil},
		{"ne", `3 != 3`, `false`, nil},
		// nested: k + (2 * 3) - (1 + 1) → (k + 6) - 2 (no reassociation)
		{"nested", `k + 2 * 3 - (1 + 1)`, `k + 6 - 2`, nil},
		{"inside index function", `gather [3] a (\[i] -> [i + (4 - 3)])`, `gather [3] a (\[i] -> [i + 1])`, nil},
		{"bool and", `true && false`, `false`, nil},
		{"bool or", `false || true`, `true`, nil},
		{"bool eq", `true == false`, `false`, nil},
		{"not literal", `not true`, `false`, nil},
		{"true && c", `true && c`, `c`, nil},
		{"c && false", `c && false`, `false`, nil},
		{"false || c", `false || c`, `c`, nil},
		{"c || true", `c || true`, `true`, nil},
		{"comparison fold in cond", `cond (1 < 2) a b`, `a`, nil},
		{"cond true", `cond true a b`, `a`, nil},
		{"cond false", `cond false a b`, `b`, nil},
		{"cond equal branches", `cond c a a`, `a`, nil},
		{"cond free", `cond c a b`, "", nil},
		{"replicate literal", `replicate 3 2.0`, `lit [3] f64 [2,2,2]`, nil},
		{"replicate literal large", `replicate 5 2.0`, "", nil},
		{"replicate constant literal", `replicate 2 (lit [2] f64 [1,1])`, `lit [2,2] f64 [1,1,1,1]`, nil},
	})
}

func TestSimplifyContraction(t *testing.T) {
	runSimpCases(t, []simpCase{
		// P[c,i,j] = m[i,c] * q[c,j]: tr [2,1,0] (replicate 4 m)[c,i,j] = m[i,c],
		// tr [1,0] (replicate 2 q)[c,i,j] = q[c,j]; Σ_c → matmul m q
		{"replicate form", `sumOuter (tr [2,1,0] (replicate 4 m) * tr [1,0] (replicate 2 q))`, `matmul m q`, nil},
		{"replicate form swapped operands", `sumOuter (tr [1,0] (replicate 2 q) * tr [2,1,0] (replicate 4 m))`, `matmul m q`, nil},
		// P[c,i,j] = mt[c,i] * q[c,j]: replicate 4 mt is R[j,c,i]; (c,i,j) = dims (1,2,0)
		{"transposed left", `sumOuter (tr [1,2,0] (replicate 4 mt) * tr [1,0] (replicate 2 q))`, `matmul (tr [1,0] mt) q`, nil},
		// P[c,i,j] = m[i,c] * qt[j,c]: replicate 2 qt is R[i,j,c]; (c,i,j) = dims (2,0,1)
		{"transposed right", `sumOuter (tr [2,1,0] (replicate 4 m) * tr [2,0,1] (replicate 2 qt))`, `matmul m (tr [1,0] qt)`, nil},
		{"both transposed", `sumOuter (tr [1,2,0] (replicate 4 mt) * tr [2,0,1] (replicate 2 qt))`, `matmul (tr [1,0] mt) (tr [1,0] qt)`, nil},
		// result in the other order: P[c,j,i] = m[i,c] * q[c,j] → Σ_c = (m q)^T = q^T m^T
		{"transposed result", `sumOuter (tr [2,0,1] (replicate 4 m) * tr [1,2,0] (replicate 2 q))`, `matmul (tr [1,0] q) (tr [1,0] m)`, nil},
		// outer tr: P'[i,c,j] = m[i,c] * q[c,j] with tr [1,0,2] moving c first
		{"outer transpose", `sumOuter (tr [1,0,2] (tr [1,2,0] (replicate 4 m) * replicate 2 q))`, `matmul m q`, nil},
		// gather broadcasts (the form the BOT produces): G[c,i,j] = m[i,c], H[c,i,j] = q[c,j]
		{"gather form", `sumOuter (gather [3,2,4] m (\[c,i,l] -> [i, c]) * gather [3,2,4] q (\[c,i,l] -> [c, l]))`, `matmul m q`, nil},
		{"gather form transposed", `sumOuter (gather [3,2,4] mt (\[c,i,l] -> [c, i]) * gather [3,2,4] qt (\[c,i,l] -> [l, c]))`,
			`matmul (tr [1,0] mt) (tr [1,0] qt)`, nil},
		// a gather that does not cover the matrix is not a broadcast
		{"gather form partial", `sumOuter (gather [3,2,3] m (\[c,i,l] -> [i, c]) * gather [3,2,3] q (\[c,i,l] -> [c, l]))`, "", nil},
		// both matrices on the same axes: an element-wise product, no matmul
		{"no shared contraction", `sumOuter (gather [3,2,4] m (\[c,i,l] -> [i, c]) * gather [3,2,4] mt (\[c,i,l] -> [c, i]))`, "", nil},
	})
}

func TestSimplifyLetRules(t *testing.T) {
	runSimpCases(t, []simpCase{
		{"dead let", `let z = exp a in b`, `b`, nil},
		{"dead let kept name", `let z = exp a in b`, `b`, []core.SimplifyOption{core.KeepLets("z")}},
		{"used once", `let z = exp a in z + b`, `exp a + b`, nil},
		{"bound to variable", `let z = a in z * z`, `a * a`, nil},
		{"bound to scalar literal", `let z = 2.0 in x * z + z`, `x * 2.0 + 2.0`, nil},
		{"bound to iota", `let z = iota 4 in z + z`, `iota 4 + iota 4`, nil},
		{"used twice", `let z = exp a in z * z`, "", nil},
		{"used once in build1", `let z = exp a in build1 4 (\i -> index z [i])`, "", nil},
		{"used once in index function", `let z = k + 1 in gather [3] a (\[i] -> [i + z])`, "", nil},
		{"KeepLets", `let z = exp a in z + b`, "", []core.SimplifyOption{core.KeepLets("z")}},
		{"KeepLets variable", `let z = a in z * z`, "", []core.SimplifyOption{core.KeepLets("z")}},
		{"nested inline", `let z = exp a in let w = z + b in w * 2.0`, `(exp a + b) * lit [4] f64 [2,2,2,2]`, nil},
		{"shared let kept, inner inlined", `let z = exp a in let w = z + b in w * z`, `let z = exp a in (z + b) * z`, nil},
	})
	// Inlining a variable under a binder of the same name renames the binder:
	// let z = l in gather [3] a (\[l] -> [l + z]) must read a[l' + l] with l' the gather variable.
	env := map[string]core.Type{"a": coretest.RuleEnv()["a"], "l": core.Scalar(core.Int64)}
	in, err := core.Parse(`let z = l in gather [3] a (\[l] -> [l + z])`, env)
	if err != nil {
		t.Fatal(err)
	}
	got, err := core.SimplifyTerm(in)
	if err != nil {
		t.Fatal(err)
	}
	g, ok := got.(*core.Gather)
	if !ok {
		t.Fatalf("want a gather, got %v", got)
	}
	sum, ok := g.Fn.Out[0].(*core.Binary)
	if !ok {
		t.Fatalf("want l' + l, got %v", got)
	}
	v0, ok0 := sum.X.(*core.Var)
	v1, ok1 := sum.Y.(*core.Var)
	if !ok0 || !ok1 || v0.Name != g.Fn.Vars[0].Name || v1.Name != "l" || v0.Name == "l" {
		t.Fatalf("capture: got %v", got)
	}
	for s := int64(0); s < 3; s++ {
		e := map[string]*tensor.Dense{
			"a": tensor.New(tensor.WithShape(4), tensor.WithBacking([]float64{1, 2, 3, 4})),
			"l": tensor.New(tensor.WithShape(), tensor.WithBacking([]int64{s})),
		}
		want, _ := tensors.EvalTerm(in, e)
		r, err := tensors.EvalTerm(got, e)
		if err != nil || coretest.Close(want, r, 0) != "" {
			t.Fatalf("capture: values %v vs %v (%v)", want, r, err)
		}
	}
}

// MaxRounds bounds the rounds: index (gather ..) [2] needs one round to substitute and a
// second to fold 3 - 2.
func TestSimplifyMaxRounds(t *testing.T) {
	in := coretest.ParseRule(t, `index (gather [3] a (\[i] -> [3 - i])) [2]`)
	for _, c := range []struct {
		rounds int
		want   string
	}{{1, `index a [3 - 2]`}, {2, `index a [1]`}, {16, `index a [1]`}} {
		got, err := core.SimplifyTerm(in, core.MaxRounds(c.rounds))
		if err != nil {
			t.Fatal(err)
		}
		if want := coretest.ParseRule(t, c.want); !core.Equal(got, want) {
			t.Errorf("MaxRounds(%d): got %v, want %v", c.rounds, got, want)
		}
	}
}

// The default fixed point is reached on random programs: simplifying again changes nothing,
// and the number of rounds needed is far below the default bound.
func TestSimplifyFixedPoint(t *testing.T) {
	coretest.CheckSimplifyFixedPoint(t, 300, func(seed int64) (*core.Program, error) {
		return coretest.RandomProgram(rand.New(rand.NewSource(seed)), coretest.Config{ScalarResult: seed%3 == 0}), nil
	})
}
