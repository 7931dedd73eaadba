package bot

import (
	"fmt"

	"github.com/bulkad/bulkad/core"
)

// buildCtx is one build1 k (\i. _) being pushed into its (normal) body.
type buildCtx struct {
	v *vectorizer
	k int
	i *core.Var
	// lifted maps the name of a let bound inside the body (and depending on i) to the
	// variable of the vectorised let: an occurrence of x stands for index x' [i].
	lifted map[string]*core.Var
	memo   map[core.Term]core.Term
	subM   map[core.Term]core.Term
	shares map[int]int
}

func (v *vectorizer) newBuild(k int, i *core.Var) *buildCtx {
	return &buildCtx{v: v, k: k, i: i, lifted: map[string]*core.Var{},
		memo: map[core.Term]core.Term{}, subM: map[core.Term]core.Term{}, shares: map[int]int{}}
}

// dep reports whether t mentions the build variable or a lifted let variable.
func (c *buildCtx) dep(t core.Term) bool {
	for name := range c.v.freeVars(t) {
		if name == c.i.Name || c.lifted[name] != nil {
			return true
		}
	}
	return false
}

func (c *buildCtx) hasLifted(t core.Term) bool {
	for name := range c.v.freeVars(t) {
		if c.lifted[name] != nil {
			return true
		}
	}
	return false
}

// push returns the normal form of build1 k (\i. t) for a normal t (memoised per node).
func (c *buildCtx) push(t core.Term) core.Term {
	if r, ok := c.memo[t]; ok {
		return r
	}
	r := c.push1(t)
	c.memo[t] = r
	return r
}

func (c *buildCtx) outShape(t core.Term) core.Shape {
	return append(core.Shape{c.k}, t.Type().Shape...)
}

