package core_test

import (
	"math/rand"
	"testing"

	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/core/coretest"
	"github.com/bulkad/bulkad/core/tensors"
)

// The two ways the pipeline uniquifies: BOT's (every binder, the top-level spine keeps its
// names, replacements named from the stem) and ad's (lets only, a let's bound claims first).
var (
	botUniq = core.UniquifyOptions{AllBinders: true, KeepSpine: true, StemNames: true}
	adUniq  = core.UniquifyOptions{LetBoundFirst: true}
)

// uniquify runs core.Uniquify on t with a namer that avoids t's names and the taken ones,
// as its callers do.
func uniquify(t testing.TB, tm core.Term, o core.UniquifyOptions) core.Term {
	t.Helper()
	namer := core.NewNamer(tm)
	for _, name := range o.Taken {
		namer.AvoidName(name)
	}
	out, err := core.Uniquify(tm, namer, o)
	if err != nil {
		t.Fatalf("Uniquify(%v): %v", tm, err)
	}
	return out
}

// TestUniquify: repeated names, taken names, stems, shadowing, claim order; the expected
// programs are written by hand from the rules in Uniquify's and UniquifyOptions' docs.
func TestUniquify(t *testing.T) {
	env := map[string]core.Type{"x": coretest.F64(3), "n": coretest.I64()}
	taken := []string{"x", "n", "dret"}
	cases := []struct {
		name, src string
		bot, ad   string // "" when the term comes back unchanged (the same node)
	}{
		{"repeated let", `let a = x + x in let a = a * x in a`,
			`let a = x + x in let a_0 = a * x in a_0`, `let a = x + x in let a_0 = a * x in a_0`},
		// BOT: the spine's a claims first; ad: the a inside b's bound does
		{"spine first", `let b = (let a = x in a) in let a = b in a`,
			`let b = let a_0 = x in a_0 in let a = b in a`, `let b = let a = x in a in let a_0 = b in a_0`},
		// BOT: the outer a claims first (pre-order); ad: the a in its bound does
		{"bound first", `let a = (let a = x in a) in a`,
			`let a = let a_0 = x in a_0 in a`, `let a_0 = let a = x in a in a_0`},
		{"taken name", `let x = x * x in x`, `let x_0 = x * x in x_0`, `let x_0 = x * x in x_0`},
		{"stem", `let a_3 = x in let a_3 = a_3 + x in a_3`,
			`let a_3 = x in let a_0 = a_3 + x in a_0`, `let a_3 = x in let a_3_0 = a_3 + x in a_3_0`},
		// ad renames lets only: the build1 variable i shadows, and keeps its name
		{"build1 binder", `let i = n in build1 3 (\i -> index x [i])`,
			`let i = n in build1 3 (\i_0 -> index x [i_0])`, ``},
		{"gather binders", `gather [2] x (\[j] -> [j]) + gather [2] x (\[j] -> [j + 1])`,
			`gather [2] x (\[j] -> [j]) + gather [2] x (\[j_0] -> [j_0 + 1])`, ``},
		{"shadowed renaming", `let i = n in let i = i + 1 in build1 3 (\i -> index x [i]) + replicate 3 (cast f64 i)`,
			`let i = n in let i_0 = i + 1 in build1 3 (\i_1 -> index x [i_1]) + replicate 3 (cast f64 i_0)`,
			`let i = n in let i_0 = i + 1 in build1 3 (\i -> index x [i]) + replicate 3 (cast f64 i_0)`},
		{"unique", `let a = x in let b = a * x in b`, ``, ``},
	}
	for _, c := range cases {
		for _, mode := range []struct {
			name string
			o    core.UniquifyOptions
			want string
		}{{"bot", botUniq, c.bot}, {"ad", adUniq, c.ad}} {
			tm := parseT(t, c.src, env)
			mode.o.Taken = taken
			got := uniquify(t, tm, mode.o)
			if mode.want == "" {
				if got != tm {
					t.Errorf("%s (%s): %s renamed to %s, want it unchanged", c.name, mode.name, c.src, got)
				}
				continue
			}
			if got.String() != mode.want {
				t.Errorf("%s (%s): %s\n got  %s\n want %s", c.name, mode.name, c.src, got, mode.want)
			}
		}
	}
}

