package bot

import (
	"math/rand"
	"testing"

	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/core/coretest"
	"github.com/bulkad/bulkad/core/tensors"
	"github.com/bulkad/bulkad/kernel"
	"gorgonia.org/tensor"
)

// Per-rule tests of the BOT: for each rule of Figs. 9, 10 and 11 of paper 000 and for the
// rules derived for the constructs the paper leaves out, a small input and its vectorised
// form derived by hand from the rule (comments give the derivation when it is not a single
// step). The result of VectorizeTerm is compared structurally (core.Equal), checked with
// CheckNormalForm, and evaluated against the input on random environments (kernel.EvalTerm and
// core.Eval). Fresh names are those of core.Namer (prefix_0 for the first use of a
// prefix not used in the term).

type botCase struct {
	rule, in, want string
}

func runBotCases(t *testing.T, cases []botCase) {
	t.Helper()
	for n, c := range cases {
		t.Run(c.rule, func(t *testing.T) {
			in := coretest.ParseRule(t, c.in)
			want := coretest.ParseRule(t, c.want)
			got, err := VectorizeTerm(in)
			if err != nil {
				t.Fatalf("VectorizeTerm(%v): %v", in, err)
			}
			if err := CheckNormalForm(got); err != nil {
				t.Fatalf("%v\ninput: %v", err, in)
			}
			if err := CheckNormalForm(want); err != nil {
				t.Fatalf("expected form is not normal (test bug): %v", err)
			}
			if !core.Equal(got, want) {
				t.Fatalf("VectorizeTerm(%v)\n got  %v\n want %v", in, got, want)
			}
			coretest.SameRuleValues(t, int64(n), in, got, 12, kernel.EvalTerm)
		})
	}
}

