package ad

import (
	"testing"

	"github.com/bulkad/bulkad/core"
)

// foo(x,y,z) = let w = x * sin y in atan2 z w + z * w (horde-ad's foo; anchors.md).
func TestAnchorFoo(t *testing.T) {
	var b core.Builder
	x, y, z := b.Var("x", f64()), b.Var("y", f64()), b.Var("z", f64())
	w := b.Var("w", f64())
	body := b.Let(w, b.Mul(x, b.Unary(core.OpSin, y)),
		b.Add(b.Binary(core.OpAtan2, z, w), b.Mul(z, w)))
	p := mustProg(t, &b, []*core.Var{x, y, z}, body)
	a, err := Grad(p)
	if err != nil {
		t.Fatal(err)
	}
	args := map[string]*value{"x": vals(f64(), 1.1), "y": vals(f64(), 2.2), "z": vals(f64(), 3.3)}
	_, g := runArtifact(t, a, args)
	want := map[string]float64{"x": 2.4396285219055063, "y": -1.953374825727421, "z": 0.9654825811012627}
	for name, w := range want {
		if relErr(g[name][0], w) > 1e-12 {
			t.Errorf("d/d%s = %v, want %v\n%s", name, g[name][0], w, a)
		}
	}
}
