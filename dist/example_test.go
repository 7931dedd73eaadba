package dist_test

import (
	"fmt"
	"log"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/bulkad/bulkad"
	"github.com/bulkad/bulkad/dist"
)

// Example fits y = 2·x₀ − 3·x₁ data-parallel: each rank takes every Size-th row of the data,
// and the averaged gradients make every rank take the step of the whole data set. Run alone
// it is the one-process world; `mpirun -np 4` runs the same program on four ranks (the rows
// then split 2 per rank) and prints the same line from rank 0.
func Example() {
	world, err := dist.Init()
	if err != nil {
		log.Fatal(err) // no MPI running yet: a plain exit
	}
	check := func(err error) {
		if err != nil {
			world.Abort(err) // ends every rank of the job, naming this rank and err
		}
	}
	xs := [][2]float64{{1, 0}, {0, 1}, {1, 1}, {2, -1}, {-1, 2}, {0.5, 0.5}, {3, 1}, {-2, -2}}
	var xv, yv []float64
	for i := world.Rank(); i < len(xs); i += world.Size() {
		xv = append(xv, xs[i][0], xs[i][1])
		yv = append(yv, 2*xs[i][0]-3*xs[i][1])
	}
	n := len(yv) // this rank's shard

	g := G.NewGraph()
	x := G.NewMatrix(g, tensor.Float64, G.WithShape(n, 2), G.WithName("x"), G.WithValue(tensor.New(tensor.WithShape(n, 2), tensor.WithBacking(xv))))
	y := G.NewVector(g, tensor.Float64, G.WithShape(n), G.WithName("y"), G.WithValue(tensor.New(tensor.WithShape(n), tensor.WithBacking(yv))))
	w := G.NewVector(g, tensor.Float64, G.WithShape(2), G.WithName("w"), G.WithInit(G.Gaussian(0, 1))) // different on every rank
	cost := G.Must(G.Mean(G.Must(G.Square(G.Must(G.Sub(G.Must(G.Mul(x, w)), y))))))
	_, err = bulkad.Grad(cost, w) // or gorgonia.Grad
	check(err)
	vm := G.NewTapeMachine(g, G.BindDualValues(w))
	defer vm.Close()
	solver := G.NewVanillaSolver(G.WithLearnRate(0.1))

	dp, err := dist.NewDataParallel(world, G.Nodes{w})
	check(err)
	check(dp.BroadcastParams()) // rank 0's initial w everywhere
	var loss float64
	for step := 0; step < 200; step++ {
		check(vm.RunAll())
		m, err := dp.AverageGradients(float64(n), cost.Value().Data().(float64))
		check(err)
		loss = m[0] // the loss of the whole data set
		check(solver.Step(G.NodesToValueGrads(G.Nodes{w})))
		vm.Reset()
	}
	check(dp.CheckParams())
	if world.Rank() == 0 {
		fmt.Printf("w = %.3f, loss %.4f\n", w.Value().Data(), loss)
	}
	check(world.Finalize())
	// Output: w = [2.000 -3.000], loss 0.0000
}
