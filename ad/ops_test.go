package ad

import (
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/core/coretest"
	"gorgonia.org/tensor"
)

// domainOf gives the sampling interval of the operand of a unary op (away from kinks and poles).
func unaryDomain(op core.UnOp) (lo, hi, minAbs float64) {
	switch op {
	case core.OpLog, core.OpSqrt:
		return 0.2, 3, 0
	case core.OpTan:
		return -1.2, 1.2, 0
	case core.OpRecip, core.OpAbs, core.OpSign:
		return -2, 2, 0.1
	case core.OpLog1p:
		return -0.8, 3, 0
	case core.OpFloor, core.OpCeil:
		return 0.1, 0.9, 0
	}
	return -2, 2, 0
}

// TestUnaryOps checks every float unary operation against finite differences (VJP of a
// [5]-array result with a random cotangent, plus all cross-pipeline checks), and float32
// gradients against float64 ones.
func TestUnaryOps(t *testing.T) {
	for _, op := range core.UnOps() {
		if op == core.OpNot || op == core.OpStopGrad { // not float; zero derivative by definition (TestStopGrad)
			continue
		}
		t.Run(op.String(), func(t *testing.T) {
			mk := func(dt core.Dtype) *core.Program {
				var b core.Builder
				x := b.Var("x", core.Type{Shape: core.Shape{5}, Dtype: dt})
				return mustProg(t, &b, []*core.Var{x}, b.Unary(op, x))
			}
			lo, hi, minAbs := unaryDomain(op)
			rng := rand.New(rand.NewSource(int64(op)))
			p := mk(core.Float64)
			args := randomArgs(rng, p, lo, hi, minAbs)
			g := checkGradient(t, op.String(), p, args, checkOpts{skipBOT: true})
			checkF32(t, op.String(), mk(core.Float32), args, g)
		})
	}
}

// binaryDomains gives the sampling intervals of the two operands.
func binaryDomain(op core.BinOp) (lo, hi float64) {
	if op == core.OpPow {
		return 0.3, 2
	}
	return -2, 2
}

func TestBinaryOps(t *testing.T) {
	for _, op := range core.BinOps() {
		if op.Facts().Deriv.Kind == core.NoDeriv { // not float: comparisons, quot, rem, and, or
			continue
		}
		t.Run(op.Word(), func(t *testing.T) {
			mk := func(dt core.Dtype) *core.Program {
				var b core.Builder
				x := b.Var("x", core.Type{Shape: core.Shape{6}, Dtype: dt})
				y := b.Var("y", core.Type{Shape: core.Shape{6}, Dtype: dt})
				return mustProg(t, &b, []*core.Var{x, y}, b.Binary(op, x, y))
			}
			lo, hi := binaryDomain(op)
			rng := rand.New(rand.NewSource(int64(op) + 100))
			p := mk(core.Float64)
			args := randomArgs(rng, p, lo, hi, 0.1)
			g := checkGradient(t, op.Word(), p, args, checkOpts{skipBOT: true})
			checkF32(t, op.Word(), mk(core.Float32), args, g)
			// Same operand twice (x op x) exercises the sharing of one Delta by both factors.
			var b core.Builder
			x := b.Var("x", coretest.F64(6))
			p2 := mustProg(t, &b, []*core.Var{x}, b.Binary(op, x, x))
			checkGradient(t, op.Word()+" self", p2, map[string]*value{"x": args["x"]}, checkOpts{noFD: op == core.OpMax || op == core.OpMin})
		})
	}
}

