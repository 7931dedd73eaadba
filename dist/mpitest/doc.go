// Package mpitest is test support for programs that use package dist: it finds an MPI
// launcher on the machine (Open MPI's mpirun, MPICH's mpiexec.hydra) and runs a program — in
// the tests, the test binary itself — as an MPI job, with a limit that catches hangs. Tests
// skip with a message when no launcher is installed.
package mpitest
