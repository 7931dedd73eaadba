package dist

import (
	"strconv"
	"strings"
)

// LibraryEnv names the environment variable that overrides the MPI library Init loads: a
// file name the dynamic loader finds (libmpi.so.40) or a path
// (/opt/intel/oneapi/mpi/latest/lib/libmpi.so.12).
const LibraryEnv = "BULKAD_MPI"

// launch is what the environment says about the process's launcher.
type launch struct {
	launched bool   // an MPI launcher started the process
	who      string // which variables said so, for messages
	rank     int    // the launcher's rank for this process (-1: not given)
	size     int    // the launcher's world size (-1: not given)
	family   family // the library family the launcher belongs to (unknownFamily: either)
}

// detectLaunch reads the variables MPI launchers set in every process they start: Open MPI's
// mpirun (OMPI_COMM_WORLD_SIZE, OMPI_COMM_WORLD_RANK), MPICH's Hydra and other PMI-1/PMI-2
// launchers (PMI_SIZE, PMI_RANK), and PMIx launchers such as Slurm's srun --mpi=pmix and
// Open MPI 4/5 (PMIX_RANK). getenv is os.LookupEnv outside tests.
func detectLaunch(getenv func(string) (string, bool)) launch {
	num := func(name string) int {
		s, ok := getenv(name)
		if !ok {
			return -1
		}
		v, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || v < 0 {
			return -1
		}
		return v
	}
	has := func(name string) bool { _, ok := getenv(name); return ok }
	switch {
	case has("OMPI_COMM_WORLD_SIZE") || has("OMPI_COMM_WORLD_RANK"):
		return launch{true, "OMPI_COMM_WORLD_*", num("OMPI_COMM_WORLD_RANK"), num("OMPI_COMM_WORLD_SIZE"), openMPI}
	case has("PMI_RANK") || has("PMI_SIZE"):
		return launch{true, "PMI_RANK/PMI_SIZE", num("PMI_RANK"), num("PMI_SIZE"), mpich}
	case has("PMIX_RANK"):
		return launch{true, "PMIX_RANK", num("PMIX_RANK"), -1, unknownFamily}
	}
	return launch{rank: -1, size: -1}
}

// libraryCandidates lists the libraries Init tries, in order: the override alone when
// LibraryEnv is set, else Open MPI's libmpi.so.40 then MPICH's libmpich.so.12 — MPICH's first
// when a PMI launcher (Hydra) started the process, since a library from the other family would
// not find its peers — then libmpi.so.12 (the MPICH binary interface of Intel MPI, MVAPICH and
// Cray MPICH).
func libraryCandidates(getenv func(string) (string, bool), l launch) []string {
	if v, ok := getenv(LibraryEnv); ok && strings.TrimSpace(v) != "" {
		return []string{strings.TrimSpace(v)}
	}
	if l.family == mpich {
		return []string{"libmpich.so.12", "libmpi.so.12", "libmpi.so.40"}
	}
	return []string{"libmpi.so.40", "libmpich.so.12", "libmpi.so.12"}
}
