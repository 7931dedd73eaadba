package kernel

import (
	"runtime"
	"sync"
)

// parallelMin is the work (elements read) from which a kernel splits its output across
// goroutines: below it, starting them costs more than it saves.
const parallelMin = 1 << 17

// inParallel runs f over [0, n) split into up to GOMAXPROCS contiguous ranges, one goroutine
// each, when work reaches parallelMin; otherwise f(0, n) runs on the calling goroutine.
// f must write disjoint output for disjoint ranges.
func inParallel(n, work int, f func(lo, hi int)) {
	w := min(runtime.GOMAXPROCS(0), n)
	if work < parallelMin || w <= 1 {
		f(0, n)
		return
	}
	var wg sync.WaitGroup
	for i := 0; i < w; i++ {
		lo, hi := n*i/w, n*(i+1)/w
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(lo, hi)
		}()
	}
	wg.Wait()
}
