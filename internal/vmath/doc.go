// Package vmath computes exp, log, tanh, sigmoid and erf over slices of float32 and float64
// with AVX2+FMA assembly, and element by element with pure-Go functions that return exactly
// the same bits (BOUNDS-TBD).
package vmath
