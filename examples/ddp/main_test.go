package main

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/bulkad/bulkad/dist/mpitest"
)

// smallArgs is a short run of a narrow MLP.
func smallArgs() []string {
	return []string{"-steps", "12", "-n", "600", "-hidden", "32", "-batch", "50", "-lr", "0.01"}
}

// TestOneProcessLearns: without a launcher ddp trains alone, and the loss goes down.
func TestOneProcessLearns(t *testing.T) {
	var out bytes.Buffer
	res, err := run(mpitest.OneProcess(t), append(smallArgs(), "-check", "4"), &out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if len(res.Loss) != 12 {
		t.Fatalf("%d steps, want 12", len(res.Loss))
	}
	first, last := res.Loss[0], res.Loss[len(res.Loss)-1]
	if !(last < 0.8*first) || !(res.TestAcc > 0.3) {
		t.Errorf("loss %.3f -> %.3f, held-out accuracy %.3f: not learning\n%s", first, last, res.TestAcc, out.String())
	}
	for _, want := range []string{"world: 1 rank(s), one process", "shards [50]", "parameters identical on all 1 rank(s)", "held-out accuracy"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

func TestShards(t *testing.T) {
	for _, c := range []struct {
		batch, size int
		want        string
	}{{100, 1, "[100]"}, {100, 2, "[50 50]"}, {100, 3, "[34 33 33]"}, {5, 4, "[2 1 1 1]"}} {
		if got := fmt.Sprint(shards(c.batch, c.size)); got != c.want {
			t.Errorf("shards(%d, %d) = %s, want %s", c.batch, c.size, got, c.want)
		}
	}
}

func TestFlagErrors(t *testing.T) {
	w := mpitest.OneProcess(t)
	for _, args := range [][]string{{"-dtype", "int"}, {"-batch", "0"}, {"stray"}, {"-n", "10", "-batch", "50"},
		{"-hidden", "0"}, {"-lr", "NaN"}, {"-lr", "-1"}} {
		if _, err := run(w, args, &bytes.Buffer{}); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
}
