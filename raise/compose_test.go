package raise

import (
	"math/rand"
	"testing"

	"github.com/bulkad/bulkad/core"
)

// TestComposeStrides: a strided read of an operand composed with the operand's own view
// reads, at every index, the base element that reading the operand's coordinates through the
// view gives (checked by enumeration); the table's reads that move two coordinates with one
// stride, or run past a dimension, are refused, and so is every random read the enumeration
// finds inexact.
func TestComposeStrides(t *testing.T) {
	cases := []struct {
		name    string
		ext     []int
		strides []int
		off     int
		xsh     core.Shape
		xv      []int // the operand's view strides
		xoff    int
		ok      bool
	}{
		{"repeat of a broadcast", []int{2, 3, 4}, []int{3, 1, 0}, 0, core.Shape{2, 3, 1}, []int{0, 1, 0}, 0, true},
		{"offset coordinates", []int{2}, []int{1}, 4, core.Shape{2, 3}, []int{10, 2}, 5, true},
		{"a unit extent's stride is never taken", []int{1, 3}, []int{99, 1}, 0, core.Shape{3}, []int{2}, 1, true},
		{"one stride moves two coordinates", []int{2}, []int{4}, 0, core.Shape{2, 3}, []int{3, 1}, 0, false},
		{"past the first dimension", []int{3}, []int{3}, 0, core.Shape{2, 3}, []int{3, 1}, 0, false},
		{"two strides past one dimension together", []int{2, 2}, []int{1, 1}, 0, core.Shape{2, 2}, []int{2, 1}, 0, false},
		{"an offset beyond the operand", []int{1}, []int{0}, 6, core.Shape{2, 3}, []int{3, 1}, 0, false},
		{"a negative stride", []int{2}, []int{-1}, 1, core.Shape{2}, []int{1}, 0, false},
	}
	for _, c := range cases {
		xv := view{strides: c.xv, offset: c.xoff}
		st, off, ok := composeStrides(c.ext, c.strides, c.off, c.xsh, xv)
		if ok != c.ok {
			t.Errorf("%s: ok %v, want %v", c.name, ok, c.ok)
			continue
		}
		if ok {
			if msg := composedMismatch(c.ext, c.strides, c.off, c.xsh, xv, st, off); msg != "" {
				t.Errorf("%s: %s", c.name, msg)
			}
		}
	}
	r := rand.New(rand.NewSource(5))
	accepted := 0
	for range 3000 {
		xsh := make(core.Shape, 1+r.Intn(3))
		xvs := make([]int, len(xsh))
		for d := range xsh {
			xsh[d] = 1 + r.Intn(4)
			xvs[d] = r.Intn(5)
		}
		ext := make([]int, 1+r.Intn(3))
		strides := make([]int, len(ext))
		rm := xsh.Strides()
		for e := range ext {
			ext[e] = 1 + r.Intn(3)
			switch r.Intn(3) {
			case 0: // a zero stride
			case 1: // one coordinate
				strides[e] = rm[r.Intn(len(xsh))] * (1 + r.Intn(2))
			default:
				strides[e] = r.Intn(xsh.Size() + 1)
			}
		}
		off := r.Intn(xsh.Size())
		xv := view{strides: xvs, offset: r.Intn(3)}
		st, o, ok := composeStrides(ext, strides, off, xsh, xv)
		if !ok {
			continue
		}
		accepted++
		if msg := composedMismatch(ext, strides, off, xsh, xv, st, o); msg != "" {
			t.Fatalf("ext %v strides %v off %d xsh %v view %v+%d: %s", ext, strides, off, xsh, xvs, xv.offset, msg)
		}
	}
	if accepted < 300 {
		t.Errorf("only %d of 3000 random reads composed: the test checks too little", accepted)
	}
}

// composedMismatch enumerates the read and returns a description of the first index where
// the composed strides disagree with reading the operand's coordinates through the view, or
// where the read leaves the operand ("" when none does).
func composedMismatch(ext, strides []int, off int, xsh core.Shape, xv view, st []int, o int) string {
	rm := xsh.Strides()
	idx := make([]int, len(ext))
	for {
		p, q := off, o
		for e, i := range idx {
			p += i * strides[e]
			q += i * st[e]
		}
		if p < 0 || p >= xsh.Size() {
			return "the read leaves the operand"
		}
		want := xv.offset
		for d := range xsh {
			want += (p / rm[d]) % xsh[d] * xv.strides[d]
		}
		if q != want {
			return "composed position differs"
		}
		e := len(idx) - 1
		for ; e >= 0; e-- {
			if idx[e]++; idx[e] < ext[e] {
				break
			}
			idx[e] = 0
		}
		if e < 0 {
			return ""
		}
	}
}

