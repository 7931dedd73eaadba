package main

import "runtime"

// runtimeMem samples the bytes allocated so far.
type runtimeMem struct{ total uint64 }

func (m *runtimeMem) read() {
	var s runtime.MemStats
	runtime.ReadMemStats(&s)
	m.total = s.TotalAlloc
}

func (m runtimeMem) sub(o runtimeMem) float64 { return float64(m.total - o.total) }
