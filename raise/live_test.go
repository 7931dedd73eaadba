package raise

import (
	"fmt"
	"testing"

	"github.com/bulkad/bulkad/core"
	"gorgonia.org/gorgonia"
)

// TestLiveLets checks which top-level lets the liveness pass keeps, against hand-marked
// expectations.
func TestLiveLets(t *testing.T) {
	g := gorgonia.NewGraph()
	node := gorgonia.NewVector(g, gorgonia.Float64, gorgonia.WithShape(2), gorgonia.WithName("n"))
	cases := []struct {
		name  string
		src   string
		bound []string // lets bound to an existing node
		comps []int    // selected result components (nil: all)
		want  string
	}{
		{"all used", "fn (x : [2] f64) => let a = x + x in let b = a * a in b", nil, nil, "[true true]"},
		{"dead let", "fn (x : [2] f64) => let a = x + x in let b = x * x in a", nil, nil, "[true false]"},
		{"used only by a dead let", "fn (x : [2] f64) => let a = x + x in let b = a * a in let c = x - x in c", nil, nil, "[false false true]"},
		{"bound let hides its definition", "fn (x : [2] f64) => let a = x + x in let b = a * a in b", []string{"b"}, nil, "[false true]"},
		{"component selection", "fn (x : [2] f64) => let a = x + x in let b = x * x in (a, b)", nil, []int{1}, "[false true]"},
		{"shared subterm reached twice", "fn (x : [2] f64) => let a = x + x in let b = exp a in let c = b * b in (c, b + c)", nil, nil, "[true true true]"},
		{"inner let and index function", "fn (x : [2] f64) => let a = x + x in let b = gather [2] a (\\[i] -> [1 - i]) in let z = let y = b in y * y in z", nil, nil, "[true true true]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := core.ParseProgram(c.src)
			if err != nil {
				t.Fatal(err)
			}
			chain, body := core.LetChain(p.Body)
			results := core.Results(body)
			if c.comps != nil {
				sel := make([]core.Term, len(c.comps))
				for i, k := range c.comps {
					sel[i] = results[k]
				}
				results = sel
			}
			bind := map[string]*gorgonia.Node{}
			for _, b := range c.bound {
				bind[b] = node
			}
			needed, _ := liveLets(chain, results, func(name string) bool { return bind[name] != nil })
			if got := fmt.Sprint(needed); got != c.want {
				t.Errorf("needed %s, want %s", got, c.want)
			}
		})
	}
}
