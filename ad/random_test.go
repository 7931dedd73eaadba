package ad

import (
	"math/rand"
	"testing"

	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/core/coretest"
	"gorgonia.org/tensor"
)

func denseToValue(d *tensor.Dense, ty core.Type) *value {
	v := newValue(ty)
	switch x := d.Data().(type) {
	case []float64:
		copy(v.f, x)
	case float64:
		v.f[0] = x
	case []float32:
		for k, a := range x {
			v.f[k] = float64(a)
		}
	case float32:
		v.f[0] = float64(x)
	case []int64:
		copy(v.i, x)
	case int64:
		v.i[0] = x
	case []bool:
		copy(v.b, x)
	case bool:
		v.b[0] = x
	}
	return v
}

// TestRandomPrograms differentiates random smooth programs of the coretest generator (build1
// included, so through the BOT) and checks every gradient against finite differences, the
// concrete reverse pass, the unsimplified artifact and the JVP/VJP identity. Half of them have
// an array result (VJP). Float32 programs are checked against their float64 twin.
func TestRandomPrograms(t *testing.T) {
	n := 1000
	if testing.Short() {
		n = 200
	}
	failures, checked, mixed := 0, 0, 0
	for seed := int64(1); checked < n && failures < 5; seed++ {
		cfg := coretest.Config{Dtype: core.Float64, Smooth: true, ScalarResult: seed%2 == 0, MaxDepth: 5}
		p := coretest.RandomProgram(rand.New(rand.NewSource(seed)), cfg)
		dargs := coretest.RandomArgs(rand.New(rand.NewSource(seed+1e6)), p)
		args := map[string]*value{}
		for _, v := range p.Params {
			args[v.Name] = denseToValue(dargs[v.Name], v.Type())
		}
		o := checkOpts{}
		if hasFloat32(p.Body) {
			// Float32 intermediates (casts) make finite differences meaningless at 1e-6 and
			// the pipelines agree only to float32 precision.
			o = checkOpts{noFD: true, crossTol: 1e-5, dotTol: 1e-5}
			mixed++
		} else {
			checked++
		}
		o.skipBOT = !hasBuild1(p.Body) // the un-vectorised program can be differentiated directly
		ok := t.Run("", func(t *testing.T) {
			t.Logf("seed %d: %s", seed, p)
			checkGradient(t, "random", p, args, o)
		})
		if !ok {
			failures++
		}
	}
	t.Logf("%d float64 programs checked against finite differences, %d with float32 casts checked across pipelines", checked, mixed)
}

func hasBuild1(t core.Term) bool {
	found := false
	core.PostOrder(t, func(n core.Term) {
		if _, ok := n.(*core.Build1); ok {
			found = true
		}
	})
	return found
}

func hasFloat32(t core.Term) bool {
	found := false
	core.PostOrder(t, func(n core.Term) {
		if _, ok := n.(*core.Tuple); !ok && n.Type().Dtype == core.Float32 {
			found = true
		}
	})
	return found
}