// checkF32 differentiates the float32 program p32 at args rounded to float32 and compares the
// gradients with the float64 ones (g64) to 1e-4 relative.
func checkF32(t *testing.T, name string, p32 *core.Program, args map[string]*value, g64 map[string][]float64) {
	t.Helper()
	a32 := map[string]*value{}
	for k, v := range args {
		w := newValue(core.Type{Shape: v.typ.Shape, Dtype: core.Float32})
		copy(w.f, v.f)
		w.round()
		a32[k] = w
	}
	r, err := evalPrimal(p32, a32)
	if err != nil {
		t.Fatal(err)
	}
	var art *Artifact
	if len(r.typ.Shape) == 0 {
		art, err = Grad(p32)
	} else {
		art, err = VJP(p32)
		// the same cotangent as checkGradient used
		rng := rand.New(rand.NewSource(int64(len(name))*7919 + 17))
		d := newValue(r.typ)
		for k := range d.f {
			d.f[k] = rng.Float64()*2 - 1
		}
		d.round()
		a32[DretName] = d
	}
	if err != nil {
		t.Fatalf("%s f32: %v", name, err)
	}
	for _, w := range art.Wrt() {
		if art.Program().Param(w).Type().Dtype != core.Float32 {
			t.Fatalf("%s: parameter %s is not f32", name, w)
		}
	}
	_, g := runArtifact(t, art, a32)
	for w, want := range g64 {
		for k := range want {
			if relErr(g[w][k], want[k]) > 1e-4 {
				t.Errorf("%s: f32 gradient d/d%s[%d] = %v, f64 gives %v", name, w, k, g[w][k], want[k])
			}
		}
	}
}

