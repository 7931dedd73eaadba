package ad

import (
	"slices"

	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/core/tensors"
	"github.com/pkg/errors"
	"gorgonia.org/tensor"
)

// DretName is the name of the cotangent parameter of a VJP artifact.
const DretName = "dret"

// TangentPrefix prefixes the tangent parameters of a JVP program: d_<name>.
const TangentPrefix = "d_"

// Options configure a differentiation.
type Options struct {
	// Wrt names the parameters to differentiate with respect to (all float parameters when
	// empty). A non-float or unknown name is an error.
	Wrt []string
	// Keep names lets of the input program that must survive unchanged (name and value) in the
	// artifact's primal part, so that a caller can bind them to values it already has.
	Keep []string
	// SkipBOT skips the bulk-operation transform (the program must then contain no float build1).
	SkipBOT bool
	// NoSimplify skips the simplifier (before and after differentiation).
	NoSimplify bool
	// AtZero names Wrt parameters that are differentiated at the value zero: the artifact
	// binds them to zeros itself (a let at the top of its body) and does not take them as
	// arguments; their gradients stay in the result. A caller perturbs an intermediate value
	// v as v + δ with δ such a parameter to get v's adjoint without cutting the program at v.
	AtZero []string
}

// Artifact is a differentiated program: an ordinary core program, built once, that computes
// the value and the gradients and can be evaluated many times.
//
// Its body has the form
//
//	let <primal lets> in let <cotangent lets> in (value, g_1, …, g_k)
//
// a top-level core.Tuple whose components are the primal result and one gradient per Wrt
// name, in that order. Its parameters are the input program's (plus DretName, the incoming
// cotangent, for a VJP artifact; a Grad artifact uses the cotangent 1).
//
// An Artifact is immutable and safe for concurrent use. Run evaluates it with the reference
// evaluator (core.EvalTuple); to run it fast, compile Program with package kernel.
type Artifact struct {
	prog  *core.Program
	wrt   []string
	vjp   bool
	stats Stats
}

// Program returns the gradient program.
func (a *Artifact) Program() *core.Program { return a.prog }

// Wrt returns the names of the parameters the gradients are taken with respect to, in the
// order of the result tuple.
func (a *Artifact) Wrt() []string { return append([]string{}, a.wrt...) }

// Stats reports the work of the symbolic reverse pass that built the artifact (Share IDs,
// Share nodes visited, Delta nodes visited).
func (a *Artifact) Stats() Stats { return a.stats }

// String prints the gradient program in the text syntax.
func (a *Artifact) String() string { return a.prog.String() }

// Run evaluates the gradient program with the reference evaluator (core.EvalTuple). args holds every parameter (and DretName for a VJP
// artifact); it returns the value and the gradient of every Wrt parameter by name.
func (a *Artifact) Run(args map[string]*tensor.Dense) (*tensor.Dense, map[string]*tensor.Dense, error) {
	return a.RunWith(tensors.EvalTuple, args)
}

// RunWith is Run with another evaluator of tuple programs, such as kernel.EvalTuple.
func (a *Artifact) RunWith(eval func(*core.Program, map[string]*tensor.Dense) ([]*tensor.Dense, error), args map[string]*tensor.Dense) (*tensor.Dense, map[string]*tensor.Dense, error) {
	outs, err := eval(a.prog, args)
	if err != nil {
		return nil, nil, errors.Wrap(err, "ad: run")
	}
	if len(outs) != len(a.wrt)+1 {
		return nil, nil, errors.Errorf("ad: run: program returned %d results, want %d", len(outs), len(a.wrt)+1)
	}
	grads := make(map[string]*tensor.Dense, len(a.wrt))
	for k, name := range a.wrt {
		grads[name] = outs[k+1]
	}
	return outs[0], grads, nil
}

// Grad differentiates p, whose result is a rank-0 float, with respect to the parameters
// named in wrt (every float parameter when wrt is empty).
func Grad(p *core.Program, wrt ...string) (*Artifact, error) {
	return GradWith(p, Options{Wrt: wrt})
}

// VJP is Grad for a program with any float result: the artifact takes the incoming
// cotangent as the parameter DretName ("dret"), of the result's type.
func VJP(p *core.Program, wrt ...string) (*Artifact, error) {
	return VJPWith(p, Options{Wrt: wrt})
}

