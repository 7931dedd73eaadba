package main

import (
	"bufio"
	_ "embed"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/pkg/errors"
)

//go:embed torch_anchor.py
var torchScript string

// anchor is the PyTorch process of -torch (torch_anchor.py): it runs the same models' steps
// and numpy's GEMM on request, so that they alternate with the Go measurements.
type anchor struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
	dir string
}

// pythonWithTorch returns a Python interpreter that imports torch and numpy: Debian's
// /usr/bin/python3 first (python3 on PATH may be another installation), then python3.
func pythonWithTorch() (string, error) {
	var tried []string
	for _, p := range []string{"/usr/bin/python3", "python3"} {
		path, err := exec.LookPath(p)
		if err != nil {
			continue
		}
		if exec.Command(path, "-c", "import torch, numpy").Run() == nil {
			return path, nil
		}
		tried = append(tried, path)
	}
	return "", errors.Errorf("no python3 with torch and numpy (tried %v); on Debian: apt-get install python3-torch libopenblas0-pthread", tried)
}

// startAnchor starts torch_anchor.py with threads threads for PyTorch and OpenBLAS.
func startAnchor(threads int) (*anchor, error) {
	py, err := pythonWithTorch()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "bulkad-bench")
	if err != nil {
		return nil, err
	}
	script := filepath.Join(dir, "torch_anchor.py")
	if err := os.WriteFile(script, []byte(torchScript), 0o600); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	cmd := exec.Command(py, script)
	n := strconv.Itoa(threads)
	// PASSIVE: idle OpenMP threads sleep instead of spinning while the Go steps run.
	cmd.Env = append(os.Environ(), "OPENBLAS_NUM_THREADS="+n, "OMP_NUM_THREADS="+n, "MKL_NUM_THREADS="+n, "OMP_WAIT_POLICY=PASSIVE")
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, errors.Wrapf(err, "bench: start %s", py)
	}
	a := &anchor{cmd: cmd, in: in, out: bufio.NewReader(out), dir: dir}
	if _, err := a.ask("threads %d", threads); err != nil {
		a.close()
		return nil, err
	}
	return a, nil
}

// ask sends one command and returns the answer line.
func (a *anchor) ask(format string, args ...any) (string, error) {
	if _, err := fmt.Fprintf(a.in, format+"\n", args...); err != nil {
		return "", errors.Wrap(err, "bench: torch anchor")
	}
	line, err := a.out.ReadString('\n')
	if err != nil {
		return "", errors.Wrap(err, "bench: torch anchor")
	}
	line = strings.TrimSpace(line)
	if strings.HasPrefix(line, "error") {
		return "", errors.Errorf("bench: torch anchor: %s", line)
	}
	return line, nil
}

// number asks a command whose answer is a number.
func (a *anchor) number(format string, args ...any) (float64, error) {
	s, err := a.ask(format, args...)
	if err != nil {
		return 0, err
	}
	return strconv.ParseFloat(s, 64)
}

func (a *anchor) close() {
	if a == nil {
		return
	}
	fmt.Fprintln(a.in, "quit")
	a.in.Close()
	a.cmd.Wait()
	os.RemoveAll(a.dir)
}
