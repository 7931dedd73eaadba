package bot

import (
	"math/rand"
	"testing"

	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/core/coretest"
)

func TestStat(t *testing.T) {
	a, b, c := 0, 0, 0
	for seed := int64(0); seed < 300; seed++ {
		rng := rand.New(rand.NewSource(seed))
		p := coretest.RandomProgram(rng, coretest.Config{})
		q, _ := Vectorize(p)
		r, err := core.Simplify(q)
		if err != nil {
			t.Fatal(err)
		}
		a += core.Size(p.Body)
		b += core.Size(q.Body)
		c += core.Size(r.Body)
		if seed == 3 {
			t.Logf("%v\n%v\n%v", p, q, r)
		}
	}
	t.Logf("sizes: input %d, vectorized %d, simplified %d", a, b, c)
}
