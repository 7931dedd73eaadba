//go:build !((linux || darwin || freebsd) && (amd64 || arm64)) || novulkan

package vulkan

import (
	"runtime"

	"github.com/pkg/errors"
)

// Device is an open Vulkan device. In this build (a platform purego does not cover, or the
// novulkan build tag) no device can be opened.
type Device struct{ _ int }

// Open always fails in this build.
func Open() (*Device, error) {
	return nil, errors.Errorf("vulkan: open: not available in this build (%s/%s, or the novulkan tag)", runtime.GOOS, runtime.GOARCH)
}

// Name is empty in this build.
func (d *Device) Name() string { return "" }

// Type is Other in this build.
func (d *Device) Type() DeviceType { return Other }

// Info is empty in this build.
func (d *Device) Info() Info { return Info{} }

// SupportsFloat64 is false in this build.
func (d *Device) SupportsFloat64() bool { return false }

func (d *Device) plainFloat32Shaders() bool { return false }

// Timings is empty in this build.
func (d *Device) Timings() Timings { return Timings{} }

// ResetTimings does nothing in this build.
func (d *Device) ResetTimings() {}

// Close does nothing in this build.
func (d *Device) Close() error { return nil }

func (d *Device) check(op, shader string) error {
	return errors.Errorf("vulkan: %s: not available in this build", op)
}

func (d *Device) run(j job) error { return d.check(j.op, j.shader) }
