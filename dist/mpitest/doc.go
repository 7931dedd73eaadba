// Package mpitest is test support for programs that use package dist: it finds an MPI
// launcher on the machine (Open MPI's mpirun, MPICH's mpiexec.hydra) and runs a program — in
// the tests, the test binary itself — as an MPI job, with a limit that catches hangs. Tests
// skip with a message when no launcher is installed.
package mpitest

// RequiredEnv names the environment variable that makes a missing launcher a test failure
// instead of a skip (CI sets BULKAD_MPI_REQUIRED=1 after installing openmpi-bin).
const RequiredEnv = "BULKAD_MPI_REQUIRED"
