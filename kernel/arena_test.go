package kernel

import (
	"bufio"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/bulkad/bulkad/core"
)

func TestAllocBuffers(t *testing.T) {
	for _, c := range []struct {
		name  string
		sizes []bufSize
	}{
		{"small", []bufSize{{core.Float32, 5}, {core.Float64, 17}, {core.Float32, 16}, {core.Int64, 3}, {core.Float32, 1}}},
		{"huge arena", []bufSize{{core.Float32, 1 << 20}, {core.Float32, 7}, {core.Float64, 3}, {core.Float32, 1<<20 + 1}, {core.Bool, 2}}},
		{"none", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			bufs := allocBuffers(c.sizes)
			if len(bufs) != len(c.sizes) {
				t.Fatalf("%d buffers for %d sizes", len(bufs), len(c.sizes))
			}
			type span struct{ lo, hi uintptr }
			var spans []span
			for i, s := range c.sizes {
				b := bufs[i]
				if SliceDtype(b) != s.dt || SliceLen(b) != s.n {
					t.Fatalf("buffer %d: %v of %d elements, want %v of %d", i, SliceDtype(b), SliceLen(b), s.dt, s.n)
				}
				var lo, size uintptr
				switch x := b.(type) {
				case []float32:
					if cap(x) != len(x) || nonzero(x) {
						t.Fatalf("buffer %d: capacity %d of %d, or not zeroed", i, cap(x), len(x))
					}
					lo, size = uintptr(unsafe.Pointer(unsafe.SliceData(x))), 4
				case []float64:
					if cap(x) != len(x) || nonzero(x) {
						t.Fatalf("buffer %d: capacity %d of %d, or not zeroed", i, cap(x), len(x))
					}
					lo, size = uintptr(unsafe.Pointer(unsafe.SliceData(x))), 8
				default:
					continue
				}
				if lo%64 != 0 {
					t.Errorf("buffer %d starts at %#x, not on a 64-byte line", i, lo)
				}
				spans = append(spans, span{lo, lo + uintptr(s.n)*size})
			}
			for i, a := range spans {
				for _, b := range spans[i+1:] {
					if a.lo < b.hi && b.lo < a.hi {
						t.Fatalf("buffers at [%#x, %#x) and [%#x, %#x) overlap", a.lo, a.hi, b.lo, b.hi)
					}
				}
			}
		})
	}
}

func nonzero[T float32 | float64](x []T) bool {
	for _, v := range x {
		if v != 0 {
			return true
		}
	}
	return false
}

// TestHugeSlice checks hugeSlice's alignment (64-byte lines, huge pages from hugeMin) and, on Linux, that the system took the advice
// for its whole huge pages ("hg" among the flags of the mapping holding them).
func TestHugeSlice(t *testing.T) {
	if hugeMin < hugePage {
		t.Fatalf("hugeMin %d is below a huge page (%d): a slice of hugeMin bytes holds no whole huge page to advise", hugeMin, hugePage)
	}
	for _, n := range []int{10, hugeMin/4 - 1, hugeMin / 4, 3*hugePage/4 + 5} {
		b := hugeSlice[float32](n)
		if len(b) != n || cap(b) != n || nonzero(b) {
			t.Fatalf("%d elements: length %d, capacity %d, or not zeroed", n, len(b), cap(b))
		}
		addr := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
		big := n*4 >= hugeMin && hugeAdvice
		if addr%64 != 0 {
			t.Fatalf("%d elements at %#x: not on a 64-byte line", n, addr)
		}
		if big && addr%hugePage != 0 {
			t.Fatalf("%d elements at %#x: not on a huge page", n, addr)
		}
		if !big || runtime.GOOS != "linux" {
			continue
		}
		flags, err := vmFlags(addr)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(" "+flags+" ", " hg ") {
			// no flag: an error where the system takes the advice (a kernel without
			// transparent huge pages refuses it)
			if adviseHuge(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(b))), hugePage)) == nil {
				t.Errorf("%d elements at %#x: mapping flags %q lack hg (MADV_HUGEPAGE)", n, addr, flags)
			} else {
				t.Logf("madvise(MADV_HUGEPAGE) refused here: no flag to check")
			}
		}
		b[n-1] = 1 // the slice is usable to its end
	}
}

// vmFlags returns the VmFlags line of the mapping of /proc/self/smaps holding addr.
func vmFlags(addr uintptr) (string, error) {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	in := false
	for sc.Scan() {
		l := sc.Text()
		if lo, hi, ok := strings.Cut(strings.Fields(l + " ")[0], "-"); ok { // a mapping's header
			a, e1 := strconv.ParseUint(lo, 16, 64)
			b, e2 := strconv.ParseUint(hi, 16, 64)
			if e1 == nil && e2 == nil {
				in = uint64(addr) >= a && uint64(addr) < b
				continue
			}
		}
		if in && strings.HasPrefix(l, "VmFlags:") {
			return strings.TrimSpace(strings.TrimPrefix(l, "VmFlags:")), nil
		}
	}
	return "", os.ErrNotExist
}
