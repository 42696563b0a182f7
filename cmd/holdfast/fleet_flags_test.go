package main

import (
	"fmt"
	"strings"
	"testing"
)

func TestClusterFlags(t *testing.T) {
	cases := []struct {
		cluster, namespace, wantNS, wantName string
		err                                  bool
	}{
		{"", "", "", "", false},
		{"c1", "", "", "c1", false},
		{"c1", "fleet", "fleet", "c1", false},
		{"fleet/c1", "", "fleet", "c1", false},
		{"fleet/c1", "fleet", "fleet", "c1", false},
		{"fleet/c1", "other", "", "", true},
		{"/c1", "", "", "", true},
		{"a/b/c", "", "", "", true},
		{"", "fleet", "fleet", "", false},
	}
	for _, c := range cases {
		ns, name, err := (&clusterFlags{cluster: c.cluster, namespace: c.namespace}).resolve()
		if (err != nil) != c.err || ns != c.wantNS || name != c.wantName {
			t.Errorf("resolve(--cluster %q -n %q) = %q, %q, %v; want %q, %q, error %v", c.cluster, c.namespace, ns, name, err, c.wantNS, c.wantName, c.err)
		}
	}
}

func TestHubOptionsValidate(t *testing.T) {
	for _, output := range []string{"table", "wide", "json", "yaml", "name"} {
		if err := (&hubOptions{output: output}).validate(); err != nil {
			t.Errorf("-o %s: %v", output, err)
		}
	}
	for _, output := range []string{"", "xml", "Table", "jsonpath", "names", "wide "} {
		err := (&hubOptions{output: output}).validate()
		want := fmt.Sprintf("--output %q: want table, wide, json, yaml or name", output)
		if err == nil || err.Error() != want {
			t.Errorf("-o %q: %v, want the error %q", output, err, want)
		}
	}
	f := newStatusCommand().Flags().Lookup("output")
	if f == nil || !strings.Contains(f.Usage, "table, wide, json, yaml or name") || f.DefValue != "table" {
		t.Errorf("--output help = %+v, want every format named and table by default", f)
	}
}