// GradWith is Grad with options.
func GradWith(p *core.Program, o Options) (*Artifact, error) {
	return build(p, o, false, "grad")
}

// VJPWith is VJP with options.
func VJPWith(p *core.Program, o Options) (*Artifact, error) {
	return build(p, o, true, "vjp")
}

func build(p *core.Program, o Options, vjp bool, op string) (*Artifact, error) {
	r, err := differentiate(p, o, vjp, op)
	if err != nil {
		return nil, err
	}
	prog, stats, err := r.symbolic()
	if err != nil {
		return nil, errors.Wrapf(err, "ad: %s", op)
	}
	prog, err = passes(prog, op,
		pass{!o.NoSimplify, "simplify gradient program", func(q *core.Program) (*core.Program, error) { return simplifyProgram(q, o.Keep) }},
		pass{len(o.AtZero) > 0, "", func(q *core.Program) (*core.Program, error) { return atZero(q, o.AtZero) }})
	if err != nil {
		return nil, err
	}
	return &Artifact{prog: prog, wrt: r.wrt, vjp: vjp, stats: stats}, nil
}

// diffResult is the output of the forward pass: Eq. (6) of paper 000 — primal bindings, the
// primal result and the symbolic Delta of the result.
type diffResult struct {
	op     string
	prog   *core.Program // the program that was differentiated (after BOT, simplify, uniquify)
	params []*core.Var   // the artifact's parameters
	wrt    []string
	binds  []binding
	value  core.Term
	delta  *Delta
	maxID  int
	namer  *core.Namer
	ct     core.Term // the incoming cotangent: 1 or the variable dret
}

func resolveWrt(p *core.Program, wrt []string, op string) ([]string, error) {
	if len(wrt) == 0 {
		var out []string
		for _, v := range p.Params {
			if v.Type().Dtype.IsFloat() {
				out = append(out, v.Name)
			}
		}
		return out, nil
	}
	seen := map[string]bool{}
	var out []string
	param := paramLookup(p)
	for _, name := range wrt {
		v := param(name)
		if v == nil {
			return nil, errors.Errorf("ad: %s: %q is not a parameter of the program", op, name)
		}
		if !v.Type().Dtype.IsFloat() {
			return nil, errors.Errorf("ad: %s: parameter %s has type %v; only float parameters can be differentiated", op, name, v.Type())
		}
		if !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
	}
	return out, nil
}

// paramLookup returns p.Param, or for many parameters a function with the same results
// through a map (a name's first parameter), so that looking up every parameter is not
// quadratic.
func paramLookup(p *core.Program) func(string) *core.Var {
	if len(p.Params) < 16 || slices.Contains(p.Params, nil) { // nil: Param's own behaviour
		return p.Param
	}
	m := make(map[string]*core.Var, len(p.Params))
	for _, v := range p.Params {
		if _, dup := m[v.Name]; !dup {
			m[v.Name] = v
		}
	}
	return func(name string) *core.Var { return m[name] }
}

// prepare checks p and brings it to the form the forward pass takes: BOT-normal (unless
// SkipBOT), simplified (unless NoSimplify), with distinct let names.
func prepare(p *core.Program, o Options, reserved []string, op string) (*core.Program, error) {
	if o.SkipBOT { // bot.Vectorize checks its input itself
		if err := core.Check(p); err != nil {
			return nil, errors.Wrapf(err, "ad: %s", op)
		}
	}
	q, err := passes(p, op,
		pass{!o.SkipBOT, "bot", vectorize},
		pass{!o.NoSimplify, "simplify", func(q *core.Program) (*core.Program, error) { return simplifyProgram(q, o.Keep) }})
	if err != nil {
		return nil, err
	}
	return uniquify(q, reserved)
}

// pass is an optional stage of the pipeline: run when on, its error wrapped with the
// operation and the stage's name.
type pass struct {
	on   bool
	name string
	run  func(*core.Program) (*core.Program, error)
}

// passes runs the stages that are on, in order.
func passes(p *core.Program, op string, ps ...pass) (*core.Program, error) {
	for _, s := range ps {
		if !s.on {
			continue
		}
		q, err := s.run(p)
		if err != nil {
			if s.name == "" {
				return nil, errors.Wrapf(err, "ad: %s", op)
			}
			return nil, errors.Wrapf(err, "ad: %s: %s", op, s.name)
		}
		p = q
	}
	return p, nil
}