// TestConstructs checks the derivative of every array construct (and lets, conds, casts and
// discrete subterms) against finite differences and the other pipelines.
func TestConstructs(t *testing.T) {
	type tc struct {
		name  string
		build func(b *core.Builder) ([]*core.Var, core.Term)
		noFD  bool
	}
	i64 := core.Scalar(core.Int64)
	cases := []tc{
		{"index", func(b *core.Builder) ([]*core.Var, core.Term) {
			x, k := b.Var("x", coretest.F64(3, 4)), b.Var("k", i64)
			return []*core.Var{x, k}, b.Index(x, b.Binary(core.OpAdd, k, core.ScalarI(1)))
		}, false},
		{"index out of bounds", func(b *core.Builder) ([]*core.Var, core.Term) {
			x := b.Var("x", coretest.F64(3, 4))
			return []*core.Var{x}, b.Add(b.Index(x, core.ScalarI(7)), b.Index(x, core.ScalarI(2)))
		}, false},
		{"index scalar", func(b *core.Builder) ([]*core.Var, core.Term) {
			x := b.Var("x", coretest.F64(3, 4))
			return []*core.Var{x}, b.Index(x, core.ScalarI(2), core.ScalarI(1))
		}, false},
		{"sumOuter", func(b *core.Builder) ([]*core.Var, core.Term) {
			x := b.Var("x", coretest.F64(3, 4))
			return []*core.Var{x}, b.SumOuter(b.Mul(x, x))
		}, false},
		{"gather transpose", func(b *core.Builder) ([]*core.Var, core.Term) {
			x := b.Var("x", coretest.F64(3, 4))
			i, j := b.Var("i", i64), b.Var("j", i64)
			return []*core.Var{x}, b.Gather(core.Shape{4, 3}, b.Mul(x, x), b.IndexFn([]*core.Var{i, j}, j, i))
		}, false},
		{"gather repeated", func(b *core.Builder) ([]*core.Var, core.Term) {
			x := b.Var("x", coretest.F64(5, 2))
			i := b.Var("i", i64)
			return []*core.Var{x}, b.Gather(core.Shape{7, 2}, x, b.IndexFn([]*core.Var{i}, b.Binary(core.OpQuot, i, core.ScalarI(2))))
		}, false},
		{"gather data-dependent", func(b *core.Builder) ([]*core.Var, core.Term) {
			x, k := b.Var("x", coretest.F64(5)), b.Var("k", core.Type{Shape: core.Shape{3}, Dtype: core.Int64})
			i := b.Var("i", i64)
			return []*core.Var{x, k}, b.Gather(core.Shape{3}, b.Unary(core.OpSin, x), b.IndexFn([]*core.Var{i}, b.Index(k, i)))
		}, false},
		{"scatter collisions", func(b *core.Builder) ([]*core.Var, core.Term) {
			x := b.Var("x", coretest.F64(9))
			i := b.Var("i", i64)
			return []*core.Var{x}, b.Scatter(core.Shape{4}, b.Mul(x, x), b.IndexFn([]*core.Var{i}, b.Binary(core.OpQuot, i, core.ScalarI(2))))
		}, false},
		{"fromVector", func(b *core.Builder) ([]*core.Var, core.Term) {
			x := b.Var("x", coretest.F64(3))
			el := func(k int64) core.Term { return b.Index(x, core.ScalarI(k)) }
			return []*core.Var{x}, b.FromVector(b.Mul(el(0), el(1)), b.Unary(core.OpSin, el(2)), core.ScalarF(core.Float64, 3), el(0))
		}, false},
		{"replicate", func(b *core.Builder) ([]*core.Var, core.Term) {
			x := b.Var("x", coretest.F64(3))
			return []*core.Var{x}, b.Mul(b.Replicate(2, x), b.Replicate(2, b.Unary(core.OpExp, x)))
		}, false},
		{"transpose", func(b *core.Builder) ([]*core.Var, core.Term) {
			x := b.Var("x", coretest.F64(2, 3, 4))
			return []*core.Var{x}, b.Transpose([]int{2, 0, 1}, b.Unary(core.OpTanh, x))
		}, false},
		{"transpose partial", func(b *core.Builder) ([]*core.Var, core.Term) {
			x := b.Var("x", coretest.F64(2, 3, 4))
			return []*core.Var{x}, b.Transpose([]int{1, 0}, b.Mul(x, x))
		}, false},
		{"reshape", func(b *core.Builder) ([]*core.Var, core.Term) {
			x := b.Var("x", coretest.F64(2, 6))
			return []*core.Var{x}, b.Reshape(core.Shape{3, 4}, b.Mul(x, b.Unary(core.OpSin, x)))
		}, false},
		{"matmul", func(b *core.Builder) ([]*core.Var, core.Term) {
			x, y := b.Var("x", coretest.F64(3, 4)), b.Var("y", coretest.F64(4, 2))
			return []*core.Var{x, y}, b.MatMul(b.Unary(core.OpTanh, x), y)
		}, false},
		{"matmul self", func(b *core.Builder) ([]*core.Var, core.Term) {
			x := b.Var("x", coretest.F64(3, 3))
			return []*core.Var{x}, b.MatMul(x, x)
		}, false},
		{"cond then", func(b *core.Builder) ([]*core.Var, core.Term) {
			x, k := b.Var("x", coretest.F64(3)), b.Var("k", i64)
			return []*core.Var{x, k}, b.Cond(b.Binary(core.OpGe, k, core.ScalarI(0)), b.Unary(core.OpSin, x), b.Mul(x, x))
		}, false},
		{"cond float test", func(b *core.Builder) ([]*core.Var, core.Term) {
			x := b.Var("x", coretest.F64(3))
			s := b.SumOuter(x)
			return []*core.Var{x}, b.Cond(b.Binary(core.OpLt, s, core.ScalarF(core.Float64, 100)), b.Mul(x, x), x)
		}, false},
		{"let sharing", func(b *core.Builder) ([]*core.Var, core.Term) {
			x := b.Var("x", coretest.F64(3))
			y, z := b.Var("y", coretest.F64(3)), b.Var("z", coretest.F64(3))
			return []*core.Var{x}, b.Let(y, b.Mul(x, x), b.Let(z, b.Add(y, b.Unary(core.OpSin, y)), b.Mul(z, b.Add(z, y))))
		}, false},
		{"nested let", func(b *core.Builder) ([]*core.Var, core.Term) {
			x := b.Var("x", coretest.F64(3))
			y := b.Var("y", coretest.F64(3))
			return []*core.Var{x}, b.Unary(core.OpExp, b.Let(y, b.Unary(core.OpSin, x), b.Mul(y, y)))
		}, false},
		{"discrete subterms", func(b *core.Builder) ([]*core.Var, core.Term) {
			x, k := b.Var("x", coretest.F64(4)), b.Var("k", i64)
			m := b.Cast(core.Float64, b.Binary(core.OpGt, x, b.Replicate(4, core.ScalarF(core.Float64, 0.5))))
			c := b.Replicate(4, b.Cast(core.Float64, b.Binary(core.OpAdd, k, b.ArgmaxOuter(x))))
			fl := b.Cast(core.Float64, b.Cast(core.Int64, b.Mul(x, x)))
			return []*core.Var{x, k}, b.Add(b.Mul(x, b.Add(m, c)), fl)
		}, true},
		{"cast f32 inside", func(b *core.Builder) ([]*core.Var, core.Term) {
			x := b.Var("x", coretest.F64(3))
			return []*core.Var{x}, b.Cast(core.Float64, b.Unary(core.OpExp, b.Cast(core.Float32, x)))
		}, true},
		{"build1 discrete", func(b *core.Builder) ([]*core.Var, core.Term) {
			x := b.Var("x", coretest.F64(4))
			i := b.Var("i", i64)
			idx := b.Build1(4, i, b.Binary(core.OpSub, core.ScalarI(3), i))
			j := b.Var("j", i64)
			return []*core.Var{x}, b.Gather(core.Shape{4}, x, b.IndexFn([]*core.Var{j}, b.Index(idx, j)))
		}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var b core.Builder
			params, body := c.build(&b)
			p := mustProg(t, &b, params, body)
			rng := rand.New(rand.NewSource(int64(len(c.name))))
			args := randomArgs(rng, p, -1.5, 1.5, 0.05)
			o := checkOpts{skipBOT: true, noFD: c.noFD}
			if strings.Contains(c.name, "f32") {
				o.dotTol = 1e-6 // float32 intermediates
			}
			g := checkGradient(t, c.name, p, args, o)
			if c.name == "discrete subterms" {
				// d/dx (x*(m+c) + fl) = m + c exactly (fl, m, c piecewise constant).
				x := args["x"].f
				am := 0
				for k := range x {
					if x[k] > x[am] {
						am = k
					}
				}
				for k := range x {
					want := float64(args["k"].i[0] + int64(am))
					if x[k] > 0.5 {
						want++
					}
					if g["x"][k] != want {
						t.Errorf("discrete: d/dx[%d] = %v, want %v", k, g["x"][k], want)
					}
				}
			}
		})
	}
}

