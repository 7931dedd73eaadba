package core

// Parsing of atoms, operation applications and literals.

func (p *parser) atom() (*syn, error) {
	t := p.peek()
	switch t.kind {
	case tokInt, tokFloat:
		return p.number(t, false)
	case tokIdent:
		switch t.text {
		case "true", "false":
			p.next()
			return &syn{kind: synBool, at: t, bval: t.text == "true"}, nil
		case "inf", "nan":
			return p.number(t, false)
		}
		if isOpWord(t.text) {
			return nil, p.errExpected("an atomic argument (parenthesise operations used as arguments)")
		}
		if IsKeyword(t.text) {
			return nil, p.errExpected("term")
		}
		p.next()
		return &syn{kind: synVar, at: t, name: t.text}, nil
	case tokSym:
		switch t.text {
		case "(":
			if err := p.enter(); err != nil {
				return nil, err
			}
			defer p.leave()
			p.next()
			x, err := p.expr()
			if err != nil {
				return nil, err
			}
			if p.is(",") {
				return nil, p.errExpected(`")" (a tuple may only be the whole result)`)
			}
			if _, err := p.expect(")"); err != nil {
				return nil, err
			}
			return x, nil
		case "[":
			if err := p.enter(); err != nil {
				return nil, err
			}
			defer p.leave()
			xs, err := p.termList()
			if err != nil {
				return nil, err
			}
			return &syn{kind: synFromVector, at: t, kids: xs}, nil
		}
	}
	return nil, p.errExpected("term")
}

// isOpWord reports whether s names an operation written in prefix form.
func isOpWord(s string) bool {
	if _, ok := ParseUnOp(s); ok {
		return true
	}
	if op, ok := ParseBinOp(s); ok && !op.IsInfix() {
		return true
	}
	switch s {
	case "cond", "cast", "index", "sumOuter", "argmaxOuter", "gather", "scatter", "replicate",
		"tr", "reshape", "build1", "build", "iota", "matmul", "share", "lit":
		return true
	}
	return false
}

// atoms parses n atomic arguments.
func (p *parser) atoms(n int) ([]*syn, error) {
	xs := make([]*syn, n)
	for i := range xs {
		x, err := p.atom()
		if err != nil {
			return nil, err
		}
		xs[i] = x
	}
	return xs, nil
}

// lambdaHead parses (\i -> …) or (\[i, j] -> …) up to the arrow; it returns the position of the
// backslash and the binders.
func (p *parser) lambdaHead() (token, []token, error) {
	if _, err := p.expect("("); err != nil {
		return token{}, nil, err
	}
	bs, err := p.expect("\\")
	if err != nil {
		return token{}, nil, err
	}
	var vars []token
	if p.is("[") {
		vars, err = bracketList(p, p.varName)
	} else {
		var v token
		v, err = p.varName()
		vars = []token{v}
	}
	if err != nil {
		return token{}, nil, err
	}
	if _, err := p.expect("->"); err != nil {
		return token{}, nil, err
	}
	return bs, vars, nil
}

// lambda parses a parenthesised lambda (\vars -> body) whose body is parsed by body (which
// gets the backslash's position and the binders, to check them first).
func lambda[T any](p *parser, body func(bs token, vars []token) (T, error)) ([]token, T, error) {
	var zero T
	if err := p.enter(); err != nil {
		return nil, zero, err
	}
	defer p.leave()
	bs, vars, err := p.lambdaHead()
	if err != nil {
		return nil, zero, err
	}
	x, err := body(bs, vars)
	if err != nil {
		return nil, zero, err
	}
	if _, err := p.expect(")"); err != nil {
		return nil, zero, err
	}
	return vars, x, nil
}

// applied parses an operation applied at s.at after its keyword: head (if not nil) parses
// the arguments that come before the operands into s, then n atomic operands follow.
func (p *parser) applied(s *syn, n int, head func(s *syn) error) (*syn, error) {
	p.next()
	if head != nil {
		if err := head(s); err != nil {
			return nil, err
		}
	}
	xs, err := p.atoms(n)
	if err != nil {
		return nil, err
	}
	s.kids = xs
	return s, nil
}