func differentiate(p *core.Program, o Options, vjp bool, op string) (*diffResult, error) {
	if p == nil {
		return nil, errors.Errorf("ad: %s: nil program", op)
	}
	if vjp && p.Param(DretName) != nil {
		return nil, errors.Errorf("ad: %s: parameter name %s is reserved for the cotangent", op, DretName)
	}
	for _, k := range o.Keep {
		if k == DretName {
			return nil, errors.Errorf("ad: %s: let name %s is reserved for the cotangent", op, DretName)
		}
	}
	wrt, err := resolveWrt(p, o.Wrt, op)
	if err != nil {
		return nil, err
	}
	q, err := prepare(p, o, []string{DretName}, op)
	if err != nil {
		return nil, err
	}
	if err := resultCheck(q.Body, vjp, op); err != nil {
		return nil, err
	}
	namer, f := forwardFor(q, wrt, DretName)
	res, err := f.run(q.Body)
	if err != nil {
		return nil, errors.Wrapf(err, "ad: %s", op)
	}
	r := &diffResult{
		op: op, prog: q, wrt: wrt, binds: f.binds, value: res.p, delta: res.d,
		maxID: f.g.nextID, namer: namer, params: append([]*core.Var{}, q.Params...),
	}
	rt := res.p.Type()
	if vjp {
		dret, err := core.NewVar(DretName, rt)
		if err != nil {
			return nil, err
		}
		r.params = append(r.params, dret)
		r.ct = dret
	} else {
		r.ct = core.ScalarF(rt.Dtype, 1)
	}
	return r, nil
}

// forwardFor prepares the forward pass of q with respect to wrt: a namer that avoids q's
// parameter names and the reserved names, and the forward differentiator.
func forwardFor(q *core.Program, wrt []string, reserved ...string) (*core.Namer, *forward) {
	wset := map[string]bool{}
	for _, w := range wrt {
		wset[w] = true
	}
	namer := core.NewNamer(q.Body)
	for _, v := range q.Params {
		namer.AvoidName(v.Name)
	}
	for _, n := range reserved {
		namer.AvoidName(n)
	}
	return namer, newForward(q, namer, wset)
}

func resultCheck(body core.Term, vjp bool, op string) error {
	t := underLets(body)
	if _, ok := t.(*core.Tuple); ok {
		return errors.Errorf("ad: %s: the program returns a tuple; differentiate a program with one array result", op)
	}
	ty := t.Type()
	if !ty.Dtype.IsFloat() {
		return errors.Errorf("ad: %s: result has type %v, want a float result", op, ty)
	}
	if !vjp && len(ty.Shape) != 0 {
		return errors.Errorf("ad: %s: result has type %v, want a rank-0 float (use VJP for array results)", op, ty)
	}
	return nil
}

// symbolic runs the symbolic reverse pass (Fig. 19), shareToLet (Fig. 20) and the wrapper
// (Fig. 21), giving the unsimplified gradient program.
func (r *diffResult) symbolic() (*core.Program, Stats, error) {
	alg := newTermAlg()
	grads, stats, err := reversePass[core.Term](alg, r.ct, r.delta, r.maxID)
	if err != nil {
		return nil, stats, err
	}
	roots := make([]core.Term, len(r.wrt))
	for k, name := range r.wrt {
		g, ok := grads[name]
		if !ok {
			g = alg.b.Full(r.prog.Param(name).Type(), 0)
		}
		roots[k] = g
	}
	if err := alg.err(); err != nil {
		return nil, stats, err
	}
	cbinds, roots, err := shareToLet(roots, r.namer)
	if err != nil {
		return nil, stats, err
	}
	var b core.Builder
	body := b.Tuple(append([]core.Term{r.value}, roots...)...)
	body = wrapLets(&b, cbinds, body)
	body = wrapLets(&b, r.binds, body)
	if err := b.Err(); err != nil {
		return nil, stats, err
	}
	// Every node was built by a type-checking constructor and every variable is bound by a
	// parameter or a let around its use, so the program is not re-checked here (core.Check
	// materialises free-variable sets, which is quadratic on long let chains; the tests check
	// the artifacts).
	return &core.Program{Params: r.params, Body: body}, stats, nil
}

// wrapLets puts the bindings, first one outermost, around body.
func wrapLets(b *core.Builder, binds []binding, body core.Term) core.Term {
	for k := len(binds) - 1; k >= 0; k-- {
		body = b.Let(binds[k].Var, binds[k].Term, body)
	}
	return body
}

