//go:build !((linux || darwin || freebsd) && (amd64 || arm64))

package dist

import (
	"runtime"

	"github.com/pkg/errors"
)

// loadLibrary always fails in this build: purego, which loads the MPI library without cgo,
// does not cover this platform.
func loadLibrary(names []string) (*library, error) {
	return nil, errors.Errorf("dist: init: loading an MPI library is not available on %s/%s", runtime.GOOS, runtime.GOARCH)
}
