package bulkad_test

import (
	"strings"
	"testing"

	"github.com/bulkad/bulkad"
	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/gradcheck"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// prefixWords returns the leading one-word segments of an error message ("bulkad: grad: ad:
// …" gives bulkad, grad, ad).
func prefixWords(msg string) []string {
	var ws []string
	for {
		i := strings.Index(msg, ": ")
		if i <= 0 || strings.ContainsAny(msg[:i], " \n\"=") {
			return ws
		}
		ws = append(ws, msg[:i])
		msg = msg[i+2:]
	}
}

// TestErrorPrefixes: every layer names itself once (no "bulkad: grad: ad: grad:" or
// "bulkad: grad: bulkad: vulkan:"), and the message starts with the public operation.
func TestErrorPrefixes(t *testing.T) {
	g := G.NewGraph()
	x := vec64(g, "x", 1, 2, 3)
	k := G.NewVector(g, tensor.Int, G.WithShape(3), G.WithName("k"))
	cost := G.Must(G.Sum(G.Must(G.Square(x))))
	cases := []struct {
		name, env, start, contains string
		run                        func() error
	}{
		{"nil cost", "", "bulkad: grad: cost node is nil", "", func() error { _, err := bulkad.Grad(nil, x); return err }},
		{"int wrt", "", "bulkad: grad: ", "", func() error { _, err := bulkad.Grad(cost, k); return err }},
		{"bad BULKAD_VULKAN", "bogus", "bulkad: grad: vulkan: ", "bogus", func() error { _, err := bulkad.Grad(cost, x); return err }},
		{"check nil cost", "", "gradcheck: cost node is nil", "", func() error { _, err := gradcheck.Check(nil, G.Nodes{x}); return err }},
		{"differentiate no wrt", "", "bulkad: grad: no wrt nodes", "", func() error { _, err := bulkad.Differentiate(cost); return err }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv(bulkad.VulkanEnv, c.env)
			err := c.run()
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			t.Log(msg)
			if !strings.HasPrefix(msg, c.start) || !strings.Contains(msg, c.contains) {
				t.Errorf("error %q, want it to start with %q and contain %q", msg, c.start, c.contains)
			}
			seen := map[string]bool{}
			for _, w := range prefixWords(msg) {
				if seen[w] {
					t.Errorf("error %q names %q twice", msg, w)
				}
				seen[w] = true
			}
		})
	}
}

// TestGradArrayLimit: a graph whose gradient needs an array of 8 TB (the outer product of a
// vector of a million entries with itself, never evaluated) gives an error from Grad that
// names the array's size, instead of killing the process; the same process then
// differentiates a small graph.
func TestGradArrayLimit(t *testing.T) {
	t.Setenv(core.ArrayLimitEnv, "")
	g := G.NewGraph()
	const n = 1000000
	x := G.NewVector(g, tensor.Float64, G.WithShape(n), G.WithName("x"))
	col := G.Must(G.Reshape(x, tensor.Shape{n, 1}))
	row := G.Must(G.Reshape(x, tensor.Shape{1, n}))
	cost := G.Must(G.Sum(G.Must(G.Tanh(G.Must(G.Mul(col, row))))))
	_, err := bulkad.Grad(cost, x)
	if err == nil || !strings.Contains(err.Error(), "[1000000,1000000] f64 needs 7.3 TiB, above the array limit") {
		t.Fatalf("Grad: %v", err)
	}
	t.Log(err)
	// still alive
	g2 := G.NewGraph()
	w := vec64(g2, "w", 1, 2, 3)
	c2 := G.Must(G.Sum(G.Must(G.Square(w))))
	grads, err := bulkad.Grad(c2, w)
	if err != nil {
		t.Fatal(err)
	}
	runGraph(t, g2)
	if got := grads[0].Value().Data().([]float64); got[2] != 6 { // ∂/∂w Σw² = 2w
		t.Errorf("gradient %v, want [2 4 6]", got)
	}
}
