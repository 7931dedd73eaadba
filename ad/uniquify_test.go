package ad

import "testing"

// TestUniquifyRepeatedNames: repeated let names, a let named like a parameter or a reserved
// name are renamed (core.Uniquify's own tests cover the renaming in detail).
func TestUniquifyRepeatedNames(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{`fn (x : [] f64) => let a = x * x in let a = a + x in a`, `fn (x : [] f64) => let a = x * x in let a_0 = a + x in a_0`},
		{`fn (x : [] f64) => let x = x * x in x`, `fn (x : [] f64) => let x_0 = x * x in x_0`},
		{`fn (x : [] f64) => let dret = x * x in dret`, `fn (x : [] f64) => let dret_0 = x * x in dret_0`},
		{`fn (x : [] f64) => (let a = x * x in a) + (let a = x + x in a)`, `fn (x : [] f64) => (let a = x * x in a) + (let a_0 = x + x in a_0)`},
		{`fn (x : [] f64) => let a = x * x in a + x`, ``}, // nothing to rename: the program itself
	} {
		p := parse(t, c.src)
		q, err := uniquify(p, []string{DretName})
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case c.want == "" && q != p:
			t.Errorf("%s: renamed to %s", c.src, q)
		case c.want != "" && q.String() != c.want:
			t.Errorf("%s:\n got  %s\n want %s", c.src, q, c.want)
		}
	}
}
