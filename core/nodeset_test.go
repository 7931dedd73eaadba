package core

import (
	"fmt"
	"testing"
)

// TestNodeSet: both modes of the visited set across several growths: every node
// is absent once, then present; ids are dense and stable; tags are part of add's key.
func TestNodeSet(t *testing.T) {
	nodes := make([]*Var, 5000)
	for i := range nodes {
		nodes[i] = &Var{node: node{Scalar(Float64)}, Name: "v"}
	}
	for round := 0; round < 3; round++ {
		s := newNodeSet()
		for i, v := range nodes {
			if !s.insert(v.base()) {
				t.Fatalf("round %d: node %d present before insertion", round, i)
			}
		}
		for i, v := range nodes {
			if s.insert(v.base()) {
				t.Fatalf("round %d: node %d absent after insertion", round, i)
			}
			if id := s.id(v.base()); id != i {
				t.Fatalf("round %d: node %d has id %d", round, i, id)
			}
		}
		s = newNodeSet()
		for i, v := range nodes {
			for tag := uint32(0); tag < 3; tag++ {
				if s.has(v.base(), tag) || !s.add(v.base(), tag) {
					t.Fatalf("round %d: node %d tag %d present before insertion", round, i, tag)
				}
			}
		}
		for i, v := range nodes {
			if s.add(v.base(), 1) || !s.has(v.base(), 2) || s.has(v.base(), 3) {
				t.Fatalf("round %d: node %d: wrong membership", round, i)
			}
		}
	}
}

// TestWalksConcurrent: walks from several goroutines, nested
// walks included, see every node once (run with -race).
func TestWalksConcurrent(t *testing.T) {
	p, err := ParseProgram(`fn (x : [3] f64, y : [3] f64) =>
  let a = x * y in let b = a + a in let c = b * a in sumOuter (c + b)`)
	if err != nil {
		t.Fatal(err)
	}
	want := Size(p.Body)
	done := make(chan error)
	for g := 0; g < 8; g++ {
		go func() {
			for i := 0; i < 200; i++ {
				n := 0
				PostOrder(p.Body, func(x Term) {
					n++
					if Size(x) > want {
						t.Error("a subterm larger than the term")
					}
				})
				if n != want {
					done <- fmt.Errorf("walk saw %d nodes, want %d", n, want)
					return
				}
				if err := Check(&Program{Params: p.Params, Body: p.Body}); err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
	}
	for g := 0; g < 8; g++ {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}
