package dist

import (
	"strconv"
	"strings"
	"unsafe"
)

// The two MPI binary interfaces. MPI's C handles (MPI_Comm, MPI_Datatype, MPI_Op,
// MPI_Errhandler) are opaque: Open MPI makes them pointers to objects the library exports,
// MPICH (and the libraries that keep its interface: Intel MPI, MVAPICH, Cray MPICH) makes them
// integers fixed in its mpi.h. Both are passed here as a uintptr, which the C calling
// conventions of amd64 and arm64 put in the same register as an int.

// handles are the predefined MPI handles and constants bulkad uses, for one library.
type handles struct {
	commWorld        uintptr // MPI_COMM_WORLD
	float32T         uintptr // MPI_FLOAT
	float64T         uintptr // MPI_DOUBLE
	opSum, opMax     uintptr // MPI_SUM, MPI_MAX
	errorsReturn     uintptr // MPI_ERRORS_RETURN
	inPlace          uintptr // MPI_IN_PLACE
	threadSerialized int32   // MPI_THREAD_SERIALIZED
}

// library is a loaded MPI library: its functions (through purego) and its handle table.
type library struct {
	name    string // the file name it was loaded as
	family  family
	version string // MPI_Get_library_version, first line
	h       handles

	initThread    func(argc, argv unsafe.Pointer, required int32, provided *int32) int32
	initialized   func(flag *int32) int32
	finalized     func(flag *int32) int32
	commRank      func(comm uintptr, rank *int32) int32
	commSize      func(comm uintptr, size *int32) int32
	setErrhandler func(comm, handler uintptr) int32
	allreduce     func(send uintptr, recv unsafe.Pointer, count int32, dtype, op, comm uintptr) int32 // send: MPI_IN_PLACE only
	bcast         func(buf unsafe.Pointer, count int32, dtype uintptr, root int32, comm uintptr) int32
	barrier       func(comm uintptr) int32
	abort         func(comm uintptr, code int32) int32
	finalize      func() int32
	errorString   func(code int32, s *byte, n *int32) int32
}

// errorText is MPI_Error_string of code, or the bare code when the library has no text.
func (l *library) errorText(code int32) string {
	buf := make([]byte, 512) // MPI_MAX_ERROR_STRING: 256 in Open MPI, 512 in MPICH
	var n int32
	if l.errorString(code, &buf[0], &n) == 0 && n > 0 && int(n) <= len(buf) {
		return strings.TrimSpace(strings.TrimRight(string(buf[:n]), "\x00"))
	}
	return "MPI error code " + strconv.Itoa(int(code))
}

// describe names the library: its version line and the file it was loaded from.
func (l *library) describe() string {
	v := l.version
	if v == "" {
		v = l.family.String()
	}
	return v + " (" + l.name + ")"
}

// shortVersion is the first line of MPI_Get_library_version without the build details:
// "Open MPI v4.1.4, package: Debian OpenMPI, …" becomes "Open MPI v4.1.4",
// "MPICH Version:\t4.0.2\n…" becomes "MPICH 4.0.2".
func shortVersion(s string) string {
	s = strings.TrimRight(s, "\x00")
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if i := strings.Index(s, ", package:"); i >= 0 {
		s = s[:i]
	}
	s = strings.Join(strings.Fields(s), " ")
	return strings.Replace(s, " Version: ", " ", 1)
}
