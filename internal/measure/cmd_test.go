package measure

import (
	"flag"
	"testing"
)

func TestCheckBounds(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		bounds []Bound
		want   string
	}{
		{nil, []Bound{AtLeast("objects", 10), AtLeast("clusters", 1)}, ""},
		{[]string{"-objects", "9"}, []Bound{AtLeast("objects", 10), AtLeast("clusters", 1)},
			"-objects must be at least 10 and -clusters at least 1"},
		{[]string{"-sets", "0"}, []Bound{AtLeast("objects", 10), AtLeast("clusters", 1), AtLeast("sets", 1)},
			"-objects must be at least 10, -clusters and -sets at least 1"},
		{[]string{"-clusters", "0"}, []Bound{AtLeast("clusters", 1)}, "-clusters must be at least 1"},
		{[]string{"-objects", "3"}, []Bound{AtLeast("clusters", 1), AtLeast("objects", 4), AtLeast("sets", 4), AtLeast("runs", 4)},
			"-clusters must be at least 1, -objects, -sets and -runs at least 4"},
	} {
		fs := flag.NewFlagSet("test", flag.ContinueOnError)
		fs.Int("objects", 10, "")
		fs.Int("clusters", 1, "")
		fs.Int("sets", 1, "")
		fs.Int("runs", 4, "")
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		if got := checkBounds(fs, tc.bounds); got != tc.want {
			t.Errorf("checkBounds(%v) = %q, want %q", tc.args, got, tc.want)
		}
	}
}
