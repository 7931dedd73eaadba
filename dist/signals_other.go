//go:build !linux

package dist

// keepFaultHandlers does nothing outside Linux.
func keepFaultHandlers() (restore func()) { return func() {} }