// Fig. 9: build1 pushed into every term former; the extra constructs alike.
func TestBOTFig9(t *testing.T) {
	id4 := `gather [4] a (\[i] -> [i])`
	runBotCases(t, []botCase{
		// build1 k (\i. i) ~> [0, …, k-1]
		{"build1 of i", `build1 4 (\i -> i)`, `iota 4`},
		// build1 k (\i. t) ~> replicate k t  (i ∉ FV(t))
		{"independent variable", `build1 3 (\i -> a)`, `replicate 3 a`},
		{"independent term", `build1 3 (\i -> exp x)`, `replicate 3 (exp x)`},
		{"iota", `build1 2 (\i -> iota 3)`, `replicate 2 (iota 3)`},
		// build1 k (\i. op t u) ~> op (build1 k (\i. t)) (build1 k (\i. u))
		{"binary", `build1 4 (\i -> index a [i] * index b [i])`, id4 + ` * gather [4] b (\[i] -> [i])`},
		{"binary with independent operand", `build1 4 (\i -> index a [i] + x)`, id4 + ` + replicate 4 x`},
		{"comparison", `build1 4 (\i -> index a [i] < x)`, id4 + ` < replicate 4 x`},
		{"logic", `build1 4 (\i -> index bv [i] && c)`, `gather [4] bv (\[i] -> [i]) && replicate 4 c`},
		{"integer arithmetic", `build1 4 (\i -> quot i 2 + index iv [i])`, `quot (iota 4) (replicate 4 2) + gather [4] iv (\[i] -> [i])`},
		// build1 k (\i. op t) ~> op (build1 k (\i. t))
		{"unary", `build1 4 (\i -> exp (index a [i]))`, `exp (` + id4 + `)`},
		{"not", `build1 4 (\i -> not (index bv [i]))`, `not (gather [4] bv (\[i] -> [i]))`},
		// cast is element-wise: build1 k (\i. cast ρ t) ~> cast ρ (build1 k (\i. t))
		{"cast", `build1 4 (\i -> cast f32 (index a [i]))`, `cast f32 (` + id4 + `)`},
		{"cast of index variable", `build1 4 (\i -> cast f64 i)`, `cast f64 (iota 4)`},
		// build1 k (\i. sumOuter t) ~> sumOuter (tr (build1 k (\i. t)))
		{"sumOuter", `build1 2 (\i -> sumOuter (index m [i]))`, `sumOuter (tr [1,0] (gather [2,3] m (\[i] -> [i])))`},
		// argmaxOuter reduces the outer dimension like sumOuter
		{"argmaxOuter", `build1 2 (\i -> argmaxOuter (index m [i]))`, `argmaxOuter (tr [1,0] (gather [2,3] m (\[i] -> [i])))`},
		// build1 k (\i. gather sh t (\is. ix)) ~> gather (k::sh) (build1 k (\i. t)) (\(i::is). i::ix)
		{"gather", `build1 2 (\i -> gather [2] (index m [i]) (\[l] -> [2 - l]))`,
			`gather [2,2] (gather [2,3] m (\[i] -> [i])) (\[i,l] -> [i, 2 - l])`},
		// t independent of i: gather (k::sh) t (\(i::is). ix) (gather-of-replicate fused)
		{"gather of independent array", `build1 2 (\i -> gather [2] a (\[l] -> [i + l]))`, `gather [2,2] a (\[i,l] -> [i + l])`},
		// build1 k (\i. scatter sh t (\is. ix)) ~> scatter (k::sh) (build1 k (\i. t)) (\(i::is). i::ix)
		{"scatter", `build1 2 (\i -> scatter [4] (index m [i]) (\[l] -> [l + i]))`,
			`scatter [2,4] (gather [2,3] m (\[i] -> [i])) (\[i,l] -> [i, l + i])`},
		// build1 k (\i. [t1, …, tn]) ~> tr [build1 k (\i. t1), …, build1 k (\i. tn)]
		{"fromVector", `build1 4 (\i -> [index a [i], x])`, `tr [1,0] [` + id4 + `, replicate 4 x]`},
		// build1 k (\i. replicate n t) ~> tr (replicate n (build1 k (\i. t)))
		{"replicate", `build1 4 (\i -> replicate 3 (index a [i]))`, `tr [1,0] (replicate 3 (` + id4 + `))`},
		// build1 k (\i. tr b t) ~> tr (0 :: b+1) (build1 k (\i. t))
		{"transpose", `build1 2 (\i -> tr [1,0] (index t3 [i]))`, `tr [0,2,1] (gather [2,3,4] t3 (\[i] -> [i]))`},
		// build1 k (\i. reshape sh t) ~> reshape (k::sh) (build1 k (\i. t))
		{"reshape", `build1 2 (\i -> reshape [3,1] (index m [i]))`, `reshape [2,3,1] (gather [2,3] m (\[i] -> [i]))`},
		// build1 k (\i. let x = v in u) ~> let x = build1 k (\i. v) in build1 k (\i. u[index x [i]/x])
		// and build1 k (\i. index x [i]) ~> gather [k] x (\[i]. [i])  (Fig. 11)
		{"let", `build1 4 (\i -> let z = exp (index a [i]) in z * z)`,
			`let z = exp (` + id4 + `) in gather [4] z (\[i] -> [i]) * gather [4] z (\[i] -> [i])`},
		// let floating: i ∉ FV(v)
		{"let independent", `build1 4 (\i -> let z = exp x in z * index a [i])`, `let z = exp x in replicate 4 z * ` + id4},
		// the substitution u[index z [i]/z] inside an index function: index z [i] stays there
		{"let in index function", `build1 4 (\i -> let z = index iv [i] in index a [z])`,
			`let z = gather [4] iv (\[i] -> [i]) in gather [4] a (\[i] -> [index z [i]])`},
		// build1 k (\i. cond b u v) ~> build1 k (\i. index [u, v] [cond b 0 1])
		//   ~> gather (k::sh) (tr [1,0] [build1 k (\i. u), build1 k (\i. v)]) (\[i]. [i, cond b 0 1])
		{"cond", `build1 4 (\i -> cond (i < 2) (index a [i]) (index b [i]))`,
			`gather [4] (tr [1,0] [` + id4 + `, gather [4] b (\[i] -> [i])]) (\[i] -> [i, cond (i < 2) 0 1])`},
		// branches independent of i: gather (k::sh) [u, v] (\[i]. [cond b 0 1])
		{"cond independent branches", `build1 4 (\i -> cond (i < 2) x (exp x))`, `gather [4] [x, exp x] (\[i] -> [cond (i < 2) 0 1])`},
		// condition independent of i: cond b (build1 k (\i. u)) (build1 k (\i. v))
		{"cond independent condition", `build1 4 (\i -> cond c (index a [i]) x)`, `cond c (` + id4 + `) (replicate 4 x)`},
		// share n t: one fresh share ID per (build1, n), so both occurrences stay one value
		{"share", `build1 4 (\i -> share 1 (index a [i]) + share 1)`, `share 2 (` + id4 + `) + share 2`},
		// matmul, i ∉ FV(y): reshape [k,a,b] (matmul (reshape [k*a, c] (build1 k (\i. x))) y)
		{"matmul left", `build1 2 (\i -> matmul (index t3 [i]) qt)`,
			`reshape [2,3,3] (matmul (reshape [6,4] (gather [2,3,4] t3 (\[i] -> [i]))) qt)`},
		// i ∉ FV(x): tr [1,0] (reshape [a,k,b] (matmul x (reshape [c, k*b] (tr [1,0] (build1 k (\i. y))))))
		{"matmul right", `build1 2 (\i -> matmul m (index t3 [i]))`,
			`tr [1,0] (reshape [2,2,4] (matmul m (reshape [3,8] (tr [1,0] (gather [2,3,4] t3 (\[i] -> [i]))))))`},
		// both: matmul (build1 k (\i. x)) (build1 k (\i. y)), a batched product
		{"matmul both", `build1 2 (\i -> matmul (index t3 [i]) (index t3b [i]))`,
			`matmul (gather [2,3,4] t3 (\[i] -> [i])) (gather [2,4,3] t3b (\[i] -> [i]))`},
		// batched: one batch dimension more
		{"batched matmul both", `build1 2 (\i -> matmul (index t4 [i]) (index t4b [i]))`,
			`matmul (gather [2,2,3,4] t4 (\[i] -> [i])) (gather [2,2,4,3] t4b (\[i] -> [i]))`},
		// batched, i ∉ FV(y): the independent operand is replicated (build1 of an independent term)
		{"batched matmul left", `build1 2 (\i -> matmul (index t4 [i]) t3b)`,
			`matmul (gather [2,2,3,4] t4 (\[i] -> [i])) (replicate 2 t3b)`},
		{"batched matmul right", `build1 3 (\i -> matmul t3 (index t4b [quot i 2]))`,
			`matmul (replicate 3 t3) (gather [3,2,4,3] t4b (\[i] -> [quot i 2]))`},
		// nested builds: the inner gather's array m does not depend on i
		{"nested build1", `build1 2 (\i -> build1 3 (\l -> index m [i, l]))`, `gather [2,3] m (\[i,l] -> [i, l])`},
	})
}

