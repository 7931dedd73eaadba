//go:build (linux || darwin || freebsd) && (amd64 || arm64)

package dist

import (
	"strings"

	"github.com/ebitengine/purego"
	"github.com/pkg/errors"
)

// openMPISymbols are the exported objects whose addresses are Open MPI's handles (mpi.h of
// Open MPI 4.1.4: #define MPI_COMM_WORLD OMPI_PREDEFINED_GLOBAL(MPI_Comm, ompi_mpi_comm_world),
// which is &ompi_mpi_comm_world; the same for the others). MPI_IN_PLACE is ((void *) 1) and
// MPI_THREAD_SERIALIZED the third member of an enum that starts at 0 (so 2), in Open MPI 1.x to 5.x.
func openMPISymbols(h *handles) []struct {
	name string
	dst  *uintptr
} {
	return []struct {
		name string
		dst  *uintptr
	}{
		{"ompi_mpi_comm_world", &h.commWorld},
		{"ompi_mpi_float", &h.float32T},
		{"ompi_mpi_double", &h.float64T},
		{"ompi_mpi_op_sum", &h.opSum},
		{"ompi_mpi_op_max", &h.opMax},
		{"ompi_mpi_errors_return", &h.errorsReturn},
	}
}

// loadLibrary opens the first of names that is an MPI library of a known family. It never
// panics: a missing library or symbol is an error listing what was tried.
func loadLibrary(names []string) (*library, error) {
	var tried []string
	for _, name := range names {
		// RTLD_GLOBAL: MPI libraries open plug-ins of their own (Open MPI's components), which
		// in some builds resolve symbols of the library itself (Debian's Open MPI 4.1.4 also
		// runs with RTLD_LOCAL). The library stays loaded for the process.
		h, err := purego.Dlopen(name, purego.RTLD_NOW|purego.RTLD_GLOBAL)
		if err != nil {
			tried = append(tried, name+" (not found)")
			continue
		}
		lib, err := bindLibrary(name, h)
		if err != nil {
			tried = append(tried, err.Error())
			continue
		}
		return lib, nil
	}
	return nil, errors.Errorf("dist: init: no MPI library found (tried %s; set %s to the library's path)", strings.Join(tried, ", "), LibraryEnv)
}

// bindLibrary looks up the MPI functions in an opened library and picks its handle table:
// Open MPI when it exports ompi_mpi_comm_world, the MPICH interface when its version string
// names MPICH or a library built on it.
func bindLibrary(name string, h uintptr) (*library, error) {
	lib := &library{name: name}
	var libVersion func(s *byte, n *int32) int32 // only read here, for lib.version
	fns := []struct {
		sym string
		fn  any
	}{
		{"MPI_Init_thread", &lib.initThread},
		{"MPI_Initialized", &lib.initialized},
		{"MPI_Finalized", &lib.finalized},
		{"MPI_Comm_rank", &lib.commRank},
		{"MPI_Comm_size", &lib.commSize},
		{"MPI_Comm_set_errhandler", &lib.setErrhandler},
		{"MPI_Allreduce", &lib.allreduce},
		{"MPI_Bcast", &lib.bcast},
		{"MPI_Barrier", &lib.barrier},
		{"MPI_Abort", &lib.abort},
		{"MPI_Finalize", &lib.finalize},
		{"MPI_Error_string", &lib.errorString},
		{"MPI_Get_library_version", &libVersion},
	}
	for _, f := range fns {
		addr, ok := symbol(h, f.sym)
		if !ok {
			return nil, errors.Errorf("%s (no %s)", name, f.sym)
		}
		purego.RegisterFunc(f.fn, addr)
	}
	buf := make([]byte, 8192) // MPI_MAX_LIBRARY_VERSION_STRING: 256 in Open MPI, 8192 in MPICH
	var n int32
	if libVersion(&buf[0], &n) == 0 && n > 0 && int(n) <= len(buf) {
		lib.version = shortVersion(string(buf[:n]))
	}
	if _, ok := symbol(h, "ompi_mpi_comm_world"); ok {
		lib.family = openMPI
		lib.h.inPlace = 1
		lib.h.threadSerialized = 2
		for _, s := range openMPISymbols(&lib.h) {
			addr, ok := symbol(h, s.name)
			if !ok {
				return nil, errors.Errorf("%s (Open MPI without %s)", name, s.name)
			}
			*s.dst = addr
		}
		return lib, nil
	}
	v := strings.ToLower(lib.version)
	for _, k := range []string{"mpich", "intel(r) mpi", "mvapich", "cray mpich"} {
		if strings.Contains(v, k) {
			lib.family = mpich
			lib.h = mpichHandles()
			return lib, nil
		}
	}
	return nil, errors.Errorf("%s (neither Open MPI nor the MPICH interface: %q)", name, lib.version)
}

// symbol returns the address of the exported symbol sym of the opened library h, and false
// when it has none.
func symbol(h uintptr, sym string) (uintptr, bool) {
	addr, err := purego.Dlsym(h, sym)
	return addr, err == nil && addr != 0
}

// mpichHandles are the values of MPICH's mpi.h, where MPI_Comm, MPI_Datatype, MPI_Op and
// MPI_Errhandler are typedefs of int (read from MPICH 4.0.2's header, Debian's
// libmpich-dev 4.0.2-3; the values belong to the binary interface that libraries derived from
// MPICH keep, the MPICH ABI Compatibility Initiative).
func mpichHandles() handles {
	return handles{
		commWorld:        0x44000000,  // #define MPI_COMM_WORLD ((MPI_Comm)0x44000000)
		float32T:         0x4c00040a,  // #define MPI_FLOAT ((MPI_Datatype)0x4c00040a)
		float64T:         0x4c00080b,  // #define MPI_DOUBLE ((MPI_Datatype)0x4c00080b)
		opMax:            0x58000001,  // #define MPI_MAX (MPI_Op)(0x58000001)
		opSum:            0x58000003,  // #define MPI_SUM (MPI_Op)(0x58000003)
		errorsReturn:     0x54000001,  // #define MPI_ERRORS_RETURN ((MPI_Errhandler)0x54000001)
		inPlace:          ^uintptr(0), // #define MPI_IN_PLACE (void *) -1
		threadSerialized: 2,           // #define MPI_THREAD_SERIALIZED 2
	}
}