// TestUniquifySharing: a binder node reached twice under the same renaming is renamed once
// and stays one node.
func TestUniquifySharing(t *testing.T) {
	env := map[string]core.Type{"x": coretest.F64(3), "s": coretest.F64(3)}
	shared := parseT(t, `let a = x in a * x`, env)
	tm, err := core.Subst(parseT(t, `let a = x + x in a + (s + s)`, env), map[string]core.Term{"s": shared})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []core.UniquifyOptions{botUniq, adUniq} {
		got := uniquify(t, tm, o)
		want := `let a = x + x in a + ((let a_0 = x in a_0 * x) + (let a_0 = x in a_0 * x))`
		if got.String() != want {
			t.Fatalf("%+v:\n got  %s\n want %s", o, got, want)
		}
		sum := core.Children(core.Children(got.(*core.Let).Body)[1])
		if sum[0] != sum[1] {
			t.Errorf("%+v: the shared let became two nodes", o)
		}
	}
}

// TestUniquifyScopes: one node under two lets of the same name, the second renamed, is
// rewritten for each scope (its free a means a in one, a_0 in the other).
func TestUniquifyScopes(t *testing.T) {
	ok := okTerm(t)
	env := map[string]core.Type{"x": coretest.F64(3), "a": coretest.F64(3)}
	body := parseT(t, `a * x`, env)
	a, err := core.NewVar("a", coretest.F64(3))
	if err != nil {
		t.Fatal(err)
	}
	l1 := ok(core.NewLet(a, parseT(t, `x`, env), body))
	l2 := ok(core.NewLet(a, parseT(t, `x + x`, env), body))
	tm := ok(core.NewBinary(core.OpAdd, l1, l2))
	for _, o := range []core.UniquifyOptions{botUniq, adUniq} {
		o.Taken = []string{"x"}
		got := uniquify(t, tm, o)
		want := `(let a = x in a * x) + (let a_0 = x + x in a_0 * x)`
		if got.String() != want {
			t.Errorf("%+v:\n got  %s\n want %s", o, got, want)
		}
	}
}

// distinctBinders reports a name that two binder nodes (lets, or every binder with all)
// bind, or a binder that binds a taken name; "" if none.
func distinctBinders(tm core.Term, all bool, taken []string) string {
	owner := map[string]core.Term{}
	for _, name := range taken {
		owner[name] = nil
	}
	bad := ""
	core.PostOrder(tm, func(n core.Term) {
		var names []string
		switch x := n.(type) {
		case *core.Let:
			names = []string{x.Var.Name}
		case *core.Build1:
			if all {
				names = []string{x.Var.Name}
			}
		case *core.Gather, *core.Scatter:
			if all {
				for _, v := range core.BoundIn(n, 1) {
					names = append(names, v.Name)
				}
			}
		}
		for _, name := range names {
			if w, ok := owner[name]; ok && w != n && bad == "" {
				bad = name
			}
			owner[name] = n
		}
	})
	return bad
}

