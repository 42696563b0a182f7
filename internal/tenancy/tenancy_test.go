package tenancy

import (
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

func serviceSet(tenant string, namespaces ...string) *holdfastv1.MultiClusterService {
	m := &holdfastv1.MultiClusterService{ObjectMeta: metav1.ObjectMeta{Name: "s"}}
	if tenant != "" {
		m.Labels = map[string]string{holdfastv1.TenantNamespaceLabel: tenant}
	}
	m.Spec.ClusterSelector.Namespaces = namespaces
	return m
}

func cluster(ns string) *holdfastv1.Cluster {
	return &holdfastv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: ns, Labels: map[string]string{"env": "prod"}}}
}

// single is a hub with one team: the operator made every namespace a platform one.
var single = Policy{PlatformNamespaces: []string{AllNamespaces}}

func TestSelects(t *testing.T) {
	shared := Policy{PlatformNamespaces: []string{"fleet"}}
	prod := labels.SelectorFromSet(labels.Set{"env": "prod"})
	cases := []struct {
		name    string
		p       Policy
		mcs     *holdfastv1.MultiClusterService
		cluster string
		want    bool
	}{
		{"one team: every namespace", single, serviceSet(""), "team-a", true},
		{"no platform namespace named: none but those a set lists", Policy{}, serviceSet(""), "fleet", false},
		{"no platform namespace named: a listed namespace", Policy{}, serviceSet("", "fleet"), "fleet", true},
		{"one team: listed namespaces only", single, serviceSet("", "fleet"), "team-a", false},
		{"shared: a platform set selects platform namespaces", shared, serviceSet(""), "fleet", true},
		{"shared: a platform set never selects a tenant's Cluster by its labels alone", shared, serviceSet(""), "team-a", false},
		{"shared: a platform set selects a tenant namespace it lists", shared, serviceSet("", "team-a"), "team-a", true},
		{"a tenant's set selects its own namespace", shared, serviceSet("team-a"), "team-a", true},
		{"a tenant's set never selects another namespace", shared, serviceSet("team-a"), "fleet", false},
		{"a tenant's set ignores namespaces it lists", single, serviceSet("team-a", "team-b"), "team-b", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.p.Selects(c.mcs, prod, cluster(c.cluster)); got != c.want {
				t.Fatalf("Selects(Cluster in %q) = %v, want %v", c.cluster, got, c.want)
			}
		})
	}
	other := cluster("fleet")
	other.Labels["env"] = "dev"
	if shared.Selects(serviceSet(""), prod, other) {
		t.Fatal("a Cluster the label selector does not match is selected")
	}
}

func TestReads(t *testing.T) {
	shared := Policy{PlatformNamespaces: []string{"fleet"}}
	cases := []struct {
		name string
		p    Policy
		mcs  *holdfastv1.MultiClusterService
		ns   string
		// wantErr: a part of the error, "" for none
		wantErr string
	}{
		{"one team: any namespace", single, serviceSet(""), "team-a", ""},
		{"no platform namespace named: none", Policy{}, serviceSet(""), "team-a", "is not a platform namespace"},
		{"shared: platform set, platform template", shared, serviceSet(""), "fleet", ""},
		{"shared: platform set, a tenant's template", shared, serviceSet(""), "team-a", `namespace "team-a" is not a platform namespace`},
		{"tenant set, own template", shared, serviceSet("team-a"), "team-a", ""},
		{"tenant set, platform template", shared, serviceSet("team-a"), "fleet", `outside the ServiceSet's namespace "team-a"`},
		{"tenant set on a one-team hub, another namespace", single, serviceSet("team-a"), "team-b", "outside"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for what, err := range map[string]error{
				"Template": c.p.Template(c.mcs, "web", c.ns),
				"Secret":   c.p.Secret(c.mcs, "hook", c.ns),
			} {
				switch {
				case c.wantErr == "" && err != nil:
					t.Errorf("%s: unexpected error %v", what, err)
				case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
					t.Errorf("%s: error %v, want one containing %q", what, err, c.wantErr)
				}
			}
		})
	}
}

