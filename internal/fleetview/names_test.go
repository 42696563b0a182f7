package fleetview

import (
	"bytes"
	"strings"
	"testing"
	"time"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/fleetview/fleetviewtest"
)

func TestWriteNames(t *testing.T) {
	statuses := fleetviewtest.Statuses()
	withClusterRole := fleetviewtest.Statuses()
	withClusterRole[0].Status.Resources = []holdfastv1.ResourceStatus{{ResourceRef: fleetviewtest.Ref("rbac.authorization.k8s.io", "ClusterRole", "", "view"),
		Service: "rbac", State: holdfastv1.ResourceMissing}}
	cases := []struct {
		name string
		doc  Named
		want []string
	}{
		{"status: one line per status object, not per service", BuildFleetStatus(statuses, Filter{}), []string{
			"clusterservicestatus.holdfast.dev/fleet/apps.c1",
			"clusterservicestatus.holdfast.dev/fleet/apps.c2",
			"clusterservicestatus.holdfast.dev/other/infra.c1",
		}},
		{"status filtered", BuildFleetStatus(statuses, Filter{Service: "cache"}), []string{"clusterservicestatus.holdfast.dev/fleet/apps.c1"}},
		{"drift: the drifted objects, kind in lower case, no core group", BuildDriftList(statuses, Filter{}, false), []string{
			"fleet/c1/service/shop/cache",
			"fleet/c1/deployment.apps/shop/web",
			"fleet/c1/secret/shop/creds",
		}},
		{"drift --all: each object once", BuildDriftList(statuses, Filter{}, true), []string{
			"fleet/c1/service/shop/cache",
			"fleet/c1/deployment.apps/shop/web",
			"fleet/c1/secret/shop/creds",
			"fleet/c1/configmap/shop/web-settings",
		}},
		{"drift: a cluster-scoped object keeps five fields", BuildDriftList(withClusterRole, Filter{ServiceSet: "infra"}, false), []string{
			"other/c1/clusterrole.rbac.authorization.k8s.io//view",
		}},
		{"history: each object once, newest first", BuildDriftHistory(statuses, Filter{}, time.Time{}, 0), []string{
			"fleet/c1/secret/shop/creds",
			"fleet/c1/service/shop/cache",
			"fleet/c1/deployment.apps/shop/web",
			"fleet/c1/configmap/shop/web-settings",
		}},
		{"correct a service set", NewCorrectionRequestList(CorrectionRequest{ServiceSet: "apps", Target: TargetRef{Kind: "MultiClusterService", Name: "apps"}}),
			[]string{"multiclusterservice.holdfast.dev/apps"}},
		{"correct one cluster", NewCorrectionRequestList(CorrectionRequest{ServiceSet: "apps", ClusterNamespace: "fleet", Cluster: "c2",
			Target: TargetRef{Kind: "ClusterServiceStatus", Namespace: "fleet", Name: "apps.c2"}}),
			[]string{"clusterservicestatus.holdfast.dev/fleet/apps.c2"}},
		{"pause", NewPauseRequestList(PauseRequest{ServiceSet: "apps", Paused: true}), []string{"multiclusterservice.holdfast.dev/apps"}},
		{"nothing matches", BuildDriftList(statuses, Filter{Cluster: "c2"}, true), nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := WriteNames(&buf, c.doc); err != nil {
				t.Fatal(err)
			}
			want := ""
			if len(c.want) > 0 {
				want = strings.Join(c.want, "\n") + "\n"
			}
			if buf.String() != want {
				t.Errorf("-o name printed:\n%s\nwant:\n%s", buf.String(), want)
			}
			for _, l := range c.want {
				if strings.HasPrefix(l, "fleet/") || strings.HasPrefix(l, "other/") {
					if n := strings.Count(l, "/"); n != 4 {
						t.Errorf("%q has %d slashes, want 4 (five fields)", l, n)
					}
				}
			}
		})
	}
}