// TestCastGradient: the gradient through f64 -> f32 -> f64 casts is the f32 computation's.
func TestCastGradient(t *testing.T) {
	var b core.Builder
	x, y := b.Var("x", coretest.F64(3)), b.Var("y", coretest.F32(3))
	body := b.SumOuter(b.Mul(b.Cast(core.Float64, b.Mul(b.Cast(core.Float32, x), y)), x))
	p := mustProg(t, &b, []*core.Var{x, y}, body)
	args := map[string]*value{"x": vals(coretest.F64(3), 0.3, -1.25, 2), "y": vals(coretest.F32(3), 1.5, 0.5, -2)}
	g := checkGradient(t, "cast", p, args, checkOpts{noFD: true, dotTol: 1e-6})
	for k := 0; k < 3; k++ {
		xv, yv := args["x"].f[k], args["y"].f[k]
		// f = sum(coretest.F64(coretest.F32(x)*y) * x): df/dx = 2*x*y (up to f32 rounding), df/dy = x*coretest.F32(x).
		if relErr(g["x"][k], 2*xv*yv) > 1e-6 {
			t.Errorf("d/dx[%d] = %v, want %v", k, g["x"][k], 2*xv*yv)
		}
		if relErr(g["y"][k], float64(float32(xv*float64(float32(xv))))) > 1e-6 {
			t.Errorf("d/dy[%d] = %v, want %v", k, g["y"][k], xv*xv)
		}
	}
	a, _ := Grad(p)
	if ty := a.Program().Param("y").Type(); ty.Dtype != core.Float32 {
		t.Errorf("y has type %v", ty)
	}
}