// app parses an operation applied to its arguments, or an atom.
func (p *parser) app() (*syn, error) {
	t := p.peek()
	if t.kind != tokIdent || !IsKeyword(t.text) {
		return p.atom()
	}
	if op, ok := ParseUnOp(t.text); ok {
		return p.applied(&syn{kind: synUnary, at: t, unop: op}, 1, nil)
	}
	if op, ok := ParseBinOp(t.text); ok && !op.IsInfix() {
		return p.applied(&syn{kind: synBinary, at: t, binop: op}, 2, nil)
	}
	switch t.text {
	case "cond":
		return p.applied(&syn{kind: synCond, at: t}, 3, nil)
	case "sumOuter":
		return p.applied(&syn{kind: synSumOuter, at: t}, 1, nil)
	case "argmaxOuter":
		return p.applied(&syn{kind: synArgmax, at: t}, 1, nil)
	case "matmul":
		return p.applied(&syn{kind: synMatMul, at: t}, 2, nil)
	case "cast":
		return p.applied(&syn{kind: synCast, at: t}, 1, func(s *syn) (err error) {
			s.dtype, err = p.dtype()
			return err
		})
	case "replicate":
		return p.applied(&syn{kind: synReplicate, at: t}, 1, p.count)
	case "iota":
		return p.applied(&syn{kind: synIota, at: t}, 0, p.count)
	case "tr", "reshape":
		return p.applied(&syn{kind: synTr, at: t}, 1, func(s *syn) (err error) {
			if t.text == "reshape" {
				s.kind = synReshape
				s.ints, err = p.shape()
			} else {
				s.ints, err = p.ints()
			}
			return err
		})
	case "index":
		p.next()
		x, err := p.atom()
		if err != nil {
			return nil, err
		}
		return p.indexing(t, x)
	case "gather", "scatter":
		return p.indexed(t)
	case "build1", "build":
		return p.build(t)
	case "share":
		p.next()
		id, err := p.integer()
		if err != nil {
			return nil, err
		}
		if s, ok := p.shares[id]; ok {
			return s, nil
		}
		xs, err := p.atoms(1)
		if err != nil {
			return nil, err
		}
		s := &syn{kind: synShare, at: t, n: id, kids: xs}
		p.shares[id] = s
		return s, nil
	case "lit":
		p.next()
		return p.lit(t)
	}
	return p.atom()
}

// count parses the integer argument of replicate or iota into s.n.
func (p *parser) count(s *syn) (err error) {
	s.n, err = p.integer()
	return err
}

// indexed parses the rest of gather sh x (\vars -> [out…]) or scatter …, at its keyword t.
func (p *parser) indexed(t token) (*syn, error) {
	p.next()
	kind := synGather
	if t.text == "scatter" {
		kind = synScatter
	}
	sh, err := p.shape()
	if err != nil {
		return nil, err
	}
	x, err := p.atom()
	if err != nil {
		return nil, err
	}
	vars, out, err := lambda(p, func(token, []token) ([]*syn, error) { return p.termList() })
	if err != nil {
		return nil, err
	}
	return &syn{kind: kind, at: t, ints: sh, vars: vars, kids: append([]*syn{x}, out...)}, nil
}

// build parses the rest of build1 n (\v -> body) or build sh (\[vars] -> body), at its
// keyword t.
func (p *parser) build(t token) (*syn, error) {
	p.next()
	var sh []int
	var err error
	if t.text == "build1" {
		var n int
		n, err = p.integer()
		sh = []int{n}
	} else {
		sh, err = p.shape()
	}
	if err != nil {
		return nil, err
	}
	vars, body, err := lambda(p, func(bs token, vars []token) (*syn, error) {
		if len(vars) != len(sh) {
			return nil, p.errAt(bs, "%s: shape %v needs %d index variables, found %d", t.text, Shape(sh), len(sh), len(vars))
		}
		return p.expr()
	})
	if err != nil {
		return nil, err
	}
	if t.text == "build1" {
		return &syn{kind: synBuild1, at: t, n: sh[0], vars: vars, kids: []*syn{body}}, nil
	}
	return &syn{kind: synBuild, at: t, ints: sh, vars: vars, kids: []*syn{body}}, nil
}

// lit parses the rest of lit [sh] ρ [v1, …].
func (p *parser) lit(at token) (*syn, error) {
	typ, err := p.typ()
	if err != nil {
		return nil, err
	}
	if _, err := p.expect("["); err != nil {
		return nil, err
	}
	s := &syn{kind: synLit, at: at, typ: typ}
	bits := 64
	if typ.Dtype == Float32 {
		bits = 32
	}
	what := typ.Dtype.String() + " value"
	err = p.commaList("]", true, func() error {
		if typ.Dtype == Bool {
			t := p.peek()
			if !p.is("true") && !p.is("false") {
				return p.errExpected(what)
			}
			p.next()
			s.bvals = append(s.bvals, t.text == "true")
			return nil
		}
		neg := false
		if p.is("-") {
			p.next()
			neg = true
		}
		t := p.peek()
		switch {
		case t.kind == tokInt && typ.Dtype == Int64:
			v, err := parseInt64(t.text, neg)
			if err != nil {
				return p.errAt(t, "integer literal %s out of the i64 range", signed(t.text, neg))
			}
			s.ivals = append(s.ivals, v)
		case typ.Dtype.IsFloat() && (t.kind == tokInt || t.kind == tokFloat || (t.kind == tokIdent && (t.text == "inf" || t.text == "nan"))):
			v, err := parseFloat(t.text, neg, bits)
			if err != nil {
				return p.errAt(t, "floating literal %s out of the %v range", signed(t.text, neg), typ.Dtype)
			}
			s.fvals = append(s.fvals, v)
		default:
			return p.errExpected(what)
		}
		p.next()
		return nil
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}
