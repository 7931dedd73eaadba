package bot

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/core/coretest"
)

// BenchmarkBOTSimplify measures Vectorize followed by Simplify on generated programs of about
// 1k, 10k and 100k distinct nodes; ns/node (reported) should not grow with the size.
//
//	go test -run XXX -bench BOTSimplify -benchtime 3x ./bot
func BenchmarkBOTSimplify(b *testing.B) {
	for _, n := range []int{1000, 10000, 100000} {
		p := coretest.RandomProgram(rand.New(rand.NewSource(42)), coretest.Config{TargetNodes: n, Dtype: core.Float64})
		size := core.Size(p.Body)
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			for k := 0; k < b.N; k++ {
				q, err := Vectorize(p)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := core.Simplify(q); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(size), "ns/node")
			b.ReportMetric(float64(size), "nodes")
		})
	}
}
