//go:build !(linux && (amd64 || arm64))

package kernel

// hugeAdvice reports whether adviseHuge asks the system for huge pages: not here.
const hugeAdvice = false

// adviseHuge does nothing where bulkad does not ask for huge pages.
func adviseHuge([]byte) error { return nil }
