//go:build !amd64 || purego

package kernel

// gemmMicro returns the micro-kernel of gemmGo: the portable microGo.
func gemmMicro[T floatT]() micro[T] { return microPortable[T]() }

// asmGemm reports whether gemmMicro is an assembly micro-kernel: never in this build.
func asmGemm() bool { return false }

// gemmMicros returns every micro-kernel this build runs (for tests): the portable one.
func gemmMicros[T floatT]() []micro[T] { return []micro[T]{microPortable[T]()} }
