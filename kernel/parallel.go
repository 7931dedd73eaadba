package kernel

import (
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/bulkad/bulkad/core"
)

// parallelMin is the work (elements read) from which a kernel splits its output across
// goroutines: below it, starting them costs more than it saves.
const parallelMin = 1 << 17

// parallelSplits counts the runs of inParallel that started goroutines (the tests check that
// a large input really takes the parallel path).
var parallelSplits atomic.Int64

// workers is the number of goroutines inParallel uses for n parts and this much work: 1
// below parallelMin or with one CPU. A kernel whose split needs a closure checks it first, so
// that the closure (which escapes to the goroutines) is not allocated on the serial path.
func workers(n, work int) int {
	if work < parallelMin {
		return 1
	}
	return max(1, min(runtime.GOMAXPROCS(0), n))
}

// inParallel runs f over [0, n) split into up to GOMAXPROCS contiguous ranges when work
// reaches parallelMin, the last range on the calling goroutine and each other on its own;
// otherwise f(0, n) runs on the calling goroutine. f must write disjoint output for disjoint
// ranges.
func inParallel(n, work int, f func(lo, hi int)) {
	w := workers(n, work)
	if w <= 1 {
		f(0, n)
		return
	}
	parallelSplits.Add(1)
	var wg sync.WaitGroup
	for i := 0; i < w-1; i++ {
		lo, hi := n*i/w, n*(i+1)/w
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(lo, hi)
		}()
	}
	f(n*(w-1)/w, n)
	wg.Wait()
}

// splitDim is the dimension along which a row-major domain is split across goroutines: its
// first dimension of more than one element (the ones before it have one element each, so a
// part is that dimension's range with the dimensions after it). ok is false when no split
// pays (work below parallelMin, one CPU) or no dimension has two elements.
func splitDim(dom []int, work int) (d int, ok bool) {
	for d, n := range dom {
		if n > 1 {
			return d, workers(n, work) > 1
		}
	}
	return 0, false
}

// subDom is the part [lo, hi) along dimension d of dom (split by splitDim): its shape (a new
// slice, dims before d dropped) and the range [p0, p1) of flat positions of dom it covers.
func subDom(dom []int, d, lo, hi int) (part []int, p0, p1 int) {
	inner := core.Shape(dom[d+1:]).Size()
	return append([]int{hi - lo}, dom[d+1:]...), lo * inner, hi * inner
}
