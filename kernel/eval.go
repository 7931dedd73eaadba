package kernel

import (
	"sync"

	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/core/tensors"

	"github.com/pkg/errors"
	"gorgonia.org/tensor"
)

// Eval evaluates a program whose body is not a tuple on the given arguments (one per
// parameter, by name) and returns a fresh tensor. See Compile for the semantics of every
// construct and for the argument checks.
func Eval(p *core.Program, args map[string]*tensor.Dense) (*tensor.Dense, error) {
	if p == nil {
		return nil, errors.New("core: eval: nil program")
	}
	if _, r := core.LetChain(p.Body); isTuple(r) {
		return nil, errors.New("core: eval: the program returns a tuple; use EvalTuple")
	}
	outs, err := EvalTuple(p, args)
	if err != nil {
		return nil, err
	}
	return outs[0], nil
}

// EvalTuple evaluates a program and returns its results: the components of a tuple body
// (possibly under lets), or the single result of any other body.
func EvalTuple(p *core.Program, args map[string]*tensor.Dense) ([]*tensor.Dense, error) {
	e, err := Compile(p)
	if err != nil {
		return nil, err
	}
	return e.Run(args)
}

// EvalTerm evaluates a term with free variables, taking the value of each free variable from
// env (entries for names that are not free in t are ignored). The term must not be a tuple.
func EvalTerm(t core.Term, env map[string]*tensor.Dense) (*tensor.Dense, error) {
	if t == nil {
		return nil, errors.New("core: eval: nil term")
	}
	if _, ok := t.(*core.Tuple); ok {
		return nil, errors.New("core: eval: term is a tuple")
	}
	fv := core.FreeVars(t)
	args := make(map[string]*tensor.Dense, len(fv))
	for _, v := range fv {
		d, ok := env[v.Name]
		if !ok {
			return nil, errors.Errorf("core: eval: no value for free variable %s : %v", v.Name, v.Type())
		}
		args[v.Name] = d
	}
	p := &core.Program{Params: fv, Body: t}
	return Eval(p, args)
}

// Exec is a compiled program: the program has been checked once and turned into a plan of
// flat-slice kernels with preallocated buffers, compiled index functions and one memo slot
// per distinct subterm, so that it can be run many times.
//
// An Exec keeps its intermediate buffers between runs. It is safe for concurrent use, but
// its runs are serialised by a mutex; compile one Exec per goroutine for parallel runs.
//
// Semantics of the constructs (paper 000, §3.2–3.3 and §5.2):
//   - let and share evaluate their bound term once per run (share memoised by ID); a subterm
//     of a build1 body that does not depend on a lambda-bound variable is evaluated once per
//     run (more exactly: once per iteration of the innermost enclosing build1 whose variable
//     it depends on), not once per index;
//   - cond is strict: the condition and both branches are evaluated;
//   - f64 computes in float64, f32 in float32, i64 in two's-complement int64;
//   - index, gather: an out-of-bounds index reads zeros; scatter drops out-of-range writes and
//     adds colliding ones;
//   - quot truncates toward zero, rem has the sign of the dividend (Go's / and %), both give 0
//     when dividing by zero;
//   - cast float→int truncates toward zero, NaN and values outside the int64 range give 0;
//     bool→number is 0 or 1; number→bool is x != 0;
//   - argmaxOuter: the first maximum wins, NaN is ignored unless every element is NaN (then
//     0), an empty outer dimension gives 0;
//   - sigmoid is numerically stable, pow is math.Pow, sign(0) = 0, recip(0) = +Inf, max and
//     min return NaN when an operand is NaN;
//   - sumOuter of an empty outer dimension is 0.
type Exec struct {
	mu      sync.Mutex
	prog    *core.Program
	params  []*buf // parameter slots, in Params order (storage set by each run)
	results []*buf
	rtypes  []core.Type
	root    *scope

	// direct is set when the single result is written by a kernel into its own buffer, so
	// RunInto may point that buffer at the caller's output and skip the copy.
	direct bool

	// hook, when set (tests only), is called with the term of every instruction that runs.
	hook func(core.Term)

	ws Workspace // the GEMM's packing buffers
}

// Compile checks a program and prepares it for repeated evaluation (see Exec).
func Compile(p *core.Program) (*Exec, error) {
	if p == nil {
		return nil, errors.New("core: eval: nil program")
	}
	if err := core.Check(p); err != nil {
		return nil, err
	}
	if err := checkLimit(p, "kernel: compile"); err != nil {
		return nil, err
	}
	return compileGuarded(p)
}

func compileGuarded(p *core.Program) (e *Exec, err error) {
	defer func() {
		if x := recover(); x != nil {
			e, err = nil, errors.Errorf("core: eval: internal error while compiling (please report): %v", x)
		}
	}()
	return compileProgram(p)
}

// Params returns the program's parameters in positional (RunInto) order.
func (e *Exec) Params() []*core.Var { return e.prog.Params }

// ResultTypes returns the types of the results, in order.
func (e *Exec) ResultTypes() []core.Type { return append([]core.Type{}, e.rtypes...) }

