package kernel

import "github.com/bulkad/bulkad/core"

// The evaluator's side of index functions: compileIx (index.go) with a host that compiles
// what the function reads that does not depend on its variables as ordinary instructions (run
// once per run of the enclosing scope, not once per point), and, for index functions the
// closures do not cover, a scope of instructions run once per point.

// idxFn is an index function compiled for the evaluator.
type idxFn struct {
	n, m int
	aff  []*affine     // non-nil when every output is affine
	prog *IndexProgram // nil for the per-point fallback
	env  *ixEnv        // env.slots[:n] hold the index variables (ixPlan writes them)
	// eval writes the outputs at the point env.slots[:n] into o.
	eval func(o []int64)
	// vec, when set, fills o[k][:cnt] with output k at innermost index t0 … t0+cnt-1
	// (cnt ≤ vecChunk), the outer variables taken from env.slots.
	vec func(t0 int64, cnt int, o [][]int64)
}

// execHost compiles hosted terms with the evaluator's compiler; their buffers are bound once.
type execHost struct {
	c    *compiler
	at   map[core.Term]int
	bufs []*buf
}

func (h *execHost) hoist(t core.Term, _ bool) (int, bool, error) {
	if k, ok := h.at[t]; ok {
		return k, true, nil
	}
	v, _, err := h.c.compile(t)
	if err != nil {
		return 0, false, err
	}
	h.at[t] = len(h.bufs)
	h.bufs = append(h.bufs, v)
	return len(h.bufs) - 1, true, nil
}

// compileIndexFn compiles fn in placement scope sc.
func (c *compiler) compileIndexFn(fn *core.IndexFn, sc *scope) (*idxFn, error) {
	n, m := len(fn.Vars), len(fn.Out)
	f := &idxFn{n: n, m: m}
	h := &execHost{c: c, at: map[core.Term]int{}}
	p, err := compileIx(fn, h, c.fv, false)
	if err == nil {
		env := p.newEnvWith(h.bufs)
		f.aff, f.env, f.prog = p.aff, env, p
		f.eval = func(o []int64) {
			for k, g := range p.outs {
				o[k] = g(env)
			}
		}
		if p.vec != nil {
			f.vec = func(t0 int64, cnt int, o [][]int64) {
				for k, v := range p.vec {
					v(env, t0, o[k][:cnt])
				}
			}
		}
		return f, nil
	}
	if !isUnsupportedIx(err) {
		return nil, err
	}
	// General fallback: a scope run per point.
	body := &scope{parent: sc, depth: sc.depth + 1}
	regs := make([]*buf, n)
	var restores []func()
	for j, v := range fn.Vars {
		regs[j] = &buf{typ: core.Scalar(core.Int64), i64: make([]int64, 1)}
		restores = append(restores, c.bind(v.Name, regs[j], body))
	}
	outs, err := c.compileAll(fn.Out)
	for j := len(restores) - 1; j >= 0; j-- {
		restores[j]()
	}
	if err != nil {
		return nil, err
	}
	f.env = &ixEnv{slots: make([]int64, n)}
	f.eval = func(o []int64) {
		for j, b := range regs {
			b.i64[0] = f.env.slots[j]
		}
		body.run()
		for k, b := range outs {
			o[k] = b.i64[0]
		}
	}
	return f, nil
}
