package ad

import (
	"testing"

	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/core/coretest"
)

// foo(x,y,z) = let w = x * sin y in atan2 z w + z * w (horde-ad's foo; anchors.md).
func TestAnchorFoo(t *testing.T) {
	var b core.Builder
	x, y, z := b.Var("x", coretest.F64()), b.Var("y", coretest.F64()), b.Var("z", coretest.F64())
	w := b.Var("w", coretest.F64())
	body := b.Let(w, b.Mul(x, b.Unary(core.OpSin, y)),
		b.Add(b.Binary(core.OpAtan2, z, w), b.Mul(z, w)))
	p := mustProg(t, &b, []*core.Var{x, y, z}, body)
	a := must(t)(Grad(p))
	args := map[string]*value{"x": vals(coretest.F64(), 1.1), "y": vals(coretest.F64(), 2.2), "z": vals(coretest.F64(), 3.3)}
	_, g := runArtifact(t, a, args)
	want := map[string]float64{"x": 2.4396285219055063, "y": -1.953374825727421, "z": 0.9654825811012627}
	for name, w := range want {
		if relErr(g[name][0], w) > 1e-12 {
			t.Errorf("d/d%s = %v, want %v\n%s", name, g[name][0], w, a)
		}
	}
}

// Paper 001: f(x,y) = let z = x + y in x * z at (2,3): value 10, gradient (7, 2).
func TestAnchorPaper001(t *testing.T) {
	var b core.Builder
	x, y, z := b.Var("x", coretest.F64()), b.Var("y", coretest.F64()), b.Var("z", coretest.F64())
	p := mustProg(t, &b, []*core.Var{x, y}, b.Let(z, b.Add(x, y), b.Mul(x, z)))
	g := checkGradient(t, "paper001", p, map[string]*value{"x": vals(coretest.F64(), 2), "y": vals(coretest.F64(), 3)}, checkOpts{skipBOT: true})
	if g["x"][0] != 7 || g["y"][0] != 2 {
		t.Errorf("gradient (%v, %v), want (7, 2)", g["x"], g["y"])
	}
	a, _ := Grad(p)
	v, _ := runArtifact(t, a, map[string]*value{"x": vals(coretest.F64(), 2), "y": vals(coretest.F64(), 3)})
	if v[0] != 10 {
		t.Errorf("value %v, want 10", v)
	}
}

// Fibonacci chain x_n = x_{n-2} + x_{n-1}: ∂x30/∂(x0, x1) = (514229, 832040).
func TestAnchorFibonacci(t *testing.T) {
	var b core.Builder
	x0, x1 := b.Var("x0", coretest.F64()), b.Var("x1", coretest.F64())
	vars := []*core.Var{x0, x1}
	for i := 2; i <= 30; i++ {
		vars = append(vars, b.Var("x"+itoa(i), coretest.F64()))
	}
	var body core.Term = vars[30]
	for i := 30; i >= 2; i-- {
		body = b.Let(vars[i], b.Add(vars[i-2], vars[i-1]), body)
	}
	p := mustProg(t, &b, []*core.Var{x0, x1}, body)
	g := checkGradient(t, "fibonacci", p, map[string]*value{"x0": vals(coretest.F64(), 0.5), "x1": vals(coretest.F64(), -0.25)}, checkOpts{fdTol: 1e-6})
	if g["x0"][0] != 514229 || g["x1"][0] != 832040 {
		t.Errorf("gradient (%v, %v), want (514229, 832040)", g["x0"], g["x1"])
	}
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}

// prodOf4 is the product of the four elements of v, as a chain of scalar multiplications of
// indexed elements (no division).
func prodOf4(b *core.Builder, v core.Term) core.Term {
	el := func(k int64) core.Term { return b.Index(v, core.ScalarI(k)) }
	return b.Mul(b.Mul(b.Mul(el(0), el(1)), el(2)), el(3))
}

// Paper 002/004: product of [2,3,0,5] has gradient [0,0,30,0]; of [0,3,0,5], all zeros.
func TestAnchorProductWithZeros(t *testing.T) {
	var b core.Builder
	v := b.Var("v", coretest.F64(4))
	p := mustProg(t, &b, []*core.Var{v}, prodOf4(&b, v))
	for _, c := range []struct{ in, want []float64 }{
		{[]float64{2, 3, 0, 5}, []float64{0, 0, 30, 0}},
		{[]float64{0, 3, 0, 5}, []float64{0, 0, 0, 0}},
	} {
		g := checkGradient(t, "product", p, map[string]*value{"v": vals(coretest.F64(4), c.in...)}, checkOpts{skipBOT: true})
		if _, ok := closeSlices(g["v"], c.want, 0); !ok {
			t.Errorf("product of %v: gradient %v, want %v", c.in, g["v"], c.want)
		}
	}
}

