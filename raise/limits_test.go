package raise

import (
	"strings"
	"testing"

	"github.com/bulkad/bulkad/core"
	"gorgonia.org/gorgonia"
)

// TestRaiseArrayLimit checks that raising refuses, before adding any node, a program with an
// array above the limit (by default and by option), and that a negative limit disables it.
func TestRaiseArrayLimit(t *testing.T) {
	t.Setenv(core.ArrayLimitEnv, "")
	cases := []struct {
		name, src string
		limit     int64
		want      string
	}{
		{"default limit", `fn (a : [2] f64) => sumOuter (sumOuter (replicate 1000000000000 a))`, 0,
			"raise: program: term replicate 1000000000000 a : [1000000000000,2] f64 needs 14.6 TiB, above the array limit"},
		{"option", `fn (a : [2] f64) => sumOuter (replicate 100 a)`, 1000,
			"raise: program: term replicate 100 a : [100,2] f64 needs 1.6 KiB, above the array limit of 1000 B"},
		{"no limit", `fn (a : [2] f64) => sumOuter (replicate 100 a)`, -1, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := gorgonia.NewGraph()
			a := input(t, g, "a", []int{2}, []float64{1, 2})
			p, err := core.ParseProgram(c.src)
			if err != nil {
				t.Fatal(err)
			}
			before := g.AllNodes().Len()
			_, err = RaiseWith(g, p, map[string]*gorgonia.Node{"a": a}, Options{MaxArrayBytes: c.limit})
			if c.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one containing %q", err, c.want)
			}
			if g.AllNodes().Len() != before {
				t.Errorf("graph grew from %d to %d nodes", before, g.AllNodes().Len())
			}
		})
	}
}
