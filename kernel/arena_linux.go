//go:build linux && (amd64 || arm64)

package kernel

import "syscall"

// hugeAdvice reports whether adviseHuge asks the system for huge pages.
const hugeAdvice = true

// adviseHuge advises Linux to back b (whole huge pages of the Go heap, not yet touched) with
// transparent huge pages. It is advice: the caller ignores an error (a kernel without them),
// and b stays on small pages.
func adviseHuge(b []byte) error { return syscall.Madvise(b, syscall.MADV_HUGEPAGE) }