// Fig. 11: build1 over the four normal forms of index.
func TestBOTFig11(t *testing.T) {
	runBotCases(t, []botCase{
		// build1 k (\i. index x ix) ~> gather (k::sh) x (\[i]. ix)
		{"index variable", `build1 4 (\i -> index m [rem i 2, 1])`, `gather [4] m (\[i] -> [rem i 2, 1])`},
		{"index variable rest", `build1 4 (\i -> index m [rem i 2])`, `gather [4,3] m (\[i] -> [rem i 2])`},
		// build1 k (\i. index c ix) ~> gather (k::sh) c (\[i]. ix)
		{"index constant", `build1 3 (\i -> index (lit [3] f64 [1,2,3]) [2 - i])`, `gather [3] (lit [3] f64 [1,2,3]) (\[i] -> [2 - i])`},
		// build1 k (\i. index [t1..tn] [t]) ~> gather (k::sh) (build1 k (\i. [t1..tn])) (\[i]. [i, t])
		{"index fromVector", `build1 4 (\i -> index [index a [i], x] [rem i 2])`,
			`gather [4] (tr [1,0] [gather [4] a (\[i] -> [i]), replicate 4 x]) (\[i] -> [i, rem i 2])`},
		{"index independent fromVector", `build1 4 (\i -> index [x, exp x] [rem i 2])`, `gather [4] [x, exp x] (\[i] -> [rem i 2])`},
		// build1 k (\i. index (scatter sh t f) ix) ~> gather (k::sh) (build1 k (\i. scatter sh t f)) (\[i]. i::ix)
		{"index scatter", `build1 2 (\i -> index (scatter [3] (index m [i]) (\[l] -> [2 - l])) [i])`,
			`gather [2] (scatter [2,3] (gather [2,3] m (\[i] -> [i])) (\[i,l] -> [i, 2 - l])) (\[i] -> [i, i])`},
		{"index independent scatter", `build1 2 (\i -> index (scatter [3] a (\[l] -> [rem l 3])) [i])`,
			`gather [2] (scatter [3] a (\[l] -> [rem l 3])) (\[i] -> [i])`},
	})
}

