package core

import "unsafe"

// nodeSet is the visited set of one walk: a set of (node, tag) pairs by node identity
// (PostOrder uses tag 0; Check tags a node with the scope version it is reached in).
//
// It is an open-addressing hash table over the nodes' addresses (one flat slice, cheaper than
// a map's buckets), made for one walk (the package keeps no state between walks). A slot is
// occupied when its generation is the set's. Slots hold addresses as integers: during a walk
// the nodes it records are reachable from the walk's root, which the caller holds, and Go's
// heap objects do not move, so an address identifies one node for the walk's duration.
type nodeSet struct {
	slots []nodeSlot // length a power of two
	n     int        // occupied slots of this generation
	gen   uint32
	ids   bool // keyed by address alone, the tags being ids (insert), not keys (add)
	// the walks' buffers, reused with the set (empty between walks): PostOrder's and
	// Check's
	kids  []Term
	stack []walkFrame
	undo  []shadowed
}

type nodeSlot struct {
	addr uintptr
	tag  uint32
	gen  uint32
}

// newNodeSet returns an empty set for one walk.
func newNodeSet() *nodeSet {
	return &nodeSet{slots: make([]nodeSlot, 256), gen: 1}
}

func nodeHash(addr uintptr, tag uint32) uint64 {
	h := (uint64(addr)>>3 ^ uint64(tag)*0x9E3779B97F4A7C15) * 0xBF58476D1CE4E5B9
	return h ^ h>>31
}

// add inserts (n, tag) and reports whether it was absent.
func (s *nodeSet) add(n *node, tag uint32) bool {
	if 2*(s.n+1) > len(s.slots) {
		s.grow()
	}
	addr := uintptr(unsafe.Pointer(n))
	mask := uint64(len(s.slots) - 1)
	for i := nodeHash(addr, tag) & mask; ; i = (i + 1) & mask {
		sl := &s.slots[i]
		if sl.gen != s.gen {
			*sl = nodeSlot{addr: addr, tag: tag, gen: s.gen}
			s.n++
			return true
		}
		if sl.addr == addr && sl.tag == tag {
			return false
		}
	}
}

// grow doubles the table, keeping this generation's entries.
func (s *nodeSet) grow() {
	old := s.slots
	s.slots = make([]nodeSlot, 2*len(old))
	mask := uint64(len(s.slots) - 1)
	for _, sl := range old {
		if sl.gen != s.gen {
			continue
		}
		tag := sl.tag
		if s.ids {
			tag = 0
		}
		i := nodeHash(sl.addr, tag) & mask
		for s.slots[i].gen == s.gen {
			i = (i + 1) & mask
		}
		s.slots[i] = sl
	}
}

// has reports whether (n, tag) is in the set.
func (s *nodeSet) has(n *node, tag uint32) bool {
	addr := uintptr(unsafe.Pointer(n))
	mask := uint64(len(s.slots) - 1)
	for i := nodeHash(addr, tag) & mask; ; i = (i + 1) & mask {
		sl := &s.slots[i]
		if sl.gen != s.gen {
			return false
		}
		if sl.addr == addr && sl.tag == tag {
			return true
		}
	}
}

// insert adds node n, keyed by its address alone, with the tag s.n (its discovery number:
// the nodes of a walk are numbered 0, 1, … in the order they are inserted), and reports
// whether it was absent. A set is used either with insert and id or with add and has.
func (s *nodeSet) insert(n *node) bool {
	s.ids = true
	if 2*(s.n+1) > len(s.slots) {
		s.grow()
	}
	addr := uintptr(unsafe.Pointer(n))
	mask := uint64(len(s.slots) - 1)
	for i := nodeHash(addr, 0) & mask; ; i = (i + 1) & mask {
		sl := &s.slots[i]
		if sl.gen != s.gen {
			*sl = nodeSlot{addr: addr, tag: uint32(s.n), gen: s.gen}
			s.n++
			return true
		}
		if sl.addr == addr {
			return false
		}
	}
}

// id returns the discovery number of an inserted node n (see insert); n must be in the set.
func (s *nodeSet) id(n *node) int {
	addr := uintptr(unsafe.Pointer(n))
	mask := uint64(len(s.slots) - 1)
	for i := nodeHash(addr, 0) & mask; ; i = (i + 1) & mask {
		sl := &s.slots[i]
		if sl.gen != s.gen {
			panic("core: nodeSet: node not in the set")
		}
		if sl.addr == addr {
			return int(sl.tag)
		}
	}
}
