// Package graphargs validates the arguments every gradient entry point takes: a cost node
// and the nodes to differentiate it with respect to (bulkad.Grad and its siblings,
// gradcheck.Check).
package graphargs

import (
	"github.com/pkg/errors"
	"gorgonia.org/gorgonia"
)

// Check returns an error unless cost is a scalar node of a graph and wrt is one or more
// nodes of the same graph. Its errors name no package or operation: the caller adds them.
func Check(cost *gorgonia.Node, wrt []*gorgonia.Node) error {
	if cost == nil {
		return errors.New("cost node is nil")
	}
	g := cost.Graph()
	if g == nil {
		return errors.Errorf("cost node %v belongs to no graph", cost)
	}
	if !cost.IsScalar() {
		return errors.Errorf("cost %v has shape %v, want a scalar", cost, cost.Shape())
	}
	if len(wrt) == 0 {
		return errors.New("no wrt nodes")
	}
	for i, w := range wrt {
		if w == nil {
			return errors.Errorf("wrt node %d is nil", i)
		}
		if w.Graph() != g {
			return errors.Errorf("wrt node %d (%v) belongs to another graph than the cost", i, w)
		}
	}
	return nil
}
