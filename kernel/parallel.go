package kernel

import (
	"runtime"
	"sync"

	"github.com/bulkad/bulkad/core"
)

// parallelMin is the work from which a kernel splits its output across goroutines: below it,
// starting them costs more than it saves. The argmax view counts elements read;
// the kernels below weigh them by their cost (costOf).
const parallelMin = 1 << 17

// Work weights: what one element of a kind of kernel counts for, in eighths of an element
// read (work = elements · weight / 8, see costOf). Measured with
// a benchmark of serial against forced split runs (2^12 to 2^21 elements, -cpu 2; session 6,
// branch h30, commit 21869df) on the 2-core machine, where splitting pays from about
// 2^19 elements for memory-bound loops (+ - * and comparisons, casts, copies, strided binary
// operations along rows: in cache, two goroutines do not run them faster), 2^18 for
// divisions and fused chains of cheap operations, 2^17 for transposing (strided) copies,
// 2^16 for transcendental functions. Reductions along an axis split from 2^19 elements read
// like the memory-bound loops: the 2^15 measured then lost on the device machine's 16-core
// KVM host (session 21, the zoo's plans stepped at one and two threads alternately, min of 16
// runs a step): the plans' sums of 2^15 to 2^18 elements took 0.53–0.79× their serial time
// split — starting a goroutine costs about 22 µs there (the scheduler wakes an idle thread).
const (
	wFused   = 1  // one cheap instruction of a fused chain (its operands stay in cache)
	wCheap   = 2  // a memory-bound element-wise operation or copy
	wDiv     = 4  // division, quot, rem
	wStrided = 8  // a copy or operation reading across rows (transposing)
	wHeavy   = 16 // a transcendental function (exp, log, tanh, pow, …)
	wReduce  = 2  // sums and argmaxes along an axis (elements read)
)

// costOf is the work of n elements of weight w.
func costOf(n, w int) int { return n * w / 8 }

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
