package kernel

import (
	"unsafe"

	"github.com/bulkad/bulkad/core"
)

// bufSize is the dtype and length of one of a plan's buffers.
type bufSize struct {
	dt core.Dtype
	n  int
}

// hugePage is the size of a transparent huge page (2 MiB on amd64 and arm64 Linux), and
// hugeMin the size in bytes from which an arena is placed on such pages (hugeSlice).
const (
	hugePage = 2 << 20
	hugeMin  = 4 << 20
)

// allocBuffers allocates a plan's buffers. Those of each float dtype are carved from one
// arena, each starting on a 64-byte line, with a capacity of its own length; the arena is
// a hugeSlice. A plan's buffers are its working set at every step: on 4 KiB pages the zoo
// MobileNet's 31 MB span 7,700 pages, more than the data TLB holds, and its depthwise
// windows and transpositions, which touch several pages per vector, missed it (the one-thread
// step was 10–15% slower than on huge pages). Other dtypes get a slice each.
func allocBuffers(sizes []bufSize) []any {
	out := make([]any, len(sizes))
	carve[float64](sizes, core.Float64, out)
	carve[float32](sizes, core.Float32, out)
	for i, s := range sizes {
		if out[i] == nil {
			out[i] = makeSlice(s.dt, s.n)
		}
	}
	return out
}

// carve sets out[i] for the buffers of dtype dt (of element type T) to slices of one arena,
// each at an offset on a 64-byte line (alignOffset, as the packed output's slots).
func carve[T float64 | float32](sizes []bufSize, dt core.Dtype, out []any) {
	total := 0
	for _, s := range sizes {
		if s.dt == dt {
			total = alignOffset(total, dt) + s.n
		}
	}
	if total == 0 {
		return
	}
	arena := hugeSlice[T](total)
	off := 0
	for i, s := range sizes {
		if s.dt == dt {
			off = alignOffset(off, dt)
			out[i] = arena[off : off+s.n : off+s.n]
			off += s.n
		}
	}
}

// hugeSlice returns n zeroed elements starting on a 64-byte line. From hugeMin bytes on they
// start on a hugePage boundary of a larger allocation (up to hugePage bytes of it unused, and
// not touched when the memory is fresh from the system) and their whole huge pages are
// advised to be backed by transparent huge pages (adviseHuge: Linux's madvise(MADV_HUGEPAGE),
// which its default "madvise" setting needs; nothing elsewhere), before anything touches
// them. Go's heap does not ask for huge pages itself.
func hugeSlice[T floatT](n int) []T {
	size := int(unsafe.Sizeof(T(0)))
	huge := n*size >= hugeMin && hugeAdvice
	align := 64
	if huge {
		align = hugePage
	}
	b := make([]T, n+align/size)
	addr := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	skip := int((uintptr(align) - addr%uintptr(align)) % uintptr(align) / uintptr(size))
	b = b[skip : skip+n : skip+n]
	if huge {
		whole := n * size / hugePage * hugePage
		_ = adviseHuge(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(b))), whole)) // advice only
	}
	return b
}
