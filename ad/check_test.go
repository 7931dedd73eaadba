package ad

import (
	"math/rand"
	"testing"

	"github.com/bulkad/bulkad/bot"
	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/internal/testutil"
)

// checkOpts tune checkGradient.
type checkOpts struct {
	fdTol    float64 // tolerance against finite differences (default 1e-6)
	noFD     bool    // skip the finite-difference comparison (for non-smooth points)
	noJVP    bool
	dotTol   float64 // tolerance of the JVP/VJP identity (default 1e-10)
	crossTol float64 // tolerance between pipelines and against the primal value (default 1e-12)
	skipBOT  bool    // also compare the artifact built with SkipBOT
}

// checkGradient differentiates p (VJP with a random cotangent when the result is not a
// scalar) and checks, at args:
//   - the artifact against central finite differences (fdTol);
//   - the artifact, the unsimplified artifact, the concrete reverse pass of Fig. 17 and (if
//     asked) the SkipBOT artifact against each other to 1e-12;
//   - <dt, JVP(ds)> == <VJP(dt), ds> to 1e-10 for a random tangent ds.
//
// It returns the gradients of the artifact.
func checkGradient(t *testing.T, name string, p *core.Program, args map[string]*value, o checkOpts) map[string][]float64 {
	t.Helper()
	if o.fdTol == 0 {
		o.fdTol = 1e-6
	}
	if o.crossTol == 0 {
		o.crossTol = 1e-12
	}
	rng := rand.New(rand.NewSource(int64(len(name))*7919 + 17))
	r0, err := evalPrimal(p, args)
	if err != nil {
		t.Fatalf("%s: eval: %v", name, err)
	}
	vjp := len(r0.typ.Shape) != 0
	var dret *value
	argsV := map[string]*value{}
	for k, v := range args {
		argsV[k] = v
	}
	if vjp {
		dret = newValue(r0.typ)
		for k := range dret.f {
			dret.f[k] = rng.Float64()*2 - 1
		}
		dret.round()
		argsV[DretName] = dret
	}
	build := func(o Options) *Artifact {
		var a *Artifact
		var err error
		if vjp {
			a, err = VJPWith(p, o)
		} else {
			a, err = GradWith(p, o)
		}
		if err != nil {
			t.Fatalf("%s: differentiate %+v: %v\nprogram: %s", name, o, err, p)
		}
		return a
	}
	art := build(Options{})
	if err := core.Check(art.Program()); err != nil {
		t.Fatalf("%s: artifact does not check: %v\n%s", name, err, art)
	}
	// The differentiation preserves the BOT normal form of its input (checked on the
	// unsimplified artifact: core.Simplify may inline a let into an index position).
	if q, err := bot.Vectorize(p); err == nil && bot.CheckNormalForm(q.Body) == nil {
		raw := build(Options{NoSimplify: true})
		if err := bot.CheckNormalForm(raw.Program().Body); err != nil {
			t.Errorf("%s: unsimplified artifact of a BOT-normal program is not BOT-normal: %v\n%s", name, err, raw)
		}
	}
	core.PostOrder(art.Program().Body, func(n core.Term) {
		if _, ok := n.(*core.Share); ok {
			t.Errorf("%s: artifact contains share: %s", name, art)
		}
	})
	val, grads := runArtifact(t, art, argsV)
	if k, ok := closeSlices(val, r0.f, o.crossTol); !ok {
		t.Errorf("%s: artifact value differs at %d: %v vs %v", name, k, val, r0.f)
	}
	wrt := art.Wrt()
	if !o.noFD {
		fd := fdGrad(t, p, args, dret, wrt)
		for _, w := range wrt {
			if k, ok := closeSlices(grads[w], fd[w], o.fdTol); !ok {
				t.Errorf("%s: d/d%s differs from finite differences at %d:\n got %v\nwant %v\nprogram: %s\nartifact: %s", name, w, k, grads[w], fd[w], p, art)
			}
		}
	}
	// Cross-pipeline agreement.
	others := map[string]*Artifact{"unsimplified": build(Options{NoSimplify: true})}
	if o.skipBOT {
		others["skipBOT"] = build(Options{SkipBOT: true})
	}
	for _, on := range testutil.SortedKeys(others) {
		_, g2 := runArtifact(t, others[on], argsV)
		for _, w := range wrt {
			if k, ok := closeSlices(grads[w], g2[w], o.crossTol); !ok {
				t.Errorf("%s: %s artifact differs for %s at %d: %v vs %v", name, on, w, k, grads[w], g2[w])
			}
		}
	}
	dr, err := differentiate(p, Options{}, vjp, "test")
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	_, cg, st, err := concreteValues(dr, argsV)
	if err != nil {
		t.Fatalf("%s: concrete reverse pass: %v", name, err)
	}
	if st.SharesVisited != st.ShareIDs {
		t.Errorf("%s: reverse pass visited %d shares for %d IDs", name, st.SharesVisited, st.ShareIDs)
	}
	for _, w := range wrt {
		if k, ok := closeSlices(grads[w], cg[w].f, o.crossTol); !ok {
			t.Errorf("%s: concrete reverse pass differs for %s at %d: %v vs %v", name, w, k, grads[w], cg[w].f)
		}
	}
	if !o.noJVP {
		if o.dotTol == 0 {
			o.dotTol = 1e-10
		}
		checkJVPDot(t, name, p, args, wrt, dret, grads, rng, o.dotTol)
	}
	return grads
}

// checkJVPDot checks <dt, JVP(ds)> == <VJP(dt), ds> (dt = dret, or 1 for a scalar result).
func checkJVPDot(t *testing.T, name string, p *core.Program, args map[string]*value, wrt []string, dret *value, grads map[string][]float64, rng *rand.Rand, tol float64) {
	t.Helper()
	jp, err := JVP(p, wrt...)
	if err != nil {
		t.Fatalf("%s: jvp: %v", name, err)
	}
	jargs := map[string]*value{}
	for k, v := range args {
		jargs[k] = v
	}
	rhs := 0.0
	for _, w := range wrt {
		ds := newValue(args[w].typ)
		for k := range ds.f {
			ds.f[k] = rng.Float64()*2 - 1
		}
		ds.round()
		jargs[TangentPrefix+w] = ds
		for k := range ds.f {
			rhs += grads[w][k] * ds.f[k]
		}
	}
	outs, err := evalProgram(jp, jargs)
	if err != nil {
		t.Fatalf("%s: jvp eval: %v\n%s", name, err, jp)
	}
	lhs := 0.0
	for k, x := range outs[1].f {
		c := 1.0
		if dret != nil {
			c = dret.f[k]
		}
		lhs += c * x
	}
	if relErr(lhs, rhs) > tol {
		t.Errorf("%s: <dt, jvp ds> = %v but <vjp dt, ds> = %v\njvp: %s", name, lhs, rhs, jp)
	}
}
