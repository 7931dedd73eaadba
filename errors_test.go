package bulkad_test

import (
	"strings"
	"testing"

	"github.com/bulkad/bulkad"
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
	x := G.NewVector(g, tensor.Float64, G.WithShape(3), G.WithName("x"),
		G.WithValue(tensor.New(tensor.WithShape(3), tensor.WithBacking([]float64{1, 2, 3}))))
	k := G.NewVector(g, tensor.Int, G.WithShape(3), G.WithName("k"))
	cost := G.Must(G.Sum(G.Must(G.Square(x))))
	cases := []struct {
		name, env, start, contains string
		run                        func() error
	}{
		{"nil cost", "", "bulkad: grad: cost node is nil", "", func() error { _, err := bulkad.Grad(nil, x); return err }},
		{"int wrt", "", "bulkad: grad: ", "", func() error { _, err := bulkad.Grad(cost, k); return err }},
		{"bad BULKAD_VULKAN", "bogus", "bulkad: grad: vulkan: ", "bogus", func() error { _, err := bulkad.Grad(cost, x); return err }},
		{"check nil cost", "", "bulkad: check: cost node is nil", "", func() error { _, err := bulkad.Check(nil, G.Nodes{x}); return err }},
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
