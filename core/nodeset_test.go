package core

import "testing"

// TestNodeSet: both modes of the visited set across several growths and reuses: every node
// is absent once, then present; ids are dense and stable; tags are part of add's key.
func TestNodeSet(t *testing.T) {
	nodes := make([]*Var, 5000)
	for i := range nodes {
		nodes[i] = &Var{node: node{Scalar(Float64)}, Name: "v"}
	}
	for round := 0; round < 3; round++ {
		s := getNodeSet()
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
		s.put()
		s = getNodeSet()
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
		s.put()
	}
}
