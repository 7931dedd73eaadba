package dist

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
	"time"
	"unsafe"

	"github.com/pkg/errors"
)

// family is an MPI binary interface (see handles).
type family int

const (
	unknownFamily family = iota
	openMPI
	mpich
)

func (f family) String() string {
	switch f {
	case openMPI:
		return "Open MPI"
	case mpich:
		return "MPICH"
	}
	return "unknown"
}

// Op is a reduction of AllReduceFloat64 and AllReduceFloat32.
type Op int

const (
	// Sum adds the ranks' values element by element.
	Sum Op = iota
	// Mean is Sum divided by Size.
	Mean
	// Max is the largest of the ranks' values, element by element.
	Max
)

func (o Op) String() string {
	switch o {
	case Sum:
		return "sum"
	case Mean:
		return "mean"
	case Max:
		return "max"
	}
	return "Op(" + strconv.Itoa(int(o)) + ")"
}

// abortGrace is how long Abort waits between printing its message and MPI_Abort.
const abortGrace = 200 * time.Millisecond

// maxCount is the most elements one MPI call is given (MPI counts are C ints); longer
// buffers go in chunks.
const maxCount = 1 << 30

// Comm is the world communicator of a job: every process the launcher started, each with
// its rank. Its methods may be called from any goroutine; they are serialised (MPI is asked
// for MPI_THREAD_SERIALIZED), and the collective ones (AllReduce…, Broadcast…, Barrier,
// Finalize) must be called by every rank in the same order. A Comm from a process that no MPI
// launcher started is the one-process world: rank 0 of 1, its collectives return at once.
type Comm struct {
	rank, size int
	lib        *library // nil: the one-process world

	mu     sync.Mutex  // held during every MPI call
	funnel bool        // the library granted less than MPI_THREAD_SERIALIZED: calls run on owner
	owner  chan func() // runs functions on the OS thread that called MPI_Init_thread
	done   string      // "finalize" or "abort" once the world has ended (guarded by mu)
}

// Init joins the job. When no MPI launcher started the process (none of the variables
// mpirun, mpiexec, srun or an MPIJob launcher sets: OMPI_COMM_WORLD_*, PMI_RANK/PMI_SIZE,
// PMIX_RANK), it returns the one-process world and loads nothing. Otherwise it loads the MPI
// library — the one named by BULKAD_MPI (LibraryEnv), else Open MPI's libmpi.so.40, then
// MPICH's libmpich.so.12, then libmpi.so.12 (MPICH's first under a PMI launcher such as
// Hydra) — through purego, without cgo, and initialises MPI asking for MPI_THREAD_SERIALIZED.
//
// MPI can be initialised once per process and not again after MPI_Finalize: Init asks the
// library (MPI_Initialized, MPI_Finalized) and returns an error rather than initialising twice.
// Call it once, early in main, and end with Finalize (or Abort). An error after the library
// started leaves MPI running: exit with a non-zero status, and the launcher ends the job.
func Init() (*Comm, error) {
	return initEnv(os.LookupEnv)
}

// initEnv is Init with the environment read through getenv.
func initEnv(getenv func(string) (string, bool)) (*Comm, error) {
	l := detectLaunch(getenv)
	if !l.launched {
		return &Comm{rank: 0, size: 1}, nil
	}
	where := fmt.Sprintf("launched by MPI (%s", l.who)
	if l.rank >= 0 {
		where += fmt.Sprintf(", rank %d", l.rank)
	}
	where += ")"
	restore := keepFaultHandlers()
	defer restore() // also after an error: MPI may be loaded, or running
	lib, err := loadLibrary(libraryCandidates(getenv, l))
	if err != nil {
		return nil, errors.Wrap(err, where)
	}
	c := &Comm{lib: lib, owner: make(chan func())}
	started := make(chan error)
	go c.ownerLoop(started)
	if err := <-started; err != nil {
		return nil, errors.Wrapf(err, "%s, %s", where, lib.describe())
	}
	if l.size > 0 && l.size != c.size {
		return nil, errors.Errorf("dist: init (rank %d of %d): the launcher (%s) started %d processes but %s sees %d: the library does not belong to the launcher (set %s)",
			c.rank, c.size, l.who, l.size, lib.describe(), c.size, LibraryEnv)
	}
	return c, nil
}

