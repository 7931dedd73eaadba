package dist

import (
	"syscall"
	"unsafe"
)

// kernelSigaction is the kernel's struct sigaction on linux/amd64 and linux/arm64 (handler,
// flags, restorer, 64-bit mask); it is only copied, never interpreted.
type kernelSigaction struct {
	handler, flags, restorer, mask uint64
}

// faultSignals are the signals the Go runtime turns into panics (a nil dereference is a
// SIGSEGV) or into its crash report: SIGILL, SIGBUS, SIGFPE, SIGSEGV.
func faultSignals() [4]syscall.Signal {
	return [4]syscall.Signal{syscall.SIGILL, syscall.SIGBUS, syscall.SIGFPE, syscall.SIGSEGV}
}

// keepFaultHandlers records the handlers of the fault signals and returns a function that
// puts them back. MPICH's transport library (UCX) installs its own handlers for them when it
// is loaded, which turns every recoverable Go panic of a nil dereference into a crash of the
// rank; Open MPI leaves handlers that are already installed alone.
func keepFaultHandlers() (restore func()) {
	sigs := faultSignals()
	var saved [len(sigs)]kernelSigaction
	var ok [len(sigs)]bool
	for i, s := range sigs {
		_, _, e := syscall.RawSyscall6(syscall.SYS_RT_SIGACTION, uintptr(s), 0, uintptr(unsafe.Pointer(&saved[i])), 8, 0, 0)
		ok[i] = e == 0
	}
	return func() {
		for i, s := range sigs {
			if ok[i] {
				syscall.RawSyscall6(syscall.SYS_RT_SIGACTION, uintptr(s), uintptr(unsafe.Pointer(&saved[i])), 0, 8, 0, 0)
			}
		}
	}
}