// Run evaluates the program on the given arguments (one per parameter, by name) and returns
// fresh tensors for the results (the components of a tuple body, or a single result).
// Arguments are checked against the parameter types; their data are read, never written.
func (e *Exec) Run(args map[string]*tensor.Dense) ([]*tensor.Dense, error) {
	if e == nil {
		return nil, errors.New("core: eval: nil Exec")
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for name := range args {
		if e.prog.Param(name) == nil {
			return nil, errors.Errorf("core: eval: argument %s is not a parameter of the program (parameters: %s)", name, paramList(e.prog.Params))
		}
	}
	for i, v := range e.prog.Params {
		d, ok := args[v.Name]
		if !ok {
			return nil, errors.Errorf("core: eval: missing argument for parameter %s : %v", v.Name, v.Type())
		}
		if err := e.bindArg(i, d); err != nil {
			return nil, err
		}
	}
	if err := e.exec(); err != nil {
		return nil, err
	}
	outs := make([]*tensor.Dense, len(e.results))
	for i, r := range e.results {
		outs[i] = r.dense(e.rtypes[i])
	}
	return outs, nil
}

// RunInto evaluates the program with positional arguments (in Params order) and writes the
// results into outs, which must be preallocated with the result types (shape and dtype).
// After the first call it does not allocate for programs made of one array operation.
// The arguments' data are read, never written, and may alias outs only if the program is a
// single element-wise operation.
func (e *Exec) RunInto(outs []*tensor.Dense, args ...*tensor.Dense) error {
	if e == nil {
		return errors.New("core: eval: nil Exec")
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(args) != len(e.params) {
		return errors.Errorf("core: eval: %d arguments for %d parameters (%s)", len(args), len(e.params), paramList(e.prog.Params))
	}
	if len(outs) != len(e.results) {
		return errors.Errorf("core: eval: %d outputs for %d results", len(outs), len(e.results))
	}
	for i, d := range args {
		if err := e.bindArg(i, d); err != nil {
			return err
		}
	}
	for i, o := range outs {
		if err := checkDense("output", i, o, e.rtypes[i]); err != nil {
			return err
		}
	}
	if e.direct {
		r := e.results[0]
		f64, f32, i64, b, err := tensors.Data(outs[0], e.rtypes[0].Dtype, e.rtypes[0].Shape.Size())
		if err != nil {
			return err
		}
		saved := *r
		r.f64, r.f32, r.i64, r.b = f64, f32, i64, b
		err = e.exec()
		*r = saved
		return err
	}
	if err := e.exec(); err != nil {
		return err
	}
	for i, o := range outs {
		r := e.results[i]
		switch e.rtypes[i].Dtype {
		case core.Float64:
			copy(o.Float64s(), r.f64)
		case core.Float32:
			copy(o.Float32s(), r.f32)
		case core.Int64:
			copy(o.Int64s(), r.i64)
		case core.Bool:
			copy(o.Bools(), r.b)
		}
	}
	return nil
}

// exec runs the root scope. A panic in a kernel would be a bug of the evaluator (every
// partial operation is total); it is turned into an error rather than crashing the caller.
func (e *Exec) exec() (err error) {
	defer func() {
		if x := recover(); x != nil {
			err = errors.Errorf("core: eval: internal error (please report): %v", x)
		}
	}()
	for _, f := range e.root.code {
		f()
	}
	return nil
}

func paramList(ps []*core.Var) string {
	if len(ps) == 0 {
		return "none"
	}
	s := ""
	for i, v := range ps {
		if i > 0 {
			s += ", "
		}
		s += v.Name + " : " + v.Type().String()
	}
	return s
}

// checkDense verifies that d has type want; what/name describe it in the error.
func checkDense(what string, i int, d *tensor.Dense, want core.Type) error {
	if d == nil {
		return errors.Errorf("core: eval: %s %d is nil", what, i)
	}
	dt := tensors.Dtype(d.Dtype())
	if dt != want.Dtype || !core.Shape(d.Shape()).Equal(want.Shape) {
		return errors.Errorf("core: eval: %s %d has shape %v (%v), want %v", what, i, core.Shape(d.Shape()), d.Dtype(), want)
	}
	if d.RequiresIterator() {
		return errors.Errorf("core: eval: %s %d is not a contiguous tensor", what, i)
	}
	return nil
}

// bindArg checks argument i against its parameter and points the parameter slot at its data.
func (e *Exec) bindArg(i int, d *tensor.Dense) error {
	v := e.prog.Params[i]
	want := v.Type()
	if d == nil {
		return errors.Errorf("core: eval: argument %s is nil, parameter %s : %v", v.Name, v.Name, want)
	}
	dt := tensors.Dtype(d.Dtype())
	if dt != want.Dtype || !core.Shape(d.Shape()).Equal(want.Shape) {
		name := d.Dtype().String()
		if dt.Valid() {
			name = dt.String()
		}
		return errors.Errorf("core: eval: argument %s has shape %v (%s), parameter %s : %v", v.Name, core.Shape(d.Shape()), name, v.Name, want)
	}
	f64, f32, i64, b, err := tensors.Data(d, dt, want.Shape.Size())
	if err != nil {
		return errors.Wrapf(err, "core: eval: argument %s", v.Name)
	}
	p := e.params[i]
	p.f64, p.f32, p.i64, p.b = f64, f32, i64, b
	return nil
}

func isTuple(t core.Term) bool { _, ok := t.(*core.Tuple); return ok }

// resultOf is the result below the lets of a program body.
func resultOf(body core.Term) core.Term {
	_, r := core.LetChain(body)
	return r
}

// checkLimit applies the environment's array limit (core.ArrayLimit) to p.
func checkLimit(p *core.Program, what string) error {
	limit, err := core.ArrayLimit()
	if err != nil {
		return err
	}
	return core.CheckArrayLimit(p, limit, what)
}