// ownerLoop initialises MPI on a goroutine locked to its OS thread, reports the outcome on
// started, then runs the functions sent to c.owner on that thread until Finalize closes it (the
// MPI standard asks that MPI_Finalize run on the thread that initialised MPI, and under
// MPI_THREAD_FUNNELED every call).
func (c *Comm) ownerLoop(started chan<- error) {
	runtime.LockOSThread()
	// Unlocked again when the loop ends: the thread then goes back to Go's pool instead of
	// exiting (a thread that exits runs the MPI library's thread-exit destructors; after
	// MPI_Finalize they crashed Open MPI ranks built with -race: 6 runs of 8, none of 28 since).
	defer runtime.UnlockOSThread()
	lib := c.lib
	var flag int32
	if rc := lib.finalized(&flag); rc != 0 || flag != 0 {
		started <- errors.New("dist: init: MPI was finalised in this process and cannot be initialised again")
		return
	}
	if rc := lib.initialized(&flag); rc != 0 || flag != 0 {
		started <- errors.New("dist: init: MPI is already initialised in this process (call Init once)")
		return
	}
	var provided int32
	if rc := lib.initThread(nil, nil, lib.h.threadSerialized, &provided); rc != 0 {
		started <- errors.Errorf("dist: init: MPI_Init_thread: %s", lib.errorText(rc))
		return
	}
	c.funnel = provided < lib.h.threadSerialized
	if rc := lib.setErrhandler(lib.h.commWorld, lib.h.errorsReturn); rc != 0 {
		started <- errors.Errorf("dist: init: MPI_Comm_set_errhandler: %s", lib.errorText(rc))
		return
	}
	var rank, size int32
	if rc := lib.commRank(lib.h.commWorld, &rank); rc != 0 {
		started <- errors.Errorf("dist: init: MPI_Comm_rank: %s", lib.errorText(rc))
		return
	}
	if rc := lib.commSize(lib.h.commWorld, &size); rc != 0 {
		started <- errors.Errorf("dist: init: MPI_Comm_size: %s", lib.errorText(rc))
		return
	}
	c.rank, c.size = int(rank), int(size)
	started <- nil
	for f := range c.owner {
		f()
	}
}

// Rank is this process's rank, 0 ≤ Rank < Size.
func (c *Comm) Rank() int { return c.rank }

// Size is the number of processes in the job (1 for the one-process world).
func (c *Comm) Size() int { return c.size }

// Library describes the MPI library in use ("Open MPI v4.1.4 (libmpi.so.40)"), or says that
// this is the one-process world.
func (c *Comm) Library() string {
	if c.lib == nil {
		return "one process, no MPI"
	}
	return c.lib.describe()
}

// errorf makes an error naming the package, the operation and the rank.
func (c *Comm) errorf(op, format string, args ...any) error {
	return errors.Errorf("dist: %s (rank %d of %d): %s", op, c.rank, c.size, fmt.Sprintf(format, args...))
}

// call runs one MPI function, on the owner thread when the library granted only
// MPI_THREAD_FUNNELED or less. c.mu is held.
func (c *Comm) call(f func() int32) int32 {
	if !c.funnel {
		return f()
	}
	rc := make(chan int32)
	c.owner <- func() { rc <- f() }
	return <-rc
}

// lock takes c.mu and checks that the world has not ended.
func (c *Comm) lock(op string) error {
	c.mu.Lock()
	if c.done != "" {
		c.mu.Unlock()
		return c.errorf(op, "called after %s", c.done)
	}
	return nil
}

// check turns an MPI return code into an error naming op and the MPI function.
func (c *Comm) check(op, fn string, rc int32) error {
	if rc == 0 {
		return nil
	}
	return c.errorf(op, "%s: %s", fn, c.lib.errorText(rc))
}

// AllReduceFloat64 replaces buf, on every rank, by the reduction op of the ranks' buf (in
// place). Every rank passes a buffer of the same length. Sum adds in the order the MPI library
// chooses; Open MPI and MPICH gave every rank the same bits in the tests (the MPI standard
// recommends it without requiring it; DataParallel.CheckParams verifies what relies on it).
func (c *Comm) AllReduceFloat64(buf []float64, op Op) error {
	return allReduce(c, buf, op, "allreduce float64", func(h *handles) uintptr { return h.float64T })
}

// AllReduceFloat32 is AllReduceFloat64 for float32 buffers (reduced in float32).
func (c *Comm) AllReduceFloat32(buf []float32, op Op) error {
	return allReduce(c, buf, op, "allreduce float32", func(h *handles) uintptr { return h.float32T })
}