// TestRandomProgramsF32: float32 gradients of random smooth programs match the float64 ones
// to 1e-4 relative (the same program built in both dtypes from the same seed).
func TestRandomProgramsF32(t *testing.T) {
	n := 200
	failures := 0
	for seed := int64(1); seed <= int64(n) && failures < 5; seed++ {
		mk := func(dt core.Dtype) *core.Program {
			return coretest.RandomProgram(rand.New(rand.NewSource(seed)), coretest.Config{Dtype: dt, Smooth: true, ScalarResult: true, MaxDepth: 4})
		}
		p64, p32 := mk(core.Float64), mk(core.Float32)
		dargs := coretest.RandomArgs(rand.New(rand.NewSource(seed+1e6)), p32)
		a64, a32 := map[string]*value{}, map[string]*value{}
		for _, v := range p32.Params {
			a32[v.Name] = denseToValue(dargs[v.Name], v.Type())
			ty := v.Type()
			if ty.Dtype == core.Float32 {
				ty.Dtype = core.Float64
			}
			w := newValue(ty)
			copy(w.f, a32[v.Name].f)
			copy(w.i, a32[v.Name].i)
			copy(w.b, a32[v.Name].b)
			a64[v.Name] = w
		}
		ok := t.Run("", func(t *testing.T) {
			g64, err := Grad(p64)
			if err != nil {
				t.Fatalf("seed %d: %v\n%s", seed, err, p64)
			}
			g32, err := Grad(p32)
			if err != nil {
				t.Fatalf("seed %d: %v\n%s", seed, err, p32)
			}
			_, r64 := runArtifact(t, g64, a64)
			_, r32 := runArtifact(t, g32, a32)
			for _, w := range g64.Wrt() {
				if k, ok := closeSlices(r32[w], r64[w], 1e-4); !ok {
					t.Errorf("seed %d: f32 d/d%s[%d] = %v, f64 %v\n%s", seed, w, k, r32[w], r64[w], p32)
				}
			}
		})
		if !ok {
			failures++
		}
	}
}

// TestRandomProgramsNonSmooth: random programs with every operation (kinks, comparisons,
// float conds, argmaxOuter of floats, float-to-int casts) differentiate, and the pipelines
// agree with each other and with the JVP (no finite differences: points may sit on kinks).
func TestRandomProgramsNonSmooth(t *testing.T) {
	n := 300
	failures := 0
	for seed := int64(1); seed <= int64(n) && failures < 5; seed++ {
		cfg := coretest.Config{Dtype: core.Float64, ScalarResult: seed%2 == 0, MaxDepth: 5}
		p := coretest.RandomProgram(rand.New(rand.NewSource(seed)), cfg)
		dargs := coretest.RandomArgs(rand.New(rand.NewSource(seed+2e6)), p)
		args := map[string]*value{}
		for _, v := range p.Params {
			args[v.Name] = denseToValue(dargs[v.Name], v.Type())
		}
		o := checkOpts{noFD: true, skipBOT: !hasBuild1(p.Body)}
		if hasFloat32(p.Body) {
			o.crossTol, o.dotTol = 1e-5, 1e-5
		}
		ok := t.Run("", func(t *testing.T) {
			t.Logf("seed %d: %s", seed, p)
			checkGradient(t, "nonsmooth", p, args, o)
		})
		if !ok {
			failures++
		}
	}
}

// TestRandomProgramsAnyDtype: random programs of either float dtype, smooth or not, scalar
// or array results, differentiate (VJP and JVP) without error and their artifacts run; the
// gradients have their parameters' dtypes.
func TestRandomProgramsAnyDtype(t *testing.T) {
	for seed := int64(1); seed <= 300; seed++ {
		cfg := coretest.Config{Smooth: seed%3 == 0, ScalarResult: seed%2 == 0}
		p := coretest.RandomProgram(rand.New(rand.NewSource(seed)), cfg)
		a, err := VJP(p)
		if err != nil {
			t.Fatalf("seed %d: vjp: %v\n%s", seed, err, p)
		}
		if _, err := JVP(p); err != nil {
			t.Fatalf("seed %d: jvp: %v\n%s", seed, err, p)
		}
		args := coretest.RandomArgs(rand.New(rand.NewSource(seed+3e6)), p)
		r := resultOf(p.Body).Type()
		args[DretName] = randomDense(rand.New(rand.NewSource(seed)), r, 1)
		_, grads, err := a.Run(args)
		if err != nil {
			t.Fatalf("seed %d: run: %v\n%s", seed, err, a)
		}
		for _, w := range a.Wrt() {
			if got, want := grads[w].Dtype().Name(), p.Param(w).Type().Dtype; (want == core.Float32) != (got == "float32") {
				t.Errorf("seed %d: gradient of %s has dtype %s, parameter %v", seed, w, got, want)
			}
		}
	}
}
