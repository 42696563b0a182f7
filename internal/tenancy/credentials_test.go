package tenancy

import "testing"

func TestAmbientCredentials(t *testing.T) {
	shared := Policy{PlatformNamespaces: []string{"fleet", "platform"}}
	cases := []struct {
		name    string
		allowed []string
		ns      string
		want    bool
	}{
		{name: "a platform namespace", ns: "fleet", want: true},
		{name: "another platform namespace", ns: "platform", want: true},
		{name: "a tenant's namespace", ns: "team-a"},
		{name: "a tenant's namespace the operator allows", allowed: []string{"team-b", "team-a"}, ns: "team-a", want: true},
		{name: "a tenant's namespace another is allowed beside", allowed: []string{"team-b"}, ns: "team-a"},
		{name: "no namespace (not a Cluster's)", ns: ""},
		{name: "no namespace, even with an empty name allowed", allowed: []string{""}, ns: ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := shared.AmbientCredentials(tc.ns, tc.allowed); got != tc.want {
				t.Errorf("AmbientCredentials(%q, %q) = %v, want %v", tc.ns, tc.allowed, got, tc.want)
			}
		})
	}
}
