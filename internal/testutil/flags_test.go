package testutil

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

// recorder is a testing.TB that records Errorf's messages.
type recorder struct {
	testing.TB
	msgs []string
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.msgs = append(r.msgs, fmt.Sprintf(format, args...))
}

func TestCheckFlags(t *testing.T) {
	// good: -h prints "-steps"; "bad" fails at once; "late" fails after working; "ok" succeeds
	run := func(args []string, out io.Writer) error {
		switch strings.Join(args, " ") {
		case "-h":
			fmt.Fprintln(out, "usage: -steps n")
			return nil
		case "bad":
			return errors.New("bad flag")
		case "late":
			fmt.Fprintln(out, "training loss 1")
			return errors.New("failed late")
		}
		return nil
	}
	noHelp := func(args []string, out io.Writer) error { return run(append([]string{"x"}, args...), out) }
	cases := []struct {
		name  string
		run   func([]string, io.Writer) error
		flag  string
		bad   [][]string
		wants []string // substrings of the messages, in order
	}{
		{"all good", run, "-steps", [][]string{{"bad"}}, nil},
		{"help lacks the flag", run, "-lr", [][]string{{"bad"}}, []string{"-h"}},
		{"help fails", noHelp, "-steps", nil, []string{"-h"}},
		{"accepted", run, "-steps", [][]string{{"bad"}, {"ok"}}, []string{"[ok]: no error"}},
		{"refused late", run, "-steps", [][]string{{"late"}}, []string{"[late]: refused only after"}},
	}
	for _, c := range cases {
		r := &recorder{TB: t}
		CheckFlags(r, c.run, c.flag, c.bad, "training loss")
		if len(r.msgs) != len(c.wants) {
			t.Errorf("%s: messages %q, want %d", c.name, r.msgs, len(c.wants))
			continue
		}
		for i, w := range c.wants {
			if !strings.Contains(r.msgs[i], w) {
				t.Errorf("%s: message %q, want one containing %q", c.name, r.msgs[i], w)
			}
		}
	}
}
