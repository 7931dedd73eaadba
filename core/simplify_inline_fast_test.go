package core

import (
	"strings"
	"testing"
)

func mustParseTerm(t *testing.T, src string, env map[string]Type) Term {
	t.Helper()
	x, err := Parse(src, env)
	if err != nil {
		t.Fatalf("parse %q: %v", src, err)
	}
	return x
}

// TestFastInline: the fast inliner's decisions, hand-checked: dead lets go, lets used once
// or bound to variables/scalar literals are inlined, lets used twice or inside a lambda stay,
// KeepLets is respected, and terms outside its conditions are declined.
func TestFastInline(t *testing.T) {
	v := Type{Shape{3}, Float64}
	env := map[string]Type{"x": v, "y": v}
	cases := []struct {
		name, src, want string
		keep            []string
		declined        bool
	}{
		{name: "dead", src: "let a = x * y in x + y", want: "x + y"},
		{name: "once", src: "let a = x * y in a + y", want: "x * y + y"},
		{name: "twice", src: "let a = x * y in a + a", want: "let a = x * y in a + a"},
		{name: "variable", src: "let a = x in a * a", want: "x * x"},
		{name: "chain", src: "let a = x * y in let b = a + x in b * y", want: "(x * y + x) * y"},
		{name: "keep", src: "let a = x * y in a + y", want: "let a = x * y in a + y", keep: []string{"a"}},
		{name: "keep dead", src: "let a = x * y in x + y", want: "x + y", keep: []string{"a"}},
		{name: "in build1", src: "let a = sumOuter x in build1 3 (\\i -> a + index y [i])", want: "let a = sumOuter x in build1 3 (\\i -> a + index y [i])"},
		{name: "in gather", src: "let k = cast i64 (sumOuter x) in gather [3] y (\\[i] -> [k + i])", want: "let k = cast i64 (sumOuter x) in gather [3] y (\\[i] -> [k + i])"},
		{name: "indexed let stays", src: "let a = x * y in index a [1]", want: "let a = x * y in index a [1]"},
		{name: "indexed variable let inlined", src: "let a = x in index a [1]", want: "index x [1]"},
		{name: "duplicate let names", src: "(let a = x * y in a) + (let a = x + y in a)", declined: true},
		{name: "let named like a param", src: "let x = y * y in x + x", declined: true},
		{name: "lambda named like a param", src: "let k = sumOuter x in gather [3] y (\\[x] -> [x])", declined: true},
		{name: "let under lambda", src: "build1 3 (\\i -> let a = index x [i] in a * a)", declined: true},
	}
	for _, c := range cases {
		term := mustParseTerm(t, c.src, env)
		cfg := &simplifyConfig{keep: map[string]bool{}}
		for _, k := range c.keep {
			cfg.keep[k] = true
		}
		got, ok := fastInline(cfg, term, map[string]bool{"x": true, "y": true})
		if c.declined {
			if ok {
				t.Errorf("%s: fast path taken, want declined", c.name)
			}
			continue
		}
		if !ok {
			t.Errorf("%s: declined", c.name)
			continue
		}
		want := mustParseTerm(t, c.want, env)
		if !Equal(got, want) {
			t.Errorf("%s: got %v, want %v", c.name, got, want)
		}
	}
}

// TestFastInlineDeepChainLinear: a 20000-deep let chain whose every body mentions a few
// parameters is inlined without building per-node free-variable sets (the test would take
// minutes if it were quadratic).
func TestFastInlineDeepChainLinear(t *testing.T) {
	var b strings.Builder
	const n = 20000
	b.WriteString("let h0 = x * y in ")
	for i := 1; i < n; i++ {
		b.WriteString("let h")
		b.WriteString(itoa(i))
		b.WriteString(" = h")
		b.WriteString(itoa(i - 1))
		b.WriteString(" * x + h")
		b.WriteString(itoa(i - 1))
		b.WriteString(" in ")
	}
	b.WriteString("h")
	b.WriteString(itoa(n - 1))
	v := Type{Shape{2}, Float64}
	term := mustParseTerm(t, b.String(), map[string]Type{"x": v, "y": v})
	cfg := &simplifyConfig{keep: map[string]bool{}}
	got, ok := fastInline(cfg, term, map[string]bool{"x": true, "y": true})
	if !ok {
		t.Fatal("declined")
	}
	// Every h_i but the last is used twice by h_{i+1} and stays; the last is used once (as the
	// result) and is inlined.
	lets := 0
	PostOrder(got, func(x Term) {
		if _, isLet := x.(*Let); isLet {
			lets++
		}
	})
	if lets != n-1 {
		t.Errorf("%d lets after inlining, want %d", lets, n-1)
	}
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	s := ""
	for i > 0 {
		s = string(rune('0'+i%10)) + s
		i /= 10
	}
	return s
}

// TestFastInlineSkip: where removesLet finds no let to drop or inline, the full rewrite
// returns the term itself, as the shortcut does.
func TestFastInlineSkip(t *testing.T) {
	v := Type{Shape{3}, Float64}
	env := map[string]Type{"x": v, "y": v}
	skipped := 0
	for _, src := range []string{
		"let a = x * y in x + y",
		"let a = x * y in a + y",
		"let a = x * y in a + a",
		"let a = x in a * a",
		"let a = x * y in let b = a + x in b * y",
		"let a = x * y in let b = a + a in b * b",
		"let a = x * y in let b = a + a in let c = exp b in c * c + a",
		"let a = sumOuter x in build1 3 (\\i -> a + index y [i])",
		"let k = cast i64 (sumOuter x) in gather [3] y (\\[i] -> [k + i])",
		"let a = x * y in index a [1]",
		"let a = x in index a [1]",
		"let a = x * y in let b = index a [1] in b * b",
	} {
		for _, keep := range [][]string{nil, {"a"}, {"a", "b"}} {
			term := mustParseTerm(t, src, env)
			cfg := &simplifyConfig{keep: map[string]bool{}}
			for _, k := range keep {
				cfg.keep[k] = true
			}
			free := map[string]bool{"x": true, "y": true}
			fast, ok1 := fastInlineWith(cfg, term, free, 0, true)
			full, ok2 := fastInlineWith(cfg, term, free, 0, false)
			if ok1 != ok2 || fast != full && !Equal(fast, full) {
				t.Errorf("%s (keep %v): shortcut %v, full rewrite %v", src, keep, fast, full)
			}
			if fast == term {
				skipped++
				if full != term {
					t.Errorf("%s (keep %v): the full rewrite rebuilt the term", src, keep)
				}
			}
		}
	}
	if skipped == 0 {
		t.Error("no case took the shortcut")
	}
}