// max of [1,5,5,2] has gradient [0,1,0,0], both as a chain of binary max (ties go to the
// first argument) and as the maxOuter idiom index v [argmaxOuter v].
func TestAnchorMaxTie(t *testing.T) {
	in := []float64{1, 5, 5, 2}
	want := []float64{0, 1, 0, 0}
	var b core.Builder
	v := b.Var("v", coretest.F64(4))
	el := func(k int64) core.Term { return b.Index(v, core.ScalarI(k)) }
	chain := b.Binary(core.OpMax, b.Binary(core.OpMax, b.Binary(core.OpMax, el(0), el(1)), el(2)), el(3))
	outer := b.Index(v, b.ArgmaxOuter(v))
	for name, body := range map[string]core.Term{"chain": chain, "argmax": outer} {
		p := mustProg(t, &b, []*core.Var{v}, body)
		g := checkGradient(t, "max "+name, p, map[string]*value{"v": vals(coretest.F64(4), in...)}, checkOpts{noFD: true})
		if _, ok := closeSlices(g["v"], want, 0); !ok {
			t.Errorf("max %s of %v: gradient %v, want %v", name, in, g["v"], want)
		}
	}
}

// ReLU as max 0 x on [1.1, -2.2, 0, 4.4]: gradient of the sum is [1, 0, 0, 1] (the tie at 0
// goes to the constant, the first argument).
func TestAnchorReLU(t *testing.T) {
	var b core.Builder
	x := b.Var("x", coretest.F64(4))
	zero := b.Replicate(4, core.ScalarF(core.Float64, 0))
	p := mustProg(t, &b, []*core.Var{x}, b.SumOuter(b.Binary(core.OpMax, zero, x)))
	g := checkGradient(t, "relu", p, map[string]*value{"x": vals(coretest.F64(4), 1.1, -2.2, 0, 4.4)}, checkOpts{noFD: true})
	if _, ok := closeSlices(g["x"], []float64{1, 0, 0, 1}, 0); !ok {
		t.Errorf("relu gradient %v, want [1 0 0 1]", g["x"])
	}
}

// overleaf v = sumOuter (gather [50] v (\[i] -> [rem i 28])) (the bulk form of the build1
// version): gradient is 22 twos then 6 ones.
func TestAnchorOverleafBulk(t *testing.T) {
	var b core.Builder
	v := b.Var("v", coretest.F64(28))
	i := b.Var("i", core.Scalar(core.Int64))
	p := mustProg(t, &b, []*core.Var{v}, b.SumOuter(b.Gather(core.Shape{50}, v, b.IndexFn([]*core.Var{i}, b.Binary(core.OpRem, i, core.ScalarI(28))))))
	checkOverleaf(t, p, checkOpts{skipBOT: true})
}

// checkOverleaf checks an overleaf program's gradient at v = 0…27: 22 twos then 6 ones (v_j
// is read twice by the 50 positions i with i rem 28 = j when j < 22, once otherwise).
func checkOverleaf(t *testing.T, p *core.Program, o checkOpts) {
	t.Helper()
	in := make([]float64, 28)
	for k := range in {
		in[k] = float64(k)
	}
	g := checkGradient(t, "overleaf", p, map[string]*value{"v": vals(coretest.F64(28), in...)}, o)
	for k, x := range g["v"] {
		want := 1.0
		if k < 22 {
			want = 2
		}
		if x != want {
			t.Fatalf("overleaf gradient %v, want 22 twos then 6 ones", g["v"])
		}
	}
}

// The §3.3 example (evaluator semantics used by the gradients of gather):
// scatter [6] [1..9] (\[i] -> [quot i 2]) = [3, 7, 11, 15, 9, 0].
func TestEvaluatorScatterExample(t *testing.T) {
	var b core.Builder
	x := b.Var("t", coretest.F64(9))
	i := b.Var("i", core.Scalar(core.Int64))
	p := mustProg(t, &b, []*core.Var{x}, b.Scatter(core.Shape{6}, x, b.IndexFn([]*core.Var{i}, b.Binary(core.OpQuot, i, core.ScalarI(2)))))
	r, err := evalPrimal(p, map[string]*value{"t": vals(coretest.F64(9), 1, 2, 3, 4, 5, 6, 7, 8, 9)})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := closeSlices(r.f, []float64{3, 7, 11, 15, 9, 0}, 0); !ok {
		t.Errorf("scatter = %v", r.f)
	}
}
