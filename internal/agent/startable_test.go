package agent

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// TestWaitForStatuses: the agent starts its manager once the list its cache starts from can be
// had, from the hub or from what it kept; with the hub away and nothing kept it waits, and stops
// waiting when told to (controller-runtime's manager would not).
func TestWaitForStatuses(t *testing.T) {
	statuses := "/apis/holdfast.dev/v1alpha1/namespaces/" + hubNS + "/clusterservicestatuses"
	hub := &fakeHub{down: true, objects: map[string]string{
		statuses + "?limit=1": `{"apiVersion":"holdfast.dev/v1alpha1","kind":"ClusterServiceStatusList","metadata":{},"items":[]}`,
	}}
	k, err := NewKept(t.Context(), keptTestStore(t), "holdfast-system", hubNS, logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	scheme := runtime.NewScheme()
	if err := holdfastv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(holdfastv1.GroupVersion.WithKind("ClusterServiceStatus"), meta.RESTScopeNamespace)
	c, err := client.New(&rest.Config{Host: "https://hub", Transport: k.Wrap(hub)},
		client.Options{Scheme: scheme, Mapper: mapper, HTTPClient: &http.Client{Transport: k.Wrap(hub)}})
	if err != nil {
		t.Fatal(err)
	}
	waits := func(timeout time.Duration) (bool, time.Duration) {
		ctx, cancel := context.WithTimeout(t.Context(), timeout)
		defer cancel()
		began := time.Now()
		return waitForStatuses(ctx, c, hubNS, 10*time.Millisecond), time.Since(began)
	}

	if ok, took := waits(300 * time.Millisecond); ok || took < 250*time.Millisecond || took > 5*time.Second {
		t.Errorf("the hub away, nothing kept: started %v after %s; want to wait until stopped", ok, took)
	}
	css := &holdfastv1.ClusterServiceStatus{}
	css.Namespace, css.Name, css.ResourceVersion = hubNS, "web.edge", "7"
	k.KeepStatus(css)
	if ok, _ := waits(5 * time.Second); !ok {
		t.Error("the hub away, a status object kept: did not start")
	}
	hub.down = false
	if ok, _ := waits(5 * time.Second); !ok {
		t.Error("the hub answering: did not start")
	}
}
