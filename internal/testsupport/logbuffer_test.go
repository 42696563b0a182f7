package testsupport

import (
	"fmt"
	"slices"
	"testing"
)

func TestLogBufferLines(t *testing.T) {
	b := &LogBuffer{}
	for i := range 6 {
		fmt.Fprintf(b, "line %d of %s\n", i, []string{"alpha", "beta"}[i%2])
	}
	if got, want := b.Lines("beta", 2), []string{"line 3 of beta", "line 5 of beta"}; !slices.Equal(got, want) {
		t.Errorf("Lines(beta, 2) = %q, want %q", got, want)
	}
	if got := b.Lines("gamma", 5); len(got) != 0 {
		t.Errorf("Lines(gamma, 5) = %q, want none", got)
	}
}