// TestCondUntakenNaN: a NaN in the branch not taken — its primal value or its local
// derivative — does not poison the gradient (the "double where" problem).
func TestCondUntakenNaN(t *testing.T) {
	cases := []struct {
		name, src string
		x         float64
		wantV     float64
		wantG     float64
	}{
		// sqrt x and sqrt' x are NaN at x = -4; the taken branch is y*y (y = 3).
		{"sqrt", `fn (x : [] f64, y : [] f64) => cond (x > 0.0) (sqrt x + y) (y * y)`, -4, 9, 0},
		// log' 0 = inf in the untaken branch; nested conds.
		{"nested", `fn (x : [] f64, y : [] f64) => cond (y > 0.0) (cond (x > 0.0) (log x * y) (x * y)) (exp x)`, 0, 0, 3},
		// the else branch is the untaken one.
		{"else", `fn (x : [] f64, y : [] f64) => cond (x <= 0.0) (x * y) (sqrt x * log x)`, -2, -6, 3},
		// let-bound inside the branch, used twice there.
		{"let", `fn (x : [] f64, y : [] f64) => cond (x > 0.0) (let s = sqrt x in s * s + y) y`, -1, 3, 0},
	}
	for _, c := range cases {
		p := parse(t, c.src)
		args := map[string]*value{"x": vals(coretest.F64(), c.x), "y": vals(coretest.F64(), 3)}
		a := must(t)(Grad(p))
		v, g := runArtifact(t, a, args)
		if v[0] != c.wantV || g["x"][0] != c.wantG {
			t.Errorf("%s: value %v, d/dx %v; want %v, %v\n%s", c.name, v, g["x"], c.wantV, c.wantG, a)
		}
		// The concrete reverse pass agrees.
		dr, err := differentiate(p, Options{}, false, "test")
		if err != nil {
			t.Fatal(err)
		}
		_, cg, _, err := concreteValues(dr, args)
		if err != nil {
			t.Fatal(err)
		}
		if cg["x"].f[0] != c.wantG {
			t.Errorf("%s: concrete d/dx %v, want %v", c.name, cg["x"].f, c.wantG)
		}
	}
}

// TestPowZeroBase: d/dx x^y at x = 0 and d/dy x^y at x = 0 follow the documented conventions.
func TestPowZeroBase(t *testing.T) {
	var b core.Builder
	x, y := b.Var("x", coretest.F64(4)), b.Var("y", coretest.F64(4))
	p := mustProg(t, &b, []*core.Var{x, y}, b.SumOuter(b.Binary(core.OpPow, x, y)))
	a := must(t)(Grad(p))
	_, g := runArtifact(t, a, map[string]*value{"x": vals(coretest.F64(4), 0, 0, 0, 2), "y": vals(coretest.F64(4), 0, 1, 2, 0)})
	// x: y*x^(y-1): y=0 -> 0 (not 0*inf); y=1 -> 1; y=2 -> 0; at x=2,y=0 -> 0.
	wantX := []float64{0, 1, 0, 0}
	// y: x^y log x: x^y=1 at 0^0 -> 1*log 0 = -inf (x^y != 0); 0 where x^y == 0; log 2 at x=2,y=0.
	wantY := []float64{math.Inf(-1), 0, 0, math.Log(2)}
	if _, ok := closeSlices(g["x"], wantX, 0); !ok {
		t.Errorf("d/dx = %v, want %v", g["x"], wantX)
	}
	for k := range wantY {
		if g["y"][k] != wantY[k] {
			t.Errorf("d/dy = %v, want %v", g["y"], wantY)
			break
		}
	}
}

