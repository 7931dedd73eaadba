package bulkad_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/bulkad/bulkad"
	"github.com/bulkad/bulkad/examples/models"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Options choose the granularity and the device per call, whatever the environment says.
func ExampleOptions() {
	g := gorgonia.NewGraph()
	x := gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(3), gorgonia.WithName("x"),
		gorgonia.WithValue(tensor.New(tensor.WithShape(3), tensor.WithBacking([]float64{1, 2, 3}))))
	cost := gorgonia.Must(gorgonia.Sum(gorgonia.Must(gorgonia.Square(x))))
	grads, err := bulkad.Options{CPU: true, Raise: bulkad.RaiseOps}.Grad(cost, x)
	if err != nil {
		fmt.Println(err)
		return
	}
	vm := gorgonia.NewTapeMachine(g)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(grads[0].Value().Data())
	// Output: [2 4 6]
}

// TestOptionsRaise: Options.Raise overrides BULKAD_RAISE both ways, and a bad mode is an error
// that leaves the graph unchanged.
func TestOptionsRaise(t *testing.T) {
	build := func() *models.Model {
		m, err := models.MLP(gorgonia.Float64, 4, []int{6, 5, 3}, 1)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	added := func(env string, o bulkad.Options) int {
		t.Setenv(bulkad.RaiseEnv, env)
		m := build()
		n := len(m.G.AllNodes())
		if _, err := o.Grad(m.Cost, m.Wrt...); err != nil {
			t.Fatal(err)
		}
		return len(m.G.AllNodes()) - n
	}
	plan := added("ops", bulkad.Options{CPU: true, Raise: bulkad.RaisePlan})
	ops := added("plan", bulkad.Options{CPU: true, Raise: bulkad.RaiseOps})
	envOps := added("ops", bulkad.Options{CPU: true})
	if plan >= ops || envOps != ops {
		t.Errorf("nodes added: RaisePlan %d, RaiseOps %d, BULKAD_RAISE=ops %d; want plan < ops = env", plan, ops, envOps)
	}
	m := build()
	n := len(m.G.AllNodes())
	_, err := bulkad.Options{Raise: "fused"}.Grad(m.Cost, m.Wrt...)
	if err == nil || !strings.Contains(err.Error(), `"fused"`) {
		t.Errorf("Options{Raise: \"fused\"}: error %v, want one naming the mode", err)
	}
	if len(m.G.AllNodes()) != n {
		t.Errorf("the failed Grad added %d nodes", len(m.G.AllNodes())-n)
	}
}
