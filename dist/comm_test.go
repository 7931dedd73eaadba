package dist

import (
	"math"
	"reflect"
	"strings"
	"testing"
)

// env is a fake environment for initEnv.
func env(kv ...string) func(string) (string, bool) {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestDetectLaunch(t *testing.T) {
	cases := []struct {
		env        []string
		launched   bool
		rank, size int
		family     family
	}{
		{nil, false, -1, -1, unknownFamily},
		{[]string{"SLURM_PROCID", "0", "HOME", "/root"}, false, -1, -1, unknownFamily}, // srun without an MPI plugin
		{[]string{"OMPI_COMM_WORLD_RANK", "2", "OMPI_COMM_WORLD_SIZE", "4", "PMIX_RANK", "2"}, true, 2, 4, openMPI},
		{[]string{"PMI_RANK", "1", "PMI_SIZE", "3"}, true, 1, 3, mpich},
		{[]string{"PMIX_RANK", "5"}, true, 5, -1, unknownFamily},
		{[]string{"PMI_RANK", "x"}, true, -1, -1, mpich},
	}
	for _, c := range cases {
		l := detectLaunch(env(c.env...))
		if l.launched != c.launched || l.rank != c.rank || l.size != c.size || l.family != c.family {
			t.Errorf("env %v: got launched %v rank %d size %d family %v, want %v %d %d %v", c.env, l.launched, l.rank, l.size, l.family, c.launched, c.rank, c.size, c.family)
		}
	}
}

func TestLibraryCandidates(t *testing.T) {
	ompi := []string{"libmpi.so.40", "libmpich.so.12", "libmpi.so.12"}
	if got := libraryCandidates(env(), detectLaunch(env("OMPI_COMM_WORLD_SIZE", "2"))); !reflect.DeepEqual(got, ompi) {
		t.Errorf("under mpirun: %v, want %v", got, ompi)
	}
	if got := libraryCandidates(env(), detectLaunch(env("PMIX_RANK", "0"))); !reflect.DeepEqual(got, ompi) {
		t.Errorf("under PMIx: %v, want %v", got, ompi)
	}
	hydra := []string{"libmpich.so.12", "libmpi.so.12", "libmpi.so.40"}
	if got := libraryCandidates(env(), detectLaunch(env("PMI_RANK", "0"))); !reflect.DeepEqual(got, hydra) {
		t.Errorf("under Hydra: %v, want %v", got, hydra)
	}
	e := env(LibraryEnv, " /opt/mpi/lib/libmpi.so.12 ")
	if got := libraryCandidates(e, detectLaunch(env("PMI_RANK", "0"))); !reflect.DeepEqual(got, []string{"/opt/mpi/lib/libmpi.so.12"}) {
		t.Errorf("with %s: %v", LibraryEnv, got)
	}
}

func TestShortVersion(t *testing.T) {
	for in, want := range map[string]string{
		"Open MPI v4.1.4, package: Debian OpenMPI, ident: 4.1.4, repo rev: v4.1.4, May 26, 2022\x00": "Open MPI v4.1.4",
		"MPICH Version:\t4.0.2\nMPICH Release date:\tThu Mar 31 2022\n":                              "MPICH 4.0.2",
		"Intel(R) MPI Library 2021.9 for Linux* OS\n":                                                "Intel(R) MPI Library 2021.9 for Linux* OS",
	} {
		if got := shortVersion(in); got != want {
			t.Errorf("shortVersion(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestInitOneProcess: without a launcher's variables Init loads nothing and is rank 0 of 1.
func TestInitOneProcess(t *testing.T) {
	c, err := initEnv(env(LibraryEnv, "/nonexistent/libmpi.so"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Rank() != 0 || c.Size() != 1 || c.lib != nil {
		t.Fatalf("rank %d size %d lib %v, want the one-process world", c.Rank(), c.Size(), c.lib)
	}
	if !strings.Contains(c.Library(), "one process") {
		t.Errorf("Library() = %q", c.Library())
	}
}

// TestInitNoLibrary: launched by MPI but the library cannot be found is an error that says
// what was tried and how to point at the library, not a silent one-process run.
func TestInitNoLibrary(t *testing.T) {
	_, err := initEnv(env("OMPI_COMM_WORLD_RANK", "1", "OMPI_COMM_WORLD_SIZE", "2", LibraryEnv, "/nonexistent/libmpi.so.40"))
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"dist: init", "/nonexistent/libmpi.so.40", LibraryEnv, "OMPI_COMM_WORLD", "rank 1"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

func TestOneProcessCollectives(t *testing.T) {
	c, err := initEnv(env())
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range []Op{Sum, Mean, Max} {
		b := []float64{1.5, -2, math.Inf(1)}
		if err := c.AllReduceFloat64(b, op); err != nil || !reflect.DeepEqual(b, []float64{1.5, -2, math.Inf(1)}) {
			t.Errorf("%v float64: %v, %v", op, b, err)
		}
		f := []float32{3, 0.25}
		if err := c.AllReduceFloat32(f, op); err != nil || !reflect.DeepEqual(f, []float32{3, 0.25}) {
			t.Errorf("%v float32: %v, %v", op, f, err)
		}
	}
	if err := c.AllReduceFloat64(nil, Sum); err != nil {
		t.Errorf("empty buffer: %v", err)
	}
	if err := c.AllReduceFloat64([]float64{1}, Op(7)); err == nil || !strings.Contains(err.Error(), "Op(7)") || !strings.Contains(err.Error(), "rank 0 of 1") {
		t.Errorf("unknown op: %v", err)
	}
	b := []float64{4, 5}
	if err := c.BroadcastFloat64(b, 0); err != nil || !reflect.DeepEqual(b, []float64{4, 5}) {
		t.Errorf("broadcast: %v, %v", b, err)
	}
	if err := c.BroadcastFloat32([]float32{1}, 1); err == nil || !strings.Contains(err.Error(), "root 1") {
		t.Errorf("broadcast from rank 1 of 1: %v", err)
	}
	if err := c.Barrier(); err != nil {
		t.Error(err)
	}
	if err := c.Finalize(); err != nil {
		t.Error(err)
	}
	if err := c.Finalize(); err != nil {
		t.Errorf("second finalize: %v", err)
	}
}
