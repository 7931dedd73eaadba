// Command bench measures bulkad against Gorgonia's own autodiff in one process: for each zoo
// model and dtype it builds the same graph three times (gradient by bulkad.Grad, gradient by
// gorgonia.Grad, forward only), then steps them alternately (A B C A B C …) for several rounds
// and prints medians as a markdown table: step times, their ratio, (value + gradient) /
// forward, nodes each Grad added, differentiation time and bytes allocated per step. It also
// times bulkad.Grad on MLPs of 10, 100 and 1000 layers and fits the growth exponent of
// differentiation time over graph size.
//
//	go run ./examples/bench            # full sizes (about a minute)
//	go run ./examples/bench -small     # tiny sizes (smoke test)
//	go run ./examples/bench -json
//
// Ratios measured in one run are meaningful; absolute times depend on the machine's load.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"gorgonia.org/tensor"
)

// Result is everything the command measures.
type Result struct {
	Rows   []Row   `json:"rows"`
	Growth *Growth `json:"growth"`
}

func main() {
	small := flag.Bool("small", false, "tiny models (smoke test)")
	rounds := flag.Int("rounds", 15, "measured rounds per model (after one warm-up)")
	asJSON := flag.Bool("json", false, "print JSON")
	only := flag.String("model", "", "only models whose name starts with this")
	flag.Parse()
	res, err := run(*small, *rounds, *only, !*asJSON)
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
	if *asJSON {
		b, _ := json.MarshalIndent(res, "", "  ")
		fmt.Println(string(b))
	}
}

func run(small bool, rounds int, only string, verbose bool) (*Result, error) {
	res := &Result{}
	if verbose {
		fmt.Println(header)
	}
	for _, s := range specs(small) {
		if only != "" && (len(s.Name) < len(only) || s.Name[:len(only)] != only) {
			continue
		}
		for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
			row, err := measure(s, dt, rounds)
			if err != nil {
				return nil, err
			}
			res.Rows = append(res.Rows, row)
			if verbose {
				fmt.Println(fmtRow(row))
			}
		}
	}
	depths := []int{10, 100, 1000}
	if small {
		depths = []int{5, 20, 80}
	}
	g, err := growth(depths, 16)
	if err != nil {
		return nil, err
	}
	res.Growth = g
	if verbose {
		fmt.Println()
		fmt.Println("| MLP layers | graph nodes | bulkad.Grad ms (translate+BOT+AD+simplify+raise) |\n|---|---|---|")
		for i := range g.Layers {
			fmt.Printf("| %d | %d | %.1f |\n", g.Layers[i], g.Nodes[i], g.Millis[i])
		}
		fmt.Printf("\ngrowth exponent of differentiation time over graph size: %.2f (1.0 = linear)\n", g.Exponent)
	}
	return res, nil
}
