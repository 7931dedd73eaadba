//go:build !amd64 || purego

package kernel

import "github.com/bulkad/bulkad/core"

// simdBinary: no vector loops on this platform (see vec_amd64.go); the caller does every
// element.
func simdBinary[T numT](op core.BinOp, dst, x, y []T) int { return 0 }

// simdArgmax4: no vector loops on this platform.
func simdArgmax4[T floatT](o []int64, xs []T, a, b int) int { return 0 }

// simdFill: no vector loops on this platform.
func simdFill[T floatT](dst []T, v T) int { return 0 }

// simdNeg: no vector loops on this platform.
func simdNeg[T floatT](dst, x []T) int { return 0 }

// simdScalar: no vector loops on this platform.
func simdScalar[T numT](op core.BinOp, dst, v []T, s T, left bool) int { return 0 }

// simdBool: no vector loops on this platform.
func simdBool[T numT](dst []T, src []bool) int { return 0 }

// simdMask: no vector loops on this platform.
func simdMask[T num, F ~float64 | ~float32](cmp core.BinOp, o []F, p []T, q T, z []F) int {
	return 0
}

// simdCmp: no vector loops on this platform.
func simdCmp[T numT](op core.BinOp, o []bool, x []T, s T) int { return 0 }

// simdAxpy: no vector loops on this platform.
func simdAxpy[T floatT](dst, x []T, s T) int { return 0 }

// hasVec is false: this build has no assembly loops.
const hasVec = false

func addRowsVec[T floatT](xp, src []T, o, h, s, w int) bool { return false }

func copyRowsVec[T floatT](xp, src []T, o, h, s, w int) bool { return false }

func mulAddRepVec[T floatT](dst, x, y []T, n, reps int) bool { return false }

func axpyTapsVec[T floatT](dst []T, rs int, x, w []T, n int) bool { return false }

func reduceTaps9Vec[T floatT](o, x, y []T, c, points, xs, ys int) bool { return false }

func rowScalarsVec[T numT](op core.BinOp, o, v, s []T, vo, so, sv2, ss2, last int, left bool) bool {
	return false
}

func axpyPlane[T floatT](d, s []T, v T) { axpyUnit(d, s, v) }

// simdColSum: no vector loops on this platform.
func simdColSum[T numT](dst, x []T, ldx, rows int) int { return 0 }

// transposeTileVec: no vector loops on this platform.
func transposeTileVec[T elem](out []T, oo, oa int, x []T, xo, sb, ni, nj int) bool { return false }

func winDotWidth[T floatT](n int) int { return 0 }

func winDotVec[T floatT](steps int, tab []int64, x []T, idx *[8]int64, v []T, ldv int, o []T, ldo, w int) bool {
	return false
}

func dwWidth[T floatT]() int { return 0 }

func dwForwardVec[T floatT](utab []int64, x []T, vt []int64, f []T, ldf int, o []T, ldo, w int) bool {
	return false
}

func dwFilterVec[T floatT](utab []int64, x []T, vt []int64, d []T, ldd int, acc []T, w int) bool {
	return false
}

func rowSumsRows[T numT]() int { return 0 }

func rowSumsVec[T numT](acc, x []T, ldx, n int) bool { return false }

func dwInputVec[T floatT](utab []int64, y []T, vt []int64, d []T, ldd int, f []T, ldf, w int) bool {
	return false
}

func gatherAxpyVec[T floatT](v []T, offs []int, b, out []T, cols int) int { return 0 }
