//go:build amd64 && !purego

package vmath

import "golang.org/x/sys/cpu"

// useAVX2 reports whether the CPU runs the assembly kernels (AVX2 and FMA).
func useAVX2() bool { return cpu.X86.HasAVX2 && cpu.X86.HasFMA }

// useAVX512 reports whether the CPU runs the AVX-512 kernels (AVX-512F, and AVX2 and FMA for
// the vectors left).
func useAVX512() bool { return cpu.X86.HasAVX512F && useAVX2() }