func (c *buildCtx) push1(t core.Term) core.Term {
	// build1 k (\i. t) ~> replicate k t   (i ∉ FV(t); here: nor any lifted variable)
	if !c.dep(t) {
		return rep(c.k, t)
	}
	iv := []*core.Var{c.i}
	switch x := t.(type) {
	case *core.Var:
		if x.Name == c.i.Name {
			// build1 k (\i. i) ~> [0, …, k-1]  (iota k)
			return must(core.NewIota(c.k))
		}
		// x lifted stands for index x' [i]:
		// build1 k (\i. index x' [i]) ~> gather (k::sh) x' (\[i]. [i])   (Fig. 11)
		nv := c.lifted[x.Name]
		return gather(nv.Type().Shape, nv, iv, []core.Term{c.i})

	case *core.Let:
		if !c.dep(x.Bound) {
			// let floating: build1 k (\i. let x = v in u) ~> let x = v in build1 k (\i. u)
			// (i ∉ FV(v); equals the paper's rule followed by gather-of-replicate fusion)
			return must(core.NewLet(x.Var, x.Bound, c.push(x.Body)))
		}
		// build1 k (\i. let x = v in u)
		//   ~> let x = build1 k (\i. v) in build1 k (\i. u[index x [i]/x])   (Fig. 9)
		b := c.push(x.Bound)
		nv, err := core.NewVar(x.Var.Name, b.Type())
		if err != nil {
			panic(err.Error())
		}
		c.lifted[x.Var.Name] = nv
		return must(core.NewLet(nv, b, c.push(x.Body)))

	case *core.Share:
		// build1 k (\i. share n t) ~> share n' (build1 k (\i. t)), n' fresh per (build1, n):
		// all occurrences of share n denote one value, so their vectorisations are equal too.
		id, ok := c.shares[x.ID]
		if !ok {
			id = c.v.nextShare
			c.v.nextShare++
			c.shares[x.ID] = id
		}
		return must(core.NewShare(id, c.push(x.Body)))

	case *core.Cond:
		if !c.dep(x.C) {
			// build1 k (\i. cond b u v) ~> cond b (build1 k (\i. u)) (build1 k (\i. v))  (i ∉ FV(b))
			return cond(x.C, c.push(x.Then), c.push(x.Else))
		}
		// build1 k (\i. cond b u v) ~> build1 k (\i. index [u, v] [cond b 0 1])     (Fig. 9)
		//   ~> gather (k::sh) (build1 k (\i. [u, v])) (\[i]. [i, cond b 0 1])      (Fig. 11)
		//   ~> gather (k::sh) (tr [1,0] [build1 k (\i. u), build1 k (\i. v)]) (\[i]. [i, cond b 0 1])
		sel := cond(c.subst(x.C), c.v.zeroI, c.v.oneI)
		if !c.dep(x.Then) && !c.dep(x.Else) {
			return gather(c.outShape(t), fromVec(x.Then, x.Else), iv, []core.Term{sel})
		}
		arr := tr([]int{1, 0}, fromVec(c.push(x.Then), c.push(x.Else)))
		return gather(c.outShape(t), arr, iv, []core.Term{c.i, sel})

	case *core.Unary:
		// build1 k (\i. op t) ~> op (build1 k (\i. t))   (also not, neg, abs, sign)
		return must(core.NewUnary(x.Op, c.push(x.X)))
	case *core.Cast:
		// build1 k (\i. cast ρ t) ~> cast ρ (build1 k (\i. t))   (casts are element-wise)
		return must(core.NewCast(x.To, c.push(x.X)))
	case *core.Binary:
		// build1 k (\i. op t u) ~> op (build1 k (\i. t)) (build1 k (\i. u))
		// (arithmetic, comparisons and logic alike: all are element-wise)
		return bin(x.Op, c.push(x.X), c.push(x.Y))

	case *core.SumOuter:
		// build1 k (\i. sumOuter t) ~> sumOuter (tr [1,0] (build1 k (\i. t)))
		return must(core.NewSumOuter(tr([]int{1, 0}, c.push(x.X))))
	case *core.ArgmaxOuter:
		// build1 k (\i. argmaxOuter t) ~> argmaxOuter (tr [1,0] (build1 k (\i. t)))
		// (derived like sumOuter: argmaxOuter reduces the outer dimension of t, which is
		// dimension 1 of build1 k (\i. t))
		return must(core.NewArgmaxOuter(tr([]int{1, 0}, c.push(x.X))))

	case *core.Gather:
		vars := append([]*core.Var{c.i}, x.Fn.Vars...)
		out := c.substAll(x.Fn.Out)
		if !c.dep(x.X) {
			// gather of replicate: build1 k (\i. gather sh t (\is. ix)) ~> gather (k::sh) t (\(i::is). ix)
			return gather(c.outShape(t), x.X, vars, out)
		}
		// build1 k (\i. gather sh t (\is. ix)) ~> gather (k::sh) (build1 k (\i. t)) (\(i::is). i::ix)
		return gather(c.outShape(t), c.push(x.X), vars, append([]core.Term{c.i}, out...))

	case *core.Scatter:
		// build1 k (\i. scatter sh t (\is. ix)) ~> scatter (k::sh) (build1 k (\i. t)) (\(i::is). i::ix)
		vars := append([]*core.Var{c.i}, x.Fn.Vars...)
		out := append([]core.Term{c.i}, c.substAll(x.Fn.Out)...)
		return must(core.NewScatter(c.outShape(t), c.push(x.X), mustFn(vars, out)))

	case *core.FromVector:
		// build1 k (\i. [t1, …, tn]) ~> tr [1,0] [build1 k (\i. t1), …, build1 k (\i. tn)]
		es := make([]core.Term, len(x.Elems))
		for k, e := range x.Elems {
			es[k] = c.push(e)
		}
		return tr([]int{1, 0}, fromVec(es...))

	case *core.Replicate:
		// build1 k (\i. replicate n t) ~> tr [1,0] (replicate n (build1 k (\i. t)))
		return tr([]int{1, 0}, rep(x.N, c.push(x.X)))

	case *core.Transpose:
		// build1 k (\i. tr [b0..bn] t) ~> tr [0, b0+1, …, bn+1] (build1 k (\i. t))
		perm := make([]int, len(x.Perm)+1)
		for p, b := range x.Perm {
			perm[p+1] = b + 1
		}
		return tr(perm, c.push(x.X))

	case *core.Reshape:
		// build1 k (\i. reshape sh t) ~> reshape (k::sh) (build1 k (\i. t))
		return must(core.NewReshape(c.outShape(t), c.push(x.X)))

	case *core.MatMul:
		return c.pushMatMul(x)

	case *core.Index:
		return c.pushIndex(x)
	}
	panic(fmt.Sprintf("bot: build1 over %T, which is not in normal form", t))
}

