package testutil

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

// CheckFlags checks a command's run function (its arguments and its output): with -h it
// succeeds and its help mentions flag; with each argument list of bad it fails, and fails
// before it starts working: its output does not contain started (the text it prints once the
// work has begun).
func CheckFlags(t testing.TB, run func(args []string, out io.Writer) error, flag string, bad [][]string, started string) {
	t.Helper()
	var out bytes.Buffer
	if err := run([]string{"-h"}, &out); err != nil || !strings.Contains(out.String(), flag) {
		t.Errorf("-h: %v, want help mentioning %s:\n%s", err, flag, out.String())
	}
	for _, args := range bad {
		out.Reset()
		if err := run(args, &out); err == nil {
			t.Errorf("%v: no error", args)
		}
		if strings.Contains(out.String(), started) {
			t.Errorf("%v: refused only after %q:\n%s", args, started, out.String())
		}
	}
}