// TestReshapeStrides: a strided read reshaped reads, at every index of the new shape, the
// base element the old read gives at the same row-major position (checked by enumeration);
// reshapes that merge dimensions not stepped through evenly (a transpose's) are refused, and
// the random reads' refusals are never checked wrong where accepted.
func TestReshapeStrides(t *testing.T) {
	cases := []struct {
		name     string
		old      core.Shape
		st       []int
		nw       core.Shape
		ok       bool
		wantLast int
	}{
		{"split a broadcast", core.Shape{32, 16, 256}, []int{16, 1, 0}, core.Shape{32, 16, 16, 16}, true, 0},
		{"merge contiguous", core.Shape{4, 3, 5}, []int{15, 5, 1}, core.Shape{12, 5}, true, 1},
		{"unit dimensions anywhere", core.Shape{4, 1, 6}, []int{6, 99, 1}, core.Shape{1, 4, 2, 1, 3}, true, 0},
		{"merge broadcasts", core.Shape{3, 4, 5}, []int{0, 0, 1}, core.Shape{12, 5}, true, 1},
		{"merge a transpose", core.Shape{3, 4}, []int{1, 3}, core.Shape{12}, false, 0},
		{"merge a broadcast into a row", core.Shape{3, 4}, []int{4, 0}, core.Shape{12}, false, 0},
		{"sizes differ", core.Shape{3, 4}, []int{4, 1}, core.Shape{13}, false, 0},
	}
	for _, c := range cases {
		st, ok := reshapeStrides(c.old, c.st, c.nw)
		if ok != c.ok {
			t.Errorf("%s: ok %v, want %v", c.name, ok, c.ok)
			continue
		}
		if ok {
			if msg := reshapedMismatch(c.old, c.st, c.nw, st); msg != "" {
				t.Errorf("%s: %s", c.name, msg)
			}
			if c.name != "unit dimensions anywhere" && st[len(st)-1] != c.wantLast {
				t.Errorf("%s: last stride %d, want %d", c.name, st[len(st)-1], c.wantLast)
			}
		}
	}
	r := rand.New(rand.NewSource(9))
	accepted := 0
	for range 3000 {
		old := make(core.Shape, 1+r.Intn(4))
		for d := range old {
			old[d] = 1 + r.Intn(4)
		}
		st := make([]int, len(old))
		switch r.Intn(3) {
		case 0: // row-major, maybe with broadcasts
			copy(st, old.Strides())
			for d := range st {
				if r.Intn(3) == 0 {
					st[d] = 0
				}
			}
		case 1: // a permutation's strides
			perm := r.Perm(len(old))
			rm := old.Strides()
			for d := range st {
				st[d] = rm[perm[d]]
			}
		default:
			for d := range st {
				st[d] = r.Intn(7)
			}
		}
		// a new shape of the same size: the old extents' factors regrouped
		var factors []int
		for _, d := range old {
			for f := 2; d > 1; {
				if d%f == 0 {
					factors = append(factors, f)
					d /= f
				} else {
					f++
				}
			}
		}
		var nw core.Shape
		for len(factors) > 0 {
			k := 1 + r.Intn(len(factors))
			p := 1
			for _, f := range factors[:k] {
				p *= f
			}
			nw = append(nw, p)
			factors = factors[k:]
			if r.Intn(4) == 0 {
				nw = append(nw, 1)
			}
		}
		if len(nw) == 0 {
			nw = core.Shape{1}
		}
		got, ok := reshapeStrides(old, st, nw)
		if !ok {
			continue
		}
		accepted++
		if msg := reshapedMismatch(old, st, nw, got); msg != "" {
			t.Fatalf("old %v strides %v new %v: strides %v: %s", old, st, nw, got, msg)
		}
	}
	if accepted < 500 {
		t.Errorf("only %d of 3000 random reshapes accepted: the test checks too little", accepted)
	}
}

// reshapedMismatch enumerates the new shape and returns a description of the first index
// whose read through st differs from the old read at the same row-major position.
func reshapedMismatch(old core.Shape, ost []int, nw core.Shape, st []int) string {
	rm := old.Strides()
	for pos := range nw.Size() {
		want, p := 0, pos
		for d := range old {
			want += p / rm[d] % old[d] * ost[d]
		}
		got, q := 0, pos
		for d := len(nw) - 1; d >= 0; d-- {
			got += q % nw[d] * st[d]
			q /= nw[d]
		}
		if got != want {
			return "element differs"
		}
	}
	return ""
}
