package adapter_test

import (
	"fmt"
	"sort"

	"github.com/bulkad/bulkad/adapter"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// cost = Σ tanh(x ⊙ w) translated with respect to w. The data input x is a parameter too;
// each op node becomes one let named after its op and node ID, and the program's body is
//
//	let bin_2 = x_0 * w_1 in let un_3 = tanh bin_2 in let sum_4 = sumOuter (reshape [6] un_3) in sum_4
func ExampleTranslate() {
	g := G.NewGraph()
	x := G.NewMatrix(g, tensor.Float64, G.WithShape(2, 3), G.WithName("x"))
	w := G.NewMatrix(g, tensor.Float64, G.WithShape(2, 3), G.WithName("w"))
	cost := G.Must(G.Sum(G.Must(G.Tanh(G.Must(G.HadamardProd(x, w))))))
	tr, err := adapter.Translate(cost, w)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("wrt:", tr.Wrt)
	for _, p := range tr.Program.Params {
		fmt.Printf("param %s : %v = node %q\n", p.Name, p.Type(), tr.Params[p.Name].Name())
	}
	var lets []string
	for name := range tr.Lets {
		lets = append(lets, name)
	}
	sort.Strings(lets)
	for _, name := range lets {
		fmt.Printf("let %s = node %d (%v)\n", name, tr.Lets[name].ID(), tr.Lets[name].Op())
	}
	// Output:
	// wrt: [w_1]
	// param w_1 : [2,3] f64 = node "w"
	// param x_0 : [2,3] f64 = node "x"
	// let bin_2 = node 2 (⊙ false)
	// let sum_4 = node 4 (Σ[0 1])
	// let un_3 = node 3 (tanh)
}
