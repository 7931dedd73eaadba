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

// lambda parses (\i -> …) or (\[i, j] -> …) up to the arrow; it returns the position of the
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
		p.next()
		if !p.is("]") {
			for {
				v, err := p.varName()
				if err != nil {
					return token{}, nil, err
				}
				vars = append(vars, v)
				if !p.is(",") {
					break
				}
				p.next()
			}
		}
		if err := p.closeList("]"); err != nil {
			return token{}, nil, err
		}
	} else {
		v, err := p.varName()
		if err != nil {
			return token{}, nil, err
		}
		vars = []token{v}
	}
	if _, err := p.expect("->"); err != nil {
		return token{}, nil, err
	}
	return bs, vars, nil
}

// app parses an operation applied to its arguments, or an atom.
func (p *parser) app() (*syn, error) {
	t := p.peek()
	if t.kind != tokIdent || !IsKeyword(t.text) {
		return p.atom()
	}
	if op, ok := ParseUnOp(t.text); ok {
		p.next()
		xs, err := p.atoms(1)
		if err != nil {
			return nil, err
		}
		return &syn{kind: synUnary, at: t, unop: op, kids: xs}, nil
	}
	if op, ok := ParseBinOp(t.text); ok && !op.IsInfix() {
		p.next()
		xs, err := p.atoms(2)
		if err != nil {
			return nil, err
		}
		return &syn{kind: synBinary, at: t, binop: op, kids: xs}, nil
	}
	one := func(kind synKind, n int) (*syn, error) {
		p.next()
		xs, err := p.atoms(n)
		if err != nil {
			return nil, err
		}
		return &syn{kind: kind, at: t, kids: xs}, nil
	}
	switch t.text {
	case "cond":
		return one(synCond, 3)
	case "sumOuter":
		return one(synSumOuter, 1)
	case "argmaxOuter":
		return one(synArgmax, 1)
	case "matmul":
		return one(synMatMul, 2)
	case "cast":
		p.next()
		d, err := p.dtype()
		if err != nil {
			return nil, err
		}
		xs, err := p.atoms(1)
		if err != nil {
			return nil, err
		}
		return &syn{kind: synCast, at: t, dtype: d, kids: xs}, nil
	case "index":
		p.next()
		x, err := p.atom()
		if err != nil {
			return nil, err
		}
		ix, err := p.termList()
		if err != nil {
			return nil, err
		}
		return &syn{kind: synIndex, at: t, kids: append([]*syn{x}, ix...)}, nil
	case "replicate":
		p.next()
		n, err := p.integer()
		if err != nil {
			return nil, err
		}
		xs, err := p.atoms(1)
		if err != nil {
			return nil, err
		}
		return &syn{kind: synReplicate, at: t, n: n, kids: xs}, nil
	case "iota":
		p.next()
		n, err := p.integer()
		if err != nil {
			return nil, err
		}
		return &syn{kind: synIota, at: t, n: n}, nil
	case "tr", "reshape":
		p.next()
		kind := synTr
		var sh []int
		var err error
		if t.text == "reshape" {
			kind = synReshape
			sh, err = p.shape()
		} else {
			sh, err = p.ints()
		}
		if err != nil {
			return nil, err
		}
		xs, err := p.atoms(1)
		if err != nil {
			return nil, err
		}
		return &syn{kind: kind, at: t, ints: sh, kids: xs}, nil
	case "gather", "scatter":
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
		if err := p.enter(); err != nil {
			return nil, err
		}
		defer p.leave()
		_, vars, err := p.lambdaHead()
		if err != nil {
			return nil, err
		}
		out, err := p.termList()
		if err != nil {
			return nil, err
		}
		if _, err := p.expect(")"); err != nil {
			return nil, err
		}
		return &syn{kind: kind, at: t, ints: sh, vars: vars, kids: append([]*syn{x}, out...)}, nil
	case "build1", "build":
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
		if err := p.enter(); err != nil {
			return nil, err
		}
		defer p.leave()
		bs, vars, err := p.lambdaHead()
		if err != nil {
			return nil, err
		}
		if len(vars) != len(sh) {
			return nil, p.errAt(bs, "%s: shape %v needs %d index variables, found %d", t.text, Shape(sh), len(sh), len(vars))
		}
		body, err := p.expr()
		if err != nil {
			return nil, err
		}
		if _, err := p.expect(")"); err != nil {
			return nil, err
		}
		if t.text == "build1" {
			return &syn{kind: synBuild1, at: t, n: sh[0], vars: vars, kids: []*syn{body}}, nil
		}
		return &syn{kind: synBuild, at: t, ints: sh, vars: vars, kids: []*syn{body}}, nil
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
	for !p.is("]") {
		switch typ.Dtype {
		case Bool:
			t := p.peek()
			if !p.is("true") && !p.is("false") {
				return nil, p.errExpected(what)
			}
			p.next()
			s.bvals = append(s.bvals, t.text == "true")
		default:
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
					return nil, p.errAt(t, "integer literal %s out of the i64 range", signed(t.text, neg))
				}
				s.ivals = append(s.ivals, v)
			case typ.Dtype.IsFloat() && (t.kind == tokInt || t.kind == tokFloat || (t.kind == tokIdent && (t.text == "inf" || t.text == "nan"))):
				v, err := parseFloat(t.text, neg, bits)
				if err != nil {
					return nil, p.errAt(t, "floating literal %s out of the %v range", signed(t.text, neg), typ.Dtype)
				}
				s.fvals = append(s.fvals, v)
			default:
				return nil, p.errExpected(what)
			}
			p.next()
		}
		if !p.is(",") {
			break
		}
		p.next()
	}
	if err := p.closeList("]"); err != nil {
		return nil, err
	}
	return s, nil
}