// pushMatMul vectorises build1 k (\i. matmul x y), x : B ++ [a,c], y : B ++ [c,b] (B the
// batch dimensions, possibly none). matmul computes one product per batch position, so
// build1 k of it is a matmul with one batch dimension more:
//
//	build1 k (\i. matmul x y) ~> matmul (build1 k (\i. x)) (build1 k (\i. y))
//	                             : [k] ++ B ++ [a,b]
//
// (element [i,β] of the right side is X[i,β] · Y[i,β] = x[β] · y[β] at i). For matrices
// (B empty) with one operand independent of i, one 2-D product does instead, without
// replicating that operand:
//
//	i ∉ FV(y): reshape [k,a,b] (matmul (reshape [k*a, c] (build1 k (\i. x))) y)
//	i ∉ FV(x): tr [1,0] (reshape [a,k,b] (matmul x (reshape [c, k*b] (tr [1,0] (build1 k (\i. y))))))
//
// (rows i*a … i*a+a-1 of the stacked x times y are x_i y; columns of x times the stacked
// y likewise). With batch dimensions the independent operand becomes replicate k y (the
// first rule with build1 of an independent term, Fig. 9).
func (c *buildCtx) pushMatMul(x *core.MatMul) core.Term {
	xs, ys := x.X.Type().Shape, x.Y.Type().Shape
	k := c.k
	if len(xs) == 2 {
		a, cc, b := xs[0], xs[1], ys[1]
		switch {
		case !c.dep(x.Y):
			X := c.push(x.X)
			m := must(core.NewMatMul(must(core.NewReshape(core.Shape{k * a, cc}, X)), x.Y))
			return must(core.NewReshape(core.Shape{k, a, b}, m))
		case !c.dep(x.X):
			Y := c.push(x.Y)
			m := must(core.NewMatMul(x.X, must(core.NewReshape(core.Shape{cc, k * b}, tr([]int{1, 0}, Y)))))
			return tr([]int{1, 0}, must(core.NewReshape(core.Shape{a, k, b}, m)))
		}
	}
	return must(core.NewMatMul(c.push(x.X), c.push(x.Y)))
}

// pushIndex handles build1 over the normal forms of index (Fig. 11):
//
//	build1 k (\i. index x ix)                 ~> gather (k::sh) x (\[i]. ix)
//	build1 k (\i. index c ix)                 ~> gather (k::sh) c (\[i]. ix)
//	build1 k (\i. index [t1..tn] [t])         ~> gather (k::sh) (build1 k (\i. [t1..tn])) (\[i]. [i, t])
//	build1 k (\i. index (scatter sh t f) ix)  ~> gather (k::sh) (build1 k (\i. scatter sh t f)) (\[i]. i::ix)
//
// A lifted let variable x stands for index x' [i], so index x ix is index x' (i::ix). When
// the indexed array does not depend on i, the last two rules gather from it directly
// (gather-of-replicate fusion).
func (c *buildCtx) pushIndex(x *core.Index) core.Term {
	sh := c.outShape(x)
	iv := []*core.Var{c.i}
	ix := c.substAll(x.Ix)
	switch a := x.X.(type) {
	case *core.Var:
		if nv := c.lifted[a.Name]; nv != nil {
			return gather(sh, nv, iv, append([]core.Term{c.i}, ix...))
		}
		return gather(sh, a, iv, ix)
	case *core.Lit:
		return gather(sh, a, iv, ix)
	case *core.FromVector, *core.Scatter:
		if !c.dep(a) {
			return gather(sh, a, iv, ix)
		}
		return gather(sh, c.push(a), iv, append([]core.Term{c.i}, ix...))
	}
	panic(fmt.Sprintf("bot: index of %T is not in normal form", x.X))
}

func (c *buildCtx) substAll(ts []core.Term) []core.Term {
	out := make([]core.Term, len(ts))
	for k, t := range ts {
		out[k] = c.subst(t)
	}
	return out
}

// subst computes t[index x' [i] / x] for every lifted x (merging index (index x' [i]) ix into
// index x' (i::ix)); it is used on the discrete terms that move into index functions, where
// the gather's first variable is i. Memoised per build1 and node.
func (c *buildCtx) subst(t core.Term) core.Term {
	if !c.hasLifted(t) {
		return t
	}
	if r, ok := c.subM[t]; ok {
		return r
	}
	var r core.Term
	switch x := t.(type) {
	case *core.Var:
		r = idx(c.lifted[x.Name], c.i)
	case *core.Index:
		if a, ok := x.X.(*core.Var); ok && c.lifted[a.Name] != nil {
			r = idx(c.lifted[a.Name], append([]core.Term{c.i}, c.substAll(x.Ix)...)...)
		}
	}
	if r == nil {
		kids := core.Children(t)
		for k := range kids {
			for _, b := range core.BoundIn(t, k) {
				if b.Name == c.i.Name || c.lifted[b.Name] != nil {
					panic(fmt.Sprintf("bot: binder %s shadows a build or let variable", b.Name))
				}
			}
		}
		r = rebuildKeep(t, c.substAll(kids))
	}
	c.subM[t] = r
	return r
}
