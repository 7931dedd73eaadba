// Command bench measures bulkad against Gorgonia's own autodiff in one process: for each zoo
// model and dtype it builds the same graph three times (gradient by bulkad.Grad, gradient by
// gorgonia.Grad, forward only), then steps them alternately (A B C A B C …) for several rounds
// and prints medians as a markdown table: step times, their ratio, (value + gradient) /
// forward, nodes each Grad added, differentiation time and bytes allocated per step. It also
// times differentiation on growing graphs — MLPs of 10, 100 and 1000 layers, a tanh/add chain
// of 5,000, 10,000 and 20,000 nodes reusing one weight, a tanh RNN of 500, 1000 and 2000 steps
// — separating Differentiate, Raise and the time Raise spends in Gorgonia's own node
// constructors (Gorgonia scans every node of the graph for each new one: quadratic whatever
// bulkad does), and fits the growth exponent of each over the graph's node count.
//
//	go run ./examples/bench            # full sizes (about a minute)
//	go run ./examples/bench -small     # tiny sizes (smoke test)
//	go run ./examples/bench -json
//	go run ./examples/bench -growth    # only the growth tables
//	go run ./examples/bench -blas      # Gorgonia's own products on bulkad's GEMM (bulkad.UseBLAS)
//
// Ratios measured in one run are meaningful; absolute times depend on the machine's load.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"gorgonia.org/tensor"

	"github.com/bulkad/bulkad"
)

// Result is everything the command measures.
type Result struct {
	Rows   []Row     `json:"rows"`
	Growth []*Growth `json:"growth"`
}

func main() {
	small := flag.Bool("small", false, "tiny models (smoke test)")
	rounds := flag.Int("rounds", 15, "measured rounds per model (after one warm-up)")
	asJSON := flag.Bool("json", false, "print JSON")
	only := flag.String("model", "", "only models whose name starts with this")
	growthOnly := flag.Bool("growth", false, "only the growth tables (no step times)")
	useBLAS := flag.Bool("blas", false, "install bulkad's GEMM as Gorgonia's BLAS (bulkad.UseBLAS) before measuring")
	flag.Parse()
	if *useBLAS {
		bulkad.UseBLAS()
	}
	if *growthOnly {
		*only = "\x00none"
	}
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
	if verbose && only != "\x00none" {
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
	for _, f := range families(small) {
		reps := 3
		if !small && f.Name != "mlp" {
			reps = 2
		}
		g, err := growth(f, reps)
		if err != nil {
			return nil, err
		}
		res.Growth = append(res.Growth, g)
	}
	if verbose {
		fmt.Println()
		printGrowth(os.Stdout, res.Growth)
	}
	return res, nil
}
