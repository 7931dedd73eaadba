// Package dist trains Gorgonia models data-parallel over MPI: every process (rank) holds a
// replica of the model, computes the gradients of its shard of each batch, and an all-reduce
// averages them, so that every replica takes the same solver step. It plugs into the MPI
// implementations HPC clusters and Kubernetes already run — Open MPI and MPICH (and the
// libraries that keep MPICH's binary interface), started by mpirun/mpiexec, Slurm's srun or a
// Kubeflow MPIJob — and implements no communication of its own.
//
// The MPI library is loaded at run time through purego: no cgo, nothing to install to build,
// and one binary runs under either family. A program no launcher started is the one-process
// world (rank 0 of 1) and loads nothing, so the same program trains on a laptop unchanged.
//
// # Communicator
//
// Init joins the job and returns the world Comm: Rank, Size, in-place AllReduceFloat64 and
// AllReduceFloat32 (Sum, Mean, Max), BroadcastFloat64/32, Barrier, Abort and Finalize. Init
// finds the launcher from its environment (OMPI_COMM_WORLD_*, PMI_RANK/PMI_SIZE, PMIX_RANK),
// loads Open MPI's libmpi.so.40 or MPICH's libmpich.so.12 (BULKAD_MPI names another), and
// asks for MPI_THREAD_SERIALIZED: goroutines move between OS threads, so Comm serialises its
// calls with a mutex (and, should a library grant less, runs them all on the thread that
// initialised MPI). The two families differ in their binary interface — Open MPI's handles
// (MPI_COMM_WORLD, MPI_DOUBLE, MPI_SUM…) are addresses of objects the library exports
// (ompi_mpi_comm_world…), MPICH's are integers from its mpi.h — so the package keeps a table per
// family. MPICH's transport (UCX) installs handlers for SIGSEGV, SIGBUS, SIGFPE and SIGILL when
// it loads, which would turn a recoverable Go panic (a nil dereference) into a crash; on Linux,
// Init puts the Go runtime's handlers back.
//
// # Data parallelism
//
// DataParallel works on a model's learnable nodes (or any []gorgonia.ValueGrad), after the
// machine has run the forward and backward pass and before the solver steps:
//
//	world, err := dist.Init()
//	…build the graph, grads via bulkad.Grad or gorgonia.Grad, NewTapeMachine(g, BindDualValues(learn...))…
//	dp, err := dist.NewDataParallel(world, learn)
//	err = dp.BroadcastParams()             // rank 0's initial parameters everywhere
//	for each step {
//		let x, y be this rank's shard of the batch; vm.RunAll()
//		m, err := dp.AverageGradients(float64(shard), loss)   // one packed all-reduce
//		solver.Step(gorgonia.NodesToValueGrads(learn)); vm.Reset()
//	}
//	err = dp.CheckParams()                 // every rank holds rank 0's parameters, bit for bit
//	world.Finalize()                       // on an error: world.Abort(err)
//
// AverageGradients packs every gradient, scaled by this rank's weight (the number of examples
// its loss and gradients average over, so that uneven shards count right), together with the
// weighted loss and metrics and the weight itself, into one buffer, sums it across ranks in a
// single all-reduce, and writes the weighted means back into the gradients in place. Every
// rank then holds the gradient of the whole batch, and the solver — any of Gorgonia's, each
// keeping its own state on every rank — takes the same step everywhere. Two ranks on
// half-batches reproduce the single-process loss curve to about 1e-15 relative in float64.
// It works with BindDualValues (the solver reads the dual values) and without (the gradient
// nodes' values), with gradients from bulkad.Grad or gorgonia.Grad.
//
// # Failure
//
// A rank that fails must call Abort, never Finalize: MPI_Abort makes the launcher stop the
// whole job (in a few seconds), whereas a rank that finalises and exits leaves the others
// blocked in their next all-reduce. A rank that panics or exits with a non-zero status also
// ends the job under mpirun (Open MPI) and mpiexec (MPICH's Hydra). Errors name the package,
// the operation and the rank: "dist: allreduce float64 (rank 1 of 4): MPI_Allreduce: …".
//
// # Later work, on paper
//
// Overlapping communication with the backward pass. AverageGradients runs after the whole
// backward pass, so the all-reduce adds its full time to every step (between two ranks of one
// machine, 0.3–0.4 ms for the 3.1 MiB of an MLP 784-512-10's float64 gradients, and 0.4 ms of
// packing; across machines, at least the gradient's size over the network's bandwidth). PyTorch's DistributedDataParallel hides most of it: gradients
// are grouped into buckets of about 25 MB in reverse order of the forward pass, and each
// bucket's all-reduce starts, non-blocking, as soon as the backward pass has produced all of
// its gradients, while the backward pass goes on with the earlier layers. Here that needs three
// things: the raised gradient program split into stages whose outputs are buckets (raise
// already raises whole regions as single nodes; the split would follow the reverse pass's
// order), a hook that fires when the TapeMachine has computed a stage (a custom op at the end
// of each stage that starts MPI_Iallreduce on its bucket), and MPI_Wait on every bucket before
// the solver steps. The non-blocking calls need MPI_Request handles (pointers in Open MPI,
// ints in MPICH: one more row in each family's table) and a progress guarantee while Go
// computes (an MPI progress thread, or MPI_Test calls from the hook of the next stage).
//
// A GPU path. Should bulkad keep parameters and gradients in device memory, reducing them
// through host memory would cost two copies per step. NCCL (or RCCL) all-reduces device
// buffers directly over NVLink and InfiniBand; it can be loaded through purego like libmpi
// (ncclGetUniqueId, ncclCommInitRank, ncclAllReduce, ncclGroupStart/End, stream
// synchronisation through the device back end). MPI stays the launcher and the bootstrap:
// rank 0 calls ncclGetUniqueId and broadcasts its 128 bytes with MPI_Bcast, every rank calls
// ncclCommInitRank with its MPI rank and size, and failures still end the job with MPI_Abort.
package dist