// TestAbsSignAtZero: abs'(0) = 0, sign' = 0.
func TestAbsSignAtZero(t *testing.T) {
	var b core.Builder
	x := b.Var("x", coretest.F64(3))
	p := mustProg(t, &b, []*core.Var{x}, b.SumOuter(b.Add(b.Unary(core.OpAbs, x), b.Unary(core.OpSign, x))))
	a := must(t)(Grad(p))
	_, g := runArtifact(t, a, map[string]*value{"x": vals(coretest.F64(3), -2, 0, 3)})
	if _, ok := closeSlices(g["x"], []float64{-1, 0, 1}, 0); !ok {
		t.Errorf("gradient %v, want [-1 0 1]", g["x"])
	}
}

func TestWrtHandling(t *testing.T) {
	var b core.Builder
	x, y, k := b.Var("x", coretest.F64(2)), b.Var("y", coretest.F32(3)), b.Var("k", core.Scalar(core.Int64))
	body := b.SumOuter(b.Mul(x, x))
	p := mustProg(t, &b, []*core.Var{x, y, k}, body)
	a := must(t)(Grad(p))
	if w := a.Wrt(); len(w) != 2 || w[0] != "x" || w[1] != "y" {
		t.Fatalf("default wrt %v, want [x y]", w)
	}
	args := map[string]*value{"x": vals(coretest.F64(2), 1, 2), "y": vals(coretest.F32(3), 1, 2, 3), "k": newValue(core.Scalar(core.Int64))}
	_, g := runArtifact(t, a, args)
	if _, ok := closeSlices(g["y"], []float64{0, 0, 0}, 0); !ok {
		t.Errorf("unused parameter gradient %v, want zeros", g["y"])
	}
	if _, ok := closeSlices(g["x"], []float64{2, 4}, 0); !ok {
		t.Errorf("d/dx %v", g["x"])
	}
	if a := must(t)(Grad(p, "y")); len(a.Wrt()) != 1 {
		t.Fatalf("wrt y: %v", a.Wrt())
	}
	if _, err := Grad(p, "k"); err == nil || !strings.Contains(err.Error(), "k") {
		t.Errorf("wrt an integer parameter: error %v, want one naming k", err)
	}
	if _, err := Grad(p, "nope"); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("wrt an unknown name: error %v", err)
	}
	q := mustProg(t, &b, []*core.Var{x}, b.Mul(x, x))
	if _, err := Grad(q); err == nil || !strings.Contains(err.Error(), "VJP") {
		t.Errorf("Grad of an array result: error %v", err)
	}
	r := mustProg(t, &b, []*core.Var{k}, b.Binary(core.OpAdd, k, k))
	if _, err := VJP(r); err == nil {
		t.Errorf("VJP of an integer result succeeded")
	}
	d := b.Var(DretName, coretest.F64(2))
	s := mustProg(t, &b, []*core.Var{d}, b.Mul(d, d))
	if _, err := VJP(s); err == nil {
		t.Errorf("VJP with a parameter named dret succeeded")
	}
}

// TestShadowedLets: duplicate and shadowing let names are renamed before hoisting.
func TestShadowedLets(t *testing.T) {
	var b core.Builder
	x := b.Var("x", coretest.F64(3))
	y := b.Var("y", coretest.F64(3))
	yy := b.Var("y", coretest.F64(3))
	dret := b.Var("dret", coretest.F64(3))
	inner := b.Let(yy, b.Unary(core.OpSin, y), b.Mul(yy, y)) // inner y shadows outer y
	other := b.Let(y, b.Unary(core.OpExp, x), y)             // a sibling let with the same name
	body := b.Let(dret, b.Mul(x, x), b.Let(y, b.Mul(x, dret), b.Add(inner, b.Mul(other, y))))
	p := mustProg(t, &b, []*core.Var{x}, body)
	rng := rand.New(rand.NewSource(5))
	checkGradient(t, "shadow", p, randomArgs(rng, p, -1, 1, 0), checkOpts{skipBOT: true})
}