func allReduce[T float32 | float64](c *Comm, buf []T, op Op, name string, dtype func(*handles) uintptr) error {
	if op != Sum && op != Mean && op != Max {
		return c.errorf(name, "unknown reduction %v", op)
	}
	if c.lib == nil {
		return nil // one rank: the sum, mean and maximum of one value is the value
	}
	if err := c.lock(name); err != nil {
		return err
	}
	defer c.mu.Unlock()
	h := &c.lib.h
	mop := h.opSum
	if op == Max {
		mop = h.opMax
	}
	dt := dtype(h)
	err := inChunks(buf, func(p unsafe.Pointer, n int) error {
		rc := c.call(func() int32 {
			return c.lib.allreduce(h.inPlace, p, int32(n), dt, mop, h.commWorld)
		})
		return c.check(name, "MPI_Allreduce", rc)
	})
	if err != nil {
		return err
	}
	if op == Mean {
		s := T(c.size)
		for i := range buf {
			buf[i] /= s
		}
	}
	return nil
}

// BroadcastFloat64 copies root's buf into buf on every other rank. Every rank passes a buffer
// of the same length.
func (c *Comm) BroadcastFloat64(buf []float64, root int) error {
	return broadcast(c, buf, root, "broadcast float64", func(h *handles) uintptr { return h.float64T })
}

// BroadcastFloat32 is BroadcastFloat64 for float32 buffers.
func (c *Comm) BroadcastFloat32(buf []float32, root int) error {
	return broadcast(c, buf, root, "broadcast float32", func(h *handles) uintptr { return h.float32T })
}

func broadcast[T float32 | float64](c *Comm, buf []T, root int, name string, dtype func(*handles) uintptr) error {
	if root < 0 || root >= c.size {
		return c.errorf(name, "root %d is not a rank of %d", root, c.size)
	}
	if c.lib == nil {
		return nil
	}
	if err := c.lock(name); err != nil {
		return err
	}
	defer c.mu.Unlock()
	h := &c.lib.h
	dt := dtype(h)
	return inChunks(buf, func(p unsafe.Pointer, n int) error {
		rc := c.call(func() int32 { return c.lib.bcast(p, int32(n), dt, int32(root), h.commWorld) })
		return c.check(name, "MPI_Bcast", rc)
	})
}

// inChunks calls do on consecutive chunks of buf of at most maxCount elements (MPI's counts
// are int32), with a pointer to the chunk's first element and its length; an empty buf is one
// call with n = 0 and a pointer to a zero value. It stops at the first error.
func inChunks[T float32 | float64](buf []T, do func(p unsafe.Pointer, n int) error) error {
	var empty T
	for start := 0; start < len(buf) || start == 0; start += maxCount {
		n := min(len(buf)-start, maxCount)
		p := unsafe.Pointer(&empty)
		if n > 0 {
			p = unsafe.Pointer(&buf[start])
		}
		if err := do(p, n); err != nil {
			return err
		}
		if n == 0 {
			break
		}
	}
	runtime.KeepAlive(buf)
	return nil
}

// Barrier returns when every rank has called it.
func (c *Comm) Barrier() error {
	if c.lib == nil {
		return nil
	}
	if err := c.lock("barrier"); err != nil {
		return err
	}
	defer c.mu.Unlock()
	return c.check("barrier", "MPI_Barrier", c.call(func() int32 { return c.lib.barrier(c.lib.h.commWorld) }))
}

// Finalize ends this process's part in the job (MPI_Finalize, on the thread that initialised
// MPI); call it on every rank after the last collective, on success only: a rank that fails
// calls Abort instead, since the others would wait for it forever. A second Finalize does
// nothing; the one-process world has nothing to finalise.
func (c *Comm) Finalize() error {
	if c.lib == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done == "finalize" {
		return nil
	}
	if c.done != "" {
		return c.errorf("finalize", "called after %s", c.done)
	}
	c.done = "finalize"
	rc := make(chan int32)
	c.owner <- func() { rc <- c.lib.finalize() }
	code := <-rc
	close(c.owner)
	return c.check("finalize", "MPI_Finalize", code)
}

// Abort ends the whole job: it prints err with this rank to standard error and calls
// MPI_Abort 0.2 s later (time for the launcher to forward the message), which makes the
// launcher stop every rank (mpirun then exits with status 1). It does not return. It does
// not wait for a collective another goroutine is blocked in. In the one-process world it
// prints err and exits with status 1.
func (c *Comm) Abort(err error) {
	fmt.Fprintf(os.Stderr, "dist: rank %d of %d: aborting the job: %v\n", c.rank, c.size, err)
	if c.lib != nil {
		locked := c.mu.TryLock() // another goroutine may be blocked in a collective: do not wait for it
		ended := locked && c.done == "finalize"
		if locked {
			c.done = "abort"
		}
		if !ended {
			// MPICH's Hydra may end the job before it forwards the message just written
			// (5 of about 90 aborts here without this pause, none of 100 with it).
			time.Sleep(abortGrace)
			c.lib.abort(c.lib.h.commWorld, 1)
		}
	}
	os.Exit(1)
}