// Fig. 10: index pushed into every term former (outside any build1), and the extra
// constructs. Out-of-bounds reads must keep giving 0 (§5.2), hence the guards.
func TestBOTFig10(t *testing.T) {
	guard := func(n string) string { return `cond (0 <= k && k < ` + n + `) 0 (-1)` }
	runBotCases(t, []botCase{
		// index (index t ix1) ix2 ~> index t (ix1 ++ ix2)
		{"index of index", `index (index t3 [k]) [1]`, `index t3 [k, 1]`},
		// index (let x = v in t) ix ~> let x = v in index t ix
		{"let", `index (let z = exp a in z * z) [1]`, `let z = exp a in index z [1] * index z [1]`},
		// index (cond b u v) [t1] ~> let i1 = t1 in cond b (index u [i1]) (index v [i1])
		{"cond", `index (cond c a b) [k + 1]`, `let ix_0 = k + 1 in cond c (index a [ix_0]) (index b [ix_0])`},
		// index (op t u) [t1] ~> let i1 = t1 in op (index t [i1]) (index u [i1])
		{"binary", `index (a * b) [k + 1]`, `let ix_0 = k + 1 in index a [ix_0] * index b [ix_0]`},
		{"comparison zero-keeping", `index (a < b) [k]`, `index a [k] < index b [k]`},
		// op 0 0 ≠ 0 (here 0/0 is NaN): guarded unless in bounds
		{"binary guarded", `index (a / b) [k]`, `index [index a [k] / index b [k]] [` + guard("4") + `]`},
		{"binary in bounds", `index (a / b) [2]`, `index a [2] / index b [2]`},
		{"comparison guarded", `index (a <= b) [k]`, `index [index a [k] <= index b [k]] [` + guard("4") + `]`},
		// index (op t) ix ~> op (index t ix)
		{"unary", `index (sin a) [k]`, `sin (index a [k])`},
		{"unary guarded", `index (exp a) [k]`, `index [exp (index a [k])] [` + guard("4") + `]`},
		// float neg 0 is -0, not the +0 an out-of-bounds read gives (atan2 tells them apart)
		{"neg guarded", `index (neg a) [k]`, `index [neg (index a [k])] [` + guard("4") + `]`},
		{"neg i64", `index (neg iv) [k]`, `neg (index iv [k])`},
		{"signed zero", `index (atan2 (neg a) (neg a)) [k]`,
			`atan2 (index [neg (index a [k])] [` + guard("4") + `]) (index [neg (index a [k])] [` + guard("4") + `])`},
		{"not guarded", `index (not bv) [k]`, `index [not (index bv [k])] [` + guard("4") + `]`},
		{"cast", `index (cast f32 a) [k]`, `cast f32 (index a [k])`},
		// index (sumOuter t) ix ~> sumOuter (index (tr [1..n,0] t) ix) ~> sumOuter (gather t (\[p]. p::ix))
		{"sumOuter", `index (sumOuter t3) [1]`, `sumOuter (gather [2,4] t3 (\[p_0] -> [p_0, 1]))`},
		{"argmaxOuter", `index (argmaxOuter t3) [1, k]`, `argmaxOuter (gather [2] t3 (\[p_0] -> [p_0, 1, k]))`},
		// index [t1..tk] [u1..un] (n > 1) ~> index [index t1 [u2..], …] [u1]
		{"fromVector", `index [a, b] [k, 2]`, `index [index a [2], index b [2]] [k]`},
		{"fromVector normal", `index [a, b] [k]`, `index [a, b] [k]`},
		// index (replicate k t) (u::ix) ~> index t ix (guarded unless 0 ≤ u < k)
		{"replicate", `index (replicate 3 a) [1, k]`, `index a [k]`},
		{"replicate guarded", `index (replicate 3 a) [k, 2]`, `index a [cond (0 <= k && k < 3) 2 (-1)]`},
		{"replicate guarded scalar", `index (replicate 3 x) [k]`, `index [x] [` + guard("3") + `]`},
		// index (tr P t) ix ~> index t (permuted ix), or a gather over the remaining dims
		{"transpose", `index (tr [1,0] m) [2, 1]`, `index m [1, 2]`},
		{"transpose partial", `index (tr [1,0] m) [2]`, `gather [2] m (\[j_0] -> [j_0, 2])`},
		// index (reshape [3,2] m) [k, 1]: linear position 2k+1 in m : [2,3] is
		// [quot lin 3, rem lin 3]; k is not provably < 3, so the first component is guarded
		{"reshape", `index (reshape [3,2] m) [k, 1]`,
			`let lin_0 = k * 2 + 1 in index m [cond (0 <= k && k < 3) (quot lin_0 3) (-1), rem lin_0 3]`},
		// index (gather (k::sh) t (\(i::is). ix)) (u::ix') ~> index (gather sh t (\is. ix[i := u])) ix'
		{"gather", `index (gather [3] a (\[l] -> [3 - l])) [k]`, `index a [cond (0 <= k && k < 3) (3 - k) (-1)]`},
		{"gather partial", `index (gather [2,3] q (\[l,r] -> [r, l])) [1]`, `gather [3] q (\[r] -> [r, 1])`},
		// index (gather [] t (\[]. ix)) ix' ~> index (index t ix) ix'
		{"gather empty domain", `index (gather [3] m (\[] -> [1])) [k]`, `index m [1, k]`},
		// index (iota n) [u] ~> cond (0 ≤ u < n) u 0
		{"iota", `index (iota 4) [k]`, `cond (0 <= k && k < 4) k 0`},
		{"iota in bounds", `index (iota 4) [2]`, `2`},
		// index (matmul x y) [u] ~> sumOuter (tr [1,0] (replicate b (index x [u])) * y)
		{"matmul row", `index (matmul m q) [1]`, `sumOuter (tr [1,0] (replicate 4 (index m [1])) * q)`},
		// index (matmul x y) [u, w] ~> sumOuter (index x [u] * index (tr [1,0] y) [w])
		{"matmul element", `index (matmul m q) [1, 3]`, `sumOuter (index m [1] * gather [3] q (\[j_0] -> [j_0, 3]))`},
		// not provably in bounds: guarded (0 · Inf would be NaN where the input reads 0)
		{"matmul element guarded", `index (matmul m q) [1, k]`,
			`index [sumOuter (index m [1] * gather [3] q (\[j_0] -> [j_0, k]))] [` + guard("4") + `]`},
		{"matmul row guarded", `index (matmul m q) [k]`,
			`index [sumOuter (tr [1,0] (replicate 4 (index m [k])) * q)] [` + guard("2") + `]`},
		// batched: index (matmul x y) (u::ix) ~> index (matmul (index x [u]) (index y [u])) ix
		// (out of bounds both operands read zeros: the zero matrix, no guard)
		{"batched matmul", `index (matmul t3 t3b) [k]`, `matmul (index t3 [k]) (index t3b [k])`},
		{"batched matmul row", `index (matmul t3 t3b) [1, 2]`,
			`sumOuter (tr [1,0] (replicate 3 (index t3 [1, 2])) * index t3b [1])`},
		{"batched matmul rank 4", `index (matmul t4 t4b) [k, 1]`, `matmul (index t4 [k, 1]) (index t4b [k, 1])`},
		{"batched matmul let", `index (matmul t3 t3b) [k + 1]`,
			`let ix_0 = k + 1 in matmul (index t3 [ix_0]) (index t3b [ix_0])`},
		// index (share n t) ix ~> index t ix
		{"share", `index (share 1 (sin a)) [k]`, `sin (index a [k])`},
	})
	// index t [] ~> t
	a := coretest.ParseRule(t, `a`)
	in, err := core.NewIndex(a, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := VectorizeTerm(in); err != nil || got != a {
		t.Errorf("index a [] → %v, %v; want a", got, err)
	}
}

// Tuple results: each component is vectorised.
func TestBOTTuple(t *testing.T) {
	src := `fn (a : [4] f64, x : [] f64) => let z = exp x in (build1 4 (\i -> index a [i] * z), z)`
	p, err := core.ParseProgram(src)
	if err != nil {
		t.Fatal(err)
	}
	q := vec(t, p)
	want, err := core.ParseProgram(`fn (a : [4] f64, x : [] f64) => let z = exp x in (gather [4] a (\[i] -> [i]) * replicate 4 z, z)`)
	if err != nil {
		t.Fatal(err)
	}
	if !core.ProgramEqual(q, want) {
		t.Fatalf("got  %v\nwant %v", q, want)
	}
	args := map[string]*tensor.Dense{
		"a": tensor.New(tensor.WithShape(4), tensor.WithBacking([]float64{1, -2, 3, 0.5})),
		"x": tensor.New(tensor.WithShape(), tensor.WithBacking([]float64{0.25})),
	}
	r1, err1 := tensors.EvalTuple(p, args)
	r2, err2 := tensors.EvalTuple(q, args)
	if err1 != nil || err2 != nil || len(r1) != 2 || len(r2) != 2 {
		t.Fatalf("EvalTuple: %v %v", err1, err2)
	}
	for k := range r1 {
		if d := coretest.Close(r1[k], r2[k], 1e-12); d != "" {
			t.Errorf("component %d: %s", k, d)
		}
	}
}

// All four transposition variants of matmat written with build1 and index contract to one
// matmul after BOT and simplification: C[i,j] = Σ_p A[i,p] B[p,j] with A = a or atᵀ and
// B = b or btᵀ.
func TestBOTContractionVariants(t *testing.T) {
	env := map[string]core.Type{
		"a": {Shape: core.Shape{3, 4}, Dtype: core.Float64}, "at": {Shape: core.Shape{4, 3}, Dtype: core.Float64},
		"b": {Shape: core.Shape{4, 2}, Dtype: core.Float64}, "bt": {Shape: core.Shape{2, 4}, Dtype: core.Float64},
	}
	cases := []struct{ left, right, want string }{
		{`index a [i, p]`, `index b [p, j]`, `matmul a b`},
		{`index at [p, i]`, `index b [p, j]`, `matmul (tr [1,0] at) b`},
		{`index a [i, p]`, `index bt [j, p]`, `matmul a (tr [1,0] bt)`},
		{`index at [p, i]`, `index bt [j, p]`, `matmul (tr [1,0] at) (tr [1,0] bt)`},
	}
	for _, c := range cases {
		src := `build1 3 (\i -> build1 2 (\j -> sumOuter (build1 4 (\p -> ` + c.left + ` * ` + c.right + `))))`
		in, err := core.Parse(src, env)
		if err != nil {
			t.Fatal(err)
		}
		want, err := core.Parse(c.want, env)
		if err != nil {
			t.Fatal(err)
		}
		q, err := VectorizeTerm(in)
		if err != nil {
			t.Fatal(err)
		}
		r, err := core.SimplifyTerm(q)
		if err != nil {
			t.Fatal(err)
		}
		if !core.Equal(r, want) {
			t.Errorf("%s:\n BOT        %v\n simplified %v\n want       %v", src, q, r, want)
			continue
		}
		rng := rand.New(rand.NewSource(3))
		for trial := 0; trial < 3; trial++ {
			args := map[string]*tensor.Dense{}
			for name, ty := range env {
				vals := make([]float64, ty.Shape.Size())
				for k := range vals {
					vals[k] = rng.Float64()*2 - 1
				}
				args[name] = tensor.New(tensor.WithShape([]int(ty.Shape)...), tensor.WithBacking(vals))
			}
			v1, err1 := kernel.EvalTerm(in, args)
			v2, err2 := kernel.EvalTerm(r, args)
			if err1 != nil || err2 != nil {
				t.Fatalf("eval: %v %v", err1, err2)
			}
			if d := coretest.Close(v1, v2, 1e-12); d != "" {
				t.Errorf("%s: %s", src, d)
			}
		}
	}
}