// TestEmptyArrays: programs over arrays with a zero dimension differentiate and run (the
// gradients are empty or zero).
func TestEmptyArrays(t *testing.T) {
	for _, src := range []string{
		`fn (x : [0] f64, y : [] f64) => sumOuter (x * replicate 0 y) + y`,
		`fn (x : [0,3] f64, w : [3,2] f64) => sumOuter (sumOuter (matmul x w))`,
		`fn (x : [4,0] f64, y : [2] f64) => sumOuter (sumOuter (tr [1,0] (exp x))) + sumOuter (gather [0] y (\[i] -> [i]))`,
		`fn (x : [3] f64) => sumOuter (scatter [0] x (\[i] -> [i])) + index x [1]`,
	} {
		p := parse(t, src)
		rng := rand.New(rand.NewSource(1))
		g := checkGradient(t, src, p, randomArgs(rng, p, -1, 1, 0), checkOpts{})
		for name, v := range g {
			if len(v) != p.Param(name).Type().Shape.Size() {
				t.Errorf("%s: gradient of %s has %d elements", src, name, len(v))
			}
		}
	}
}

// TestLogSumExpStable: the max-shifted logsumexp has gradient softmax x, finite at large
// inputs and with a -inf input (anchors.md: no NaN gradients where the value is finite).
func TestLogSumExpStable(t *testing.T) {
	p := parse(t, `fn (x : [3] f64) => let m = index x [argmaxOuter x] in m + log (sumOuter (exp (x - replicate 3 m)))`)
	a := must(t)(Grad(p))
	for _, in := range [][]float64{{1000, 1001, 999}, {0, math.Inf(-1), 1}, {-3, 2, 0.5}} {
		v, g := runArtifact(t, a, map[string]*value{"x": vals(coretest.F64(3), in...)})
		mx := math.Max(in[0], math.Max(in[1], in[2]))
		s := 0.0
		for _, x := range in {
			s += math.Exp(x - mx)
		}
		if relErr(v[0], mx+math.Log(s)) > 1e-14 {
			t.Errorf("lse %v = %v", in, v)
		}
		for k, x := range in {
			if want := math.Exp(x-mx) / s; relErr(g["x"][k], want) > 1e-14 {
				t.Errorf("lse %v: gradient %v, want softmax (component %d: %v)", in, g["x"], k, want)
			}
		}
	}
}

// TestStopGrad: stopgrad is the identity in value and has derivative zero: the gradient of
// Σ x ⊙ stopgrad(x) is x (hand derivation: d/dx_i x_i·c_i = c_i with c = x held), not 2x.
func TestStopGrad(t *testing.T) {
	p, err := core.ParseProgram("fn (x : [3] f64) => sumOuter (x * stopgrad x)")
	if err != nil {
		t.Fatal(err)
	}
	a := must(t)(Grad(p))
	x := tensor.New(tensor.WithShape(3), tensor.WithBacking([]float64{1.5, -2, 0.25}))
	val, grads, err := a.Run(map[string]*tensor.Dense{"x": x})
	if err != nil {
		t.Fatal(err)
	}
	if v := val.Data().(float64); v != 1.5*1.5+4+0.0625 {
		t.Errorf("value %v, want %v", v, 1.5*1.5+4+0.0625)
	}
	if g := grads["x"].Float64s(); g[0] != 1.5 || g[1] != -2 || g[2] != 0.25 {
		t.Errorf("gradient %v, want x = [1.5 -2 0.25]", g)
	}
}
