package main

import "testing"

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
