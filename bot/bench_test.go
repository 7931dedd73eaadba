package bot

import (
	"fmt"
	"math/rand"
	"runtime"
	"testing"
	"time"

	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/core/coretest"
)

// BenchmarkBOTSimplify measures Vectorize followed by Simplify on generated programs of about
// 1k, 10k and 100k distinct nodes; ns/node and allocs/node (reported) should not grow with
// the size, except for the memory-hierarchy effect that a plain core.PostOrder walk shows as
// well (xPostOrder reports ns/node relative to that walk on the same program).
//
//	go test -run XXX -bench BOTSimplify -benchtime 3x ./bot
func BenchmarkBOTSimplify(b *testing.B) {
	for _, n := range []int{1000, 10000, 100000} {
		p := coretest.RandomProgram(rand.New(rand.NewSource(42)), coretest.Config{TargetNodes: n, Dtype: core.Float64})
		size := core.Size(p.Body)
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			for k := 0; k < b.N; k++ {
				q, err := Vectorize(p)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := core.Simplify(q); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			runtime.ReadMemStats(&m1)
			perNode := float64(b.Elapsed().Nanoseconds()) / float64(b.N) / float64(size)
			b.ReportMetric(perNode, "ns/node")
			// baseline: one core.PostOrder over the same program (a walk with one hash-map
			// insert per node, linear by construction) costs more per node on larger programs
			// too, because of cache misses; the ratio separates that from the algorithm
			reps := 1 + 200000/size
			t0 := time.Now()
			for k := 0; k < reps; k++ {
				core.Size(p.Body)
			}
			base := float64(time.Since(t0).Nanoseconds()) / float64(reps) / float64(size)
			b.ReportMetric(perNode/base, "xPostOrder")
			// allocations per node: a measure of the work done that, unlike time, does not
			// depend on cache behaviour (large memo tables miss the cache more often)
			b.ReportMetric(float64(m1.Mallocs-m0.Mallocs)/float64(b.N)/float64(size), "allocs/node")
			b.ReportMetric(float64(size), "nodes")
		})
	}
}
