package agent

import (
	"encoding/json"
	"net/http"
	"strconv"
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/controller/clusterservicestatus"
	"holdfast.dev/holdfast/internal/work"
)

// TestKeptKeepsStatusObjectsReadWhole: the status objects the reconcile read whole from its cache
// (no read of the hub) are what a restarted agent's cache starts from while the hub is away; the
// parts of a work read by name are kept until the kept status object names another work whose
// parts are all kept; a status object that is gone is forgotten with its works.
func TestKeptKeepsStatusObjectsReadWhole(t *testing.T) {
	hub := &fakeHub{objects: map[string]string{}}
	own := keptTestStore(t)
	k, err := NewKept(t.Context(), own, "holdfast-system", hubNS, logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	rt := k.Wrap(hub)
	statuses := "/apis/holdfast.dev/v1alpha1/namespaces/" + hubNS + "/clusterservicestatuses"
	key := types.NamespacedName{Namespace: hubNS, Name: "web.edge"}
	// publish serves the one part of a work of web.edge from the hub, read once by name (kept),
	// and returns its path.
	publish := func(digest string) string {
		t.Helper()
		part := work.Parts(key, []byte("data of "+digest), digest, 0)[0]
		body, err := json.Marshal(part)
		if err != nil {
			t.Fatal(err)
		}
		path := "/api/v1/namespaces/" + hubNS + "/secrets/" + part.Name
		hub.down = false
		hub.objects[path] = string(body)
		if code, _, _ := get(t, rt, path); code != http.StatusOK {
			t.Fatalf("reading the part %s: %d", part.Name, code)
		}
		return path
	}
	statusNaming := func(rv int, digest string) *holdfastv1.ClusterServiceStatus {
		css := &holdfastv1.ClusterServiceStatus{}
		css.Namespace, css.Name, css.ResourceVersion = key.Namespace, key.Name, strconv.Itoa(rv)
		css.Annotations = map[string]string{clusterservicestatus.WorkAnnotation: digest, clusterservicestatus.WorkPartsAnnotation: "1"}
		css.Status.Drifts = []holdfastv1.DriftRecord{{}}
		return css
	}
	answered := func(path string) bool {
		t.Helper()
		hub.down = true
		code, _, kept := get(t, rt, path)
		return code == http.StatusOK && kept
	}

	first := publish("sha256:aaaaaaaaaaaaaaaa")
	k.KeepStatus(statusNaming(7, "sha256:aaaaaaaaaaaaaaaa"))
	hub.down = true
	code, body, kept := get(t, rt, statuses+"?limit=500&resourceVersion=0")
	var list holdfastv1.ClusterServiceStatusList
	if code != http.StatusOK || !kept || json.Unmarshal([]byte(body), &list) != nil || len(list.Items) != 1 ||
		list.Items[0].ResourceVersion != "7" || len(list.Items[0].Status.Drifts) != 1 {
		t.Fatalf("the list of the status objects kept: %d kept=%v %s", code, kept, body)
	}
	if !answered(first) {
		t.Fatal("the work's part read by name was not kept")
	}

	// A newer work, named before its part was read: the kept part stays until it is.
	k.KeepStatus(statusNaming(8, "sha256:bbbbbbbbbbbbbbbb"))
	if !answered(first) {
		t.Error("the only work kept was let go before the one named was read")
	}
	second := publish("sha256:bbbbbbbbbbbbbbbb")
	k.KeepStatus(statusNaming(9, "sha256:bbbbbbbbbbbbbbbb"))
	if answered(first) {
		t.Error("the part of a work the status object no longer names is still kept")
	}
	if !answered(second) {
		t.Error("the part of the work the status object names was let go")
	}

	k.ForgetStatus(types.NamespacedName{Namespace: "holdfast-pull-other", Name: key.Name})
	if !answered(second) {
		t.Error("another namespace's status object going made this one's work go")
	}
	k.ForgetStatus(key)
	if answered(second) || answered(statuses+"/"+key.Name) {
		t.Error("a status object gone is still kept, or its work")
	}
	k.flush(t.Context())
	if secrets := savedSecrets(t, own); len(secrets.Items) != 0 {
		t.Errorf("%d Secrets still kept on the agent's cluster", len(secrets.Items))
	}
}