// TestUniquifyProperty: on random programs whose binders reuse a few names, the result has
// distinct binder names, the same value (bit for bit), spine lets keep unique names (BOT's
// mode), and the fast path (nothing to rename) agrees with the full rewrite.
func TestUniquifyProperty(t *testing.T) {
	renamed := 0
	for seed := int64(1); seed <= 300; seed++ {
		cfg := coretest.Config{Dtype: core.Float64, ReuseNames: true, BuildProb: 0.3, Shares: seed%2 == 0}
		if seed%3 == 0 {
			cfg.Dtype = core.Float32
		}
		p := coretest.RandomProgram(rand.New(rand.NewSource(seed)), cfg)
		var taken []string
		for _, v := range p.Params {
			taken = append(taken, v.Name)
		}
		args := coretest.RandomArgs(rand.New(rand.NewSource(seed)), p)
		want, err := tensors.Eval(p, args)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		for _, o := range []core.UniquifyOptions{botUniq, adUniq} {
			o.Taken = taken
			body := uniquify(t, p.Body, o)
			if bad := distinctBinders(body, o.AllBinders, taken); bad != "" {
				t.Fatalf("seed %d (%+v): %s bound twice in\n%v\n->\n%v", seed, o, bad, p.Body, body)
			}
			full, err := core.UniquifyAll(p.Body, core.NewNamer(p.Body), o)
			if err != nil {
				t.Fatal(err)
			}
			if unique := distinctBinders(p.Body, o.AllBinders, taken) == ""; unique != (body == p.Body) || unique != (full == p.Body) {
				t.Fatalf("seed %d (%+v): input unique %v, renamed %v, full rewrite renamed %v", seed, o, unique, body != p.Body, full != p.Body)
			}
			if body == p.Body {
				continue
			}
			renamed++
			if o.KeepSpine {
				checkSpineKept(t, seed, p, body)
			}
			q, err := core.NewProgram(p.Params, body)
			if err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
			got, err := tensors.Eval(q, args)
			if err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
			if d := coretest.Close(want, got, 0); d != "" {
				t.Fatalf("seed %d (%+v): value changed: %s\n%v\n->\n%v", seed, o, d, p.Body, body)
			}
		}
	}
	if renamed < 100 {
		t.Errorf("only %d of 600 rewrites renamed something; the generator no longer reuses names", renamed)
	}
}

// checkSpineKept checks that the spine lets of p whose names no parameter and no earlier
// spine let has keep them in body.
func checkSpineKept(t *testing.T, seed int64, p *core.Program, body core.Term) {
	t.Helper()
	seen := map[string]bool{}
	for _, v := range p.Params {
		seen[v.Name] = true
	}
	before, _ := core.LetChain(p.Body)
	after, _ := core.LetChain(body)
	if len(before) != len(after) {
		t.Fatalf("seed %d: spine of %d lets became %d", seed, len(before), len(after))
	}
	for k, l := range before {
		if !seen[l.Var.Name] && after[k].Var.Name != l.Var.Name {
			t.Errorf("seed %d: spine let %s renamed %s", seed, l.Var.Name, after[k].Var.Name)
		}
		seen[l.Var.Name] = true
	}
}

// TestNameStem: a trailing _digits is dropped, nothing else.
func TestNameStem(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"a_3", "a"}, {"a_b_12", "a_b"}, {"a", "a"}, {"a_", "a_"}, {"_3", "_3"}, {"a_x", "a_x"}, {"x_f64_0", "x_f64"},
	} {
		if got := core.NameStem(c.in); got != c.want {
			t.Errorf("NameStem(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestFreshFor: clashing variables get fresh names (prefix, or their own), recorded in sub;
// the others are returned as they are.
func TestFreshFor(t *testing.T) {
	env := map[string]core.Type{"x": coretest.F64(3)}
	g := parseT(t, `gather [2,2] x (\[i, j] -> [i + j])`, env).(*core.Gather)
	for _, c := range []struct {
		prefix string
		clash  []string
		want   []string
	}{
		{"k", []string{"j"}, []string{"i", "k_0"}},
		{"", []string{"i", "j"}, []string{"i_0", "j_0"}},
		{"", nil, []string{"i", "j"}},
	} {
		sub := map[string]core.Term{}
		namer := core.NewNamer(g)
		clash := func(name string) bool {
			for _, n := range c.clash {
				if n == name {
					return true
				}
			}
			return false
		}
		out := namer.FreshFor(g.Fn.Vars, clash, c.prefix, sub)
		for k, v := range out {
			if v.Name != c.want[k] || !v.Type().Equal(g.Fn.Vars[k].Type()) {
				t.Errorf("%+v: variable %d is %s : %v, want %s", c, k, v.Name, v.Type(), c.want[k])
			}
			if r, ok := sub[g.Fn.Vars[k].Name]; ok != (v != g.Fn.Vars[k]) || ok && r != core.Term(v) {
				t.Errorf("%+v: sub records %v for %s", c, r, g.Fn.Vars[k].Name)
			}
		}
	}
}