// concrete runs the concrete reverse pass (Fig. 17) on values: the primal bindings are
// evaluated at args, then the Delta is transposed on arrays. It returns the value and the
// gradients by name (for testing the symbolic pipeline against).
func (r *diffResult) concrete(args map[string]*tensor.Dense) (*tensor.Dense, map[string]*tensor.Dense, Stats, error) {
	env := map[string]*tensor.Dense{}
	for _, v := range r.params {
		a, ok := args[v.Name]
		if !ok {
			return nil, nil, Stats{}, errors.Errorf("ad: concrete: argument %s is missing", v.Name)
		}
		env[v.Name] = a
	}
	for _, bd := range r.binds {
		x, err := tensors.EvalTerm(bd.Term, env)
		if err != nil {
			return nil, nil, Stats{}, err
		}
		env[bd.Var.Name] = x
	}
	val, err := tensors.EvalTerm(r.value, env)
	if err != nil {
		return nil, nil, Stats{}, err
	}
	ct, err := tensors.EvalTerm(r.ct, env)
	if err != nil {
		return nil, nil, Stats{}, err
	}
	alg := &valueAlg{env: env, ph: [2]string{r.namer.Fresh("ph"), r.namer.Fresh("ph")}}
	grads, stats, err := reversePass[*tensor.Dense](alg, ct, r.delta, r.maxID)
	if err != nil {
		return nil, nil, stats, err
	}
	out := map[string]*tensor.Dense{}
	for _, name := range r.wrt {
		g, ok := grads[name]
		if !ok {
			g = zeroDense(r.prog.Param(name).Type())
		}
		out[name] = g
	}
	return val, out, stats, nil
}

// JVP returns a program computing the value of p and its forward derivative along tangents:
// its parameters are p's followed by one tangent parameter TangentPrefix+name ("d_x") per
// wrt parameter (every float parameter when wrt is empty), of that parameter's type; its body
// is let <primal lets> in let <tangent lets> in (value, tangent).
func JVP(p *core.Program, wrt ...string) (*core.Program, error) {
	return JVPWith(p, Options{Wrt: wrt})
}

// JVPWith is JVP with options.
func JVPWith(p *core.Program, o Options) (*core.Program, error) {
	const op = "jvp"
	if p == nil {
		return nil, errors.New("ad: jvp: nil program")
	}
	wrt, err := resolveWrt(p, o.Wrt, op)
	if err != nil {
		return nil, err
	}
	var reserved []string
	for _, w := range wrt {
		name := TangentPrefix + w
		if p.Param(name) != nil {
			return nil, errors.Errorf("ad: jvp: parameter name %s is reserved for the tangent of %s", name, w)
		}
		reserved = append(reserved, name)
	}
	q, err := prepare(p, o, reserved, op)
	if err != nil {
		return nil, err
	}
	tupleResult := isTupleResult(q.Body)
	if tupleResult {
		if err := tupleCheck(q.Body, op); err != nil {
			return nil, err
		}
	} else if err := resultCheck(q.Body, true, op); err != nil {
		return nil, err
	}
	namer, f := forwardFor(q, wrt, reserved...)
	var comps []*dual
	if tupleResult {
		f.tuple = &comps
	}
	res, err := f.run(q.Body)
	if err != nil {
		return nil, errors.Wrap(err, "ad: jvp")
	}
	if !tupleResult {
		comps = []*dual{res}
	}
	params := append([]*core.Var{}, q.Params...)
	tvars := map[string]*core.Var{}
	for _, w := range wrt {
		v, err := core.NewVar(TangentPrefix+w, q.Param(w).Type())
		if err != nil {
			return nil, err
		}
		params = append(params, v)
		tvars[w] = v
	}
	var b core.Builder
	ds := make([]*Delta, len(comps))
	for k, c := range comps {
		ds[k] = c.d
	}
	tans := tangentTerms(&b, ds, tvars)
	if err := b.Err(); err != nil {
		return nil, errors.Wrap(err, "ad: jvp")
	}
	tbinds, roots, err := shareToLet(tans, namer)
	if err != nil {
		return nil, errors.Wrap(err, "ad: jvp")
	}
	var body core.Term
	if tupleResult {
		elems := make([]core.Term, 0, 2*len(comps))
		for _, c := range comps {
			elems = append(elems, c.p)
		}
		body = b.Tuple(append(elems, roots...)...)
	} else {
		body = b.Tuple(res.p, roots[0])
	}
	body = wrapLets(&b, tbinds, body)
	body = wrapLets(&b, f.binds, body)
	if err := b.Err(); err != nil {
		return nil, errors.Wrap(err, "ad: jvp")
	}
	prog := &core.Program{Params: params, Body: body}
	if !o.NoSimplify {
		prog, err = simplifyProgram(prog, o.Keep)
		if err != nil {
			return nil, errors.Wrap(err, "ad: jvp: simplify")
		}
	}
	return prog, nil
}