func TestServiceSet(t *testing.T) {
	ok := &holdfastv1.ServiceSet{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team-a"}}
	ok.Spec.ClusterSelector.Namespaces = []string{"team-a"}
	ok.Spec.Services = []holdfastv1.Service{{Name: "web", Template: holdfastv1.TemplateReference{Name: "t", Namespace: "team-a"}}}
	ok.Spec.Notifications = []holdfastv1.NotificationTarget{{Name: "hook", SecretRef: holdfastv1.SecretReference{Name: "s", Namespace: "team-a"}}}
	if err := (Policy{}).ServiceSet(ok); err != nil {
		t.Fatalf("a ServiceSet within its namespace is refused: %v", err)
	}
	bad := ok.DeepCopy()
	bad.Spec.ClusterSelector.Namespaces = []string{"team-a", "fleet"}
	bad.Spec.Services[0].Template.Namespace = "fleet"
	bad.Spec.Notifications[0].SecretRef.Namespace = "kube-system"
	err := (Policy{}).ServiceSet(bad)
	if err == nil {
		t.Fatal("a ServiceSet reaching into other namespaces is accepted")
	}
	for _, want := range []string{`clusterSelector.namespaces names "fleet"`, `service "web": template namespace "fleet"`, `notification "hook": Secret namespace "kube-system"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
}

func TestServiceSetServiceAccount(t *testing.T) {
	ss := &holdfastv1.ServiceSet{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team-a"}}
	if sa := (Policy{}).ServiceAccount(ss); sa != nil {
		t.Errorf("no default: acts as %+v, want Holdfast's own identity", sa)
	}
	locked := Policy{TenantServiceAccount: "holdfast-tenant"}
	if sa := locked.ServiceAccount(ss); sa == nil || *sa != (holdfastv1.ServiceAccountReference{Namespace: "team-a", Name: "holdfast-tenant"}) {
		t.Errorf("default: acts as %+v, want team-a/holdfast-tenant", sa)
	}
	ss.Spec.ServiceAccount = &holdfastv1.ServiceAccountReference{Namespace: "team-a", Name: "deployer"}
	if sa := locked.ServiceAccount(ss); sa.Name != "deployer" {
		t.Errorf("a ServiceAccount of its own namespace is not used: %+v", sa)
	}
	if err := locked.ServiceSet(ss); err != nil {
		t.Errorf("a ServiceAccount of its own namespace is refused: %v", err)
	}
	ss.Spec.ServiceAccount.Namespace = "kube-system"
	if err := locked.ServiceSet(ss); err == nil || !strings.Contains(err.Error(), `serviceAccount names namespace "kube-system"`) {
		t.Errorf("a ServiceAccount of another namespace: error %v", err)
	}
	if err := (Policy{}).ServiceSet(ss); err == nil || !strings.Contains(err.Error(), `set serviceAccount.namespace to "team-a"`) {
		t.Errorf("without a tenant ServiceAccount, a ServiceAccount of another namespace: error %v, want one saying what to set", err)
	}
}

func TestDependsOn(t *testing.T) {
	shared := Policy{PlatformNamespaces: []string{"fleet"}}
	cases := []struct {
		name       string
		p          Policy
		mcs, other *holdfastv1.MultiClusterService
		err        string
	}{
		{"platform on platform", shared, serviceSet(""), serviceSet(""), ""},
		{"a tenant on its own namespace's set", shared, serviceSet("team-a"), serviceSet("team-a"), ""},
		{"a tenant on another tenant's set", shared, serviceSet("team-a"), serviceSet("team-b"), `not a ServiceSet of namespace "team-a"`},
		{"a tenant on a platform set", shared, serviceSet("team-a"), serviceSet(""), `not a ServiceSet of namespace "team-a"`},
		{"one team: a tenant on another tenant's set", single, serviceSet("team-a"), serviceSet("team-b"), "its own namespace"},
		{"shared: platform on a tenant's set", shared, serviceSet(""), serviceSet("team-a"), "depends only on platform service sets"},
		{"one team: platform on a tenant's set", single, serviceSet(""), serviceSet("team-a"), ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.p.DependsOn(c.mcs, c.other)
			if (c.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.err)) {
				t.Fatalf("DependsOn = %v, want %q", err, c.err)
			}
		})
	}
}

// TestPlatformNamespaces: the operator's --platform-namespaces, resolved. Naming none is the
// safe choice, the controller's own namespace and the Pull clusters'; every namespace only when
// asked for by '*'; a name ending in '*' matches by prefix.
func TestPlatformNamespaces(t *testing.T) {
	cases := []struct {
		name    string
		flag    []string
		want    []string
		wantErr string
	}{
		{"default: the controller's own namespace and the Pull clusters'", nil, []string{"holdfast-system", "holdfast-pull-*"}, ""},
		{"blank entries are none", []string{" ", ""}, []string{"holdfast-system", "holdfast-pull-*"}, ""},
		{"named ones", []string{"holdfast-system", " platform"}, []string{"holdfast-system", "platform"}, ""},
		{"every namespace", []string{"*"}, []string{"*"}, ""},
		{"'*' with others", []string{"*", "platform"}, nil, "stands alone"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := PlatformNamespaces(c.flag, "holdfast-system")
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("PlatformNamespaces(%q) = %v, %v, want an error containing %q", c.flag, got, err, c.wantErr)
				}
				return
			}
			if err != nil || !slices.Equal(got, c.want) {
				t.Fatalf("PlatformNamespaces(%q) = %v, %v, want %v", c.flag, got, err, c.want)
			}
		})
	}
	def, err := PlatformNamespaces(nil, "holdfast-system")
	if err != nil {
		t.Fatal(err)
	}
	p := Policy{PlatformNamespaces: def}
	if !p.Shared() || p.platform("tenant-a") || !p.platform("holdfast-system") {
		t.Fatalf("default policy %+v: shared %v, tenant-a platform %v, holdfast-system platform %v", p, p.Shared(), p.platform("tenant-a"), p.platform("holdfast-system"))
	}
	if p.Selects(serviceSet(""), labels.Everything(), cluster("tenant-a")) {
		t.Fatal("with default flags a platform set selects a Cluster a tenant registered and labelled")
	}
	if !p.platform("holdfast-pull-edge-1") || p.platform("holdfast-pull") || p.platform("x-holdfast-pull-edge-1") {
		t.Fatalf("default policy %+v: a Pull cluster's namespace is a platform one, and only one starting with %s", p, PullNamespacePrefix)
	}
	if (Policy{PlatformNamespaces: []string{"team-*"}}).platform("teams") {
		t.Fatal("team-* matched teams")
	}
}

func TestAlertRuleSees(t *testing.T) {
	shared := Policy{PlatformNamespaces: []string{"fleet", "holdfast-pull-*"}}
	cases := []struct {
		name string
		p    Policy
		ns   string
		mcs  *holdfastv1.MultiClusterService
		want bool
	}{
		{"a platform rule, a platform set", shared, "fleet", serviceSet(""), true},
		{"a platform rule, a tenant's set", shared, "fleet", serviceSet("team-a"), true},
		{"a rule in a platform namespace by prefix", shared, "holdfast-pull-x", serviceSet("team-a"), true},
		{"a tenant's rule, its own set", shared, "team-a", serviceSet("team-a"), true},
		{"a tenant's rule, another tenant's set", shared, "team-a", serviceSet("team-b"), false},
		{"a tenant's rule, a platform set", shared, "team-a", serviceSet(""), false},
		{"one team: every rule sees every set", single, "team-a", serviceSet(""), true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.p.AlertRuleSees(tc.ns, tc.mcs); got != tc.want {
				t.Errorf("AlertRuleSees(%q) = %v, want %v", tc.ns, got, tc.want)
			}
		})
	}
}
