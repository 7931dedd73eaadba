//go:build unix

package mpitest

import (
	"bytes"
	"context"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/pkg/errors"
)

// The launcher families.
const (
	OpenMPI = "Open MPI"
	MPICH   = "MPICH"
)

// Launcher is an MPI launcher on this machine.
type Launcher struct {
	Family string // OpenMPI or MPICH
	Path   string
}

// Find returns the launcher of family on PATH: its family-specific name (mpirun.openmpi,
// mpiexec.openmpi; mpiexec.hydra, mpirun.mpich, mpiexec.mpich), else mpirun or mpiexec when
// `--version` names the family.
func Find(family string) (Launcher, bool) {
	names := map[string][]string{OpenMPI: {"mpirun.openmpi", "mpiexec.openmpi"}, MPICH: {"mpiexec.hydra", "mpirun.mpich", "mpiexec.mpich"}}[family]
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return Launcher{family, p}, true
		}
	}
	mark := map[string]string{OpenMPI: "Open MPI", MPICH: "HYDRA"}[family]
	if mark == "" {
		return Launcher{}, false
	}
	for _, n := range []string{"mpirun", "mpiexec"} {
		p, err := exec.LookPath(n)
		if err != nil {
			continue
		}
		v, _ := exec.Command(p, "--version").CombinedOutput()
		if strings.Contains(string(v), mark) {
			return Launcher{family, p}, true
		}
	}
	return Launcher{}, false
}

// Any returns Open MPI's launcher, else MPICH's.
func Any() (Launcher, bool) {
	if l, ok := Find(OpenMPI); ok {
		return l, true
	}
	return Find(MPICH)
}

// Command is the command line that runs prog with args on np ranks, with env set in every
// rank and the launcher's extra options. Open MPI is told that root may run it and that there
// may be more ranks than cores.
func (l Launcher) Command(np int, env map[string]string, extra []string, prog string, args ...string) []string {
	argv := []string{l.Path}
	if l.Family == OpenMPI {
		argv = append(argv, "--allow-run-as-root", "--oversubscribe", "-np", strconv.Itoa(np))
		for k, v := range env {
			argv = append(argv, "-x", k+"="+v)
		}
	} else {
		argv = append(argv, "-np", strconv.Itoa(np))
		for k, v := range env {
			argv = append(argv, "-genv", k, v)
		}
	}
	argv = append(argv, extra...)
	return append(append(argv, prog), args...)
}

// Result is how a job ended.
type Result struct {
	Output string        // standard output and error of every rank and of the launcher
	Code   int           // the launcher's exit status (-1: none)
	Took   time.Duration // wall time
}

// Run runs Command(np, env, extra, prog, args...) and waits for it. limit catches hangs, it
// is not a speed requirement: a job still running then is killed, launcher and ranks (they
// run in a process group of their own), and Run returns an error with the output.
func (l Launcher) Run(np int, env map[string]string, extra []string, limit time.Duration, prog string, args ...string) (Result, error) {
	argv := l.Command(np, env, extra, prog, args...)
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	res := Result{Output: out.String(), Took: time.Since(start)}
	if err != nil {
		res.Code = -1
		if ee, ok := err.(*exec.ExitError); ok {
			res.Code = ee.ExitCode()
		}
	}
	if ctx.Err() != nil {
		return res, errors.Errorf("mpitest: %s -np %d %s: still running after %v, killed (a hang)\n%s", l.Family, np, prog, limit, Tail(res.Output))
	}
	return res, nil
}

// Tail is the end of a job's output, short enough for a test log.
func Tail(s string) string {
	if len(s) > 6000 {
		return "…" + s[len(s)-6000:]
	}
	return s
}