// tangentTerms interprets Deltas forwards as terms (the forward derivatives), sharing the
// terms of common sub-Deltas; Share nodes become share terms with the same IDs, so
// shareToLet can bind them.
func tangentTerms(b *core.Builder, ds []*Delta, tvars map[string]*core.Var) []core.Term {
	memo := map[*Delta]core.Term{}
	out := make([]core.Term, len(ds))
	for k, d := range ds {
		out[k] = tangentTerm(b, d, tvars, memo)
	}
	return out
}

// tangentTerm is tangentTerms for one Delta, with the memo of the terms already built.
func tangentTerm(b *core.Builder, d *Delta, tvars map[string]*core.Var, memo map[*Delta]core.Term) core.Term {
	var rec func(d *Delta) core.Term
	rec = func(d *Delta) core.Term {
		if t, ok := memo[d]; ok {
			return t
		}
		var t core.Term
		switch d.Kind {
		case DZero:
			t = b.Full(d.Type, 0)
		case DInput:
			t = tvars[d.Name]
		case DAdd:
			t = b.Add(rec(d.A), rec(d.B))
		case DNeg:
			t = b.Unary(core.OpNeg, rec(d.A))
		case DScale:
			t = b.Mul(d.Factor, rec(d.A))
		case DShare:
			t = b.Share(d.ID, rec(d.A))
		case DIndex:
			t = b.Index(rec(d.A), d.Ix...)
		case DSumOuter:
			t = b.SumOuter(rec(d.A))
		case DGather:
			t = b.Gather(d.Shape, rec(d.A), d.Fn)
		case DScatter:
			t = b.Scatter(d.Shape, rec(d.A), d.Fn)
		case DFromVector:
			es := make([]core.Term, len(d.Elems))
			for k, e := range d.Elems {
				es[k] = rec(e)
			}
			t = b.FromVector(es...)
		case DReplicate:
			t = b.Replicate(d.N, rec(d.A))
		case DTranspose:
			t = b.Transpose(d.Perm, rec(d.A))
		case DReshape:
			t = b.Reshape(d.Shape, rec(d.A))
		case DMatMulL:
			t = b.MatMul(rec(d.A), d.Other)
		case DMatMulR:
			t = b.MatMul(d.Other, rec(d.A))
		case DCast:
			t = b.Cast(d.Type.Dtype, rec(d.A))
		case DSelect:
			t = b.Cond(d.Cond, rec(d.A), rec(d.B))
		default:
			b.SetErr(errors.Errorf("ad: jvp: unknown Delta constructor %v", d.Kind))
		}
		if t == nil && b.Err() == nil {
			b.SetErr(errors.Errorf("ad: jvp: no tangent for %v", d.Kind))
		}
		memo[d] = t
		return t
	}
	return rec(d)
}

// uniquify renames lets so that every let name in the program is distinct from the
// parameters, from reserved names and from every other let (core.Uniquify: the first to
// claim a name keeps it). Occurrences are renamed accordingly, respecting shadowing by
// build1 and index-function binders.
func uniquify(p *core.Program, reserved []string) (*core.Program, error) {
	taken := append([]string{}, reserved...)
	namer := core.NewNamer(p.Body)
	for _, v := range p.Params {
		taken = append(taken, v.Name)
	}
	for _, n := range taken {
		namer.AvoidName(n)
	}
	body, err := core.Uniquify(p.Body, namer, core.UniquifyOptions{Taken: taken, LetBoundFirst: true})
	if err != nil {
		return nil, errors.Wrap(err, "ad: uniquify")
	}
	if body == p.Body {
		return p, nil
	}
	return core.NewProgram(p.Params, body)
}
