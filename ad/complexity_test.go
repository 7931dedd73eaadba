package ad

import (
	"fmt"
	"testing"

	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/core/coretest"
)

// doubling is x_{i+1} = (x_i + x_i) / 2, n times, on a scalar: the exponential-sharing example of
// paper 001 (the derivative is exactly 1).
func doubling(t testing.TB, n int) *core.Program {
	var b core.Builder
	x0 := b.Var("x_0", coretest.F64())
	vars := []*core.Var{x0}
	for i := 1; i <= n; i++ {
		vars = append(vars, b.Var(fmt.Sprintf("x_%d", i), coretest.F64()))
	}
	two := core.ScalarF(core.Float64, 2)
	var body core.Term = vars[n]
	for i := n; i >= 1; i-- {
		body = b.Let(vars[i], b.Div(b.Add(vars[i-1], vars[i-1]), two), body)
	}
	return mustProg(t, &b, []*core.Var{x0}, body)
}

// elementChain is a 1000-layer style element-wise chain on a [8] vector:
// x_{i+1} = sin x_i * 0.5 + x_i * w, result sumOuter x_n.
func elementChain(t testing.TB, n int) *core.Program {
	var b core.Builder
	x0, w := b.Var("x_0", coretest.F64(8)), b.Var("w", coretest.F64(8))
	vars := []*core.Var{x0}
	for i := 1; i <= n; i++ {
		vars = append(vars, b.Var(fmt.Sprintf("x_%d", i), coretest.F64(8)))
	}
	half := b.Replicate(8, core.ScalarF(core.Float64, 0.5))
	var body core.Term = b.SumOuter(vars[n])
	for i := n; i >= 1; i-- {
		body = b.Let(vars[i], b.Add(b.Mul(b.Unary(core.OpSin, vars[i-1]), half), b.Mul(vars[i-1], w)), body)
	}
	return mustProg(t, &b, []*core.Var{x0, w}, body)
}

// TestDoublingChainLinear: the reverse pass visits each Share ID once, the number of Delta
// nodes visited and the artifact size grow linearly in n, and the gradient is exactly 1.
func TestDoublingChainLinear(t *testing.T) {
	var perN []float64
	for _, n := range []int{100, 1000, 10000} {
		p := doubling(t, n)
		a := must(t)(Grad(p))
		st := a.stats
		if st.SharesVisited != st.ShareIDs || st.ShareIDs == 0 {
			t.Errorf("n=%d: visited %d shares for %d IDs", n, st.SharesVisited, st.ShareIDs)
		}
		if st.NodesVisited > 6*n+10 {
			t.Errorf("n=%d: %d Delta nodes visited, want O(n)", n, st.NodesVisited)
		}
		size := core.Size(a.Program().Body)
		perN = append(perN, float64(size)/float64(n))
		t.Logf("n=%d: share IDs %d, Delta nodes visited %d, artifact nodes %d", n, st.ShareIDs, st.NodesVisited, size)
		if n <= 1000 {
			_, g := runArtifact(t, a, map[string]*value{"x_0": vals(coretest.F64(), 0.75)})
			if g["x_0"][0] != 1 {
				t.Errorf("n=%d: gradient %v, want 1", n, g["x_0"])
			}
		}
	}
	if perN[2] > 1.1*perN[0]+1 {
		t.Errorf("artifact size per level grows: %v", perN)
	}
}

func TestElementChainLinear(t *testing.T) {
	p := elementChain(t, 30)
	rng := newRng(3)
	checkGradient(t, "chain30", p, randomArgs(rng, p, -1, 1, 0), checkOpts{skipBOT: true})
	var perN []float64
	for _, n := range []int{100, 1000} {
		a := must(t)(Grad(elementChain(t, n)))
		if a.stats.SharesVisited != a.stats.ShareIDs {
			t.Errorf("n=%d: visited %d shares for %d IDs", n, a.stats.SharesVisited, a.stats.ShareIDs)
		}
		perN = append(perN, float64(core.Size(a.Program().Body))/float64(n))
	}
	if perN[1] > 1.1*perN[0]+1 {
		t.Errorf("artifact size per layer grows: %v", perN)
	}
}

// benchGrad measures Grad on p, with the full pipeline and with the simplifier off (the
// differentiation proper: forward pass, reverse pass, shareToLet, wrapper; plus the BOT).
func benchGrad(b *testing.B, name string, p *core.Program) {
	for _, o := range []struct {
		tag string
		opt Options
	}{{"full", Options{}}, {"nosimplify", Options{NoSimplify: true}}} {
		b.Run(name+"/"+o.tag, func(b *testing.B) {
			var size int
			for i := 0; i < b.N; i++ {
				a, err := GradWith(p, o.opt)
				if err != nil {
					b.Fatal(err)
				}
				size = core.Size(a.Program().Body)
			}
			b.ReportMetric(float64(size), "artifact-nodes")
		})
	}
}

func BenchmarkGradDoubling(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		benchGrad(b, fmt.Sprint(n), doubling(b, n))
	}
}

func BenchmarkGradElementChain(b *testing.B) {
	for _, n := range []int{100, 1000} {
		benchGrad(b, fmt.Sprint(n), elementChain(b, n))
	}
}

// TestDoublingPlain: x_{i+1} = x_i + x_i (paper 001's exponential-sharing example) for n = 60:
// the gradient is exactly 2^60, and the reverse pass visits each Share once.
func TestDoublingPlain(t *testing.T) {
	p := parse(t, "fn (x_0 : [] f64) => "+func() string {
		s := ""
		for i := 1; i <= 60; i++ {
			s += fmt.Sprintf("let x_%d = x_%d + x_%d in ", i, i-1, i-1)
		}
		return s + "x_60"
	}())
	a := must(t)(Grad(p))
	if st := a.Stats(); st.SharesVisited != st.ShareIDs || st.ShareIDs != 60 {
		t.Errorf("stats %+v, want 60 share IDs each visited once", st)
	}
	_, g := runArtifact(t, a, map[string]*value{"x_0": vals(coretest.F64(), 0.1)})
	if g["x_0"][0] != float64(uint64(1)<<60) {
		t.Errorf("gradient %v, want 2^60", g["x_0"][0])
	}
}
