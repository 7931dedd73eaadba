package ad

import (
	"math/rand"
	"testing"

	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/core/coretest"
)

// TestUniquifyFastPath checks that when letsUnique reports nothing to rename, the full
// rewrite indeed returns the program itself, and that programs with a repeated let name are
// not taken for unique ones (on random programs, before and after the preparation passes).
func TestUniquifyFastPath(t *testing.T) {
	unique, renamed := 0, 0
	for seed := int64(1); seed <= 300; seed++ {
		cfg := coretest.Config{Dtype: core.Float64, Smooth: true, ScalarResult: seed%2 == 0, MaxDepth: 5}
		p := coretest.RandomProgram(rand.New(rand.NewSource(seed)), cfg)
		progs := []*core.Program{p}
		if q, err := vectorize(p); err == nil {
			progs = append(progs, q)
			if r, err := simplifyProgram(q, nil); err == nil {
				progs = append(progs, r)
			}
		}
		for _, q := range progs {
			for _, reserved := range [][]string{{DretName}, {DretName, "x0", "l0", "t_0"}} {
				full, err := uniquifyAll(q, reserved)
				if err != nil {
					t.Fatalf("seed %d: %v", seed, err)
				}
				if letsUnique(q, reserved) {
					unique++
					if full != q {
						t.Fatalf("seed %d: letsUnique but the rewrite renamed:\n%s\n->\n%s", seed, q, full)
					}
				} else if full != q {
					renamed++
				}
			}
		}
	}
	t.Logf("%d unique, %d renamed", unique, renamed)
}

// TestUniquifyRepeatedNames: repeated let names, a let named like a parameter or a reserved
// name are renamed (no fast path).
func TestUniquifyRepeatedNames(t *testing.T) {
	for _, src := range []string{
		`fn (x : [] f64) => let a = x * x in let a = a + x in a`,
		`fn (x : [] f64) => let x = x * x in x`,
		`fn (x : [] f64) => let dret = x * x in dret`,
		`fn (x : [] f64) => (let a = x * x in a) + (let a = x + x in a)`,
	} {
		p := parse(t, src)
		if letsUnique(p, []string{DretName}) {
			t.Errorf("%s: taken for unique", src)
		}
		q, err := uniquify(p, []string{DretName})
		if err != nil {
			t.Fatal(err)
		}
		if q == p {
			t.Errorf("%s: not renamed", src)
		}
	}
}
