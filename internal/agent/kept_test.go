package agent

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/naming"
	"holdfast.dev/holdfast/internal/work"
)

// fakeHub answers GETs of the paths it holds, 404 others, and nothing while down.
type fakeHub struct {
	down    bool
	objects map[string]string
	asked   int
}

func (h *fakeHub) RoundTrip(req *http.Request) (*http.Response, error) {
	h.asked++
	if h.down {
		return nil, errors.New("dial tcp 127.0.0.1:6443: connect: connection refused")
	}
	body, ok := h.objects[req.URL.RequestURI()]
	status := http.StatusOK
	if !ok {
		status, body = http.StatusNotFound, `{"kind":"Status","code":404}`
	}
	return &http.Response{StatusCode: status, Header: http.Header{"Content-Type": []string{"application/json"}},
		Body: io.NopCloser(strings.NewReader(body)), Request: req}, nil
}

const hubNS = "holdfast-pull-edge"

func keptTestStore(t *testing.T) client.Client {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	return fake.NewClientBuilder().WithScheme(scheme).Build()
}

// savedSecrets are the Secrets the agent keeps on its cluster (keptTestStore).
func savedSecrets(t *testing.T, own client.Client) *corev1.SecretList {
	t.Helper()
	secrets := &corev1.SecretList{}
	if err := own.List(t.Context(), secrets, client.InNamespace("holdfast-system")); err != nil {
		t.Fatal(err)
	}
	return secrets
}

func get(t *testing.T, rt http.RoundTripper, uri string) (int, string, bool) {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, "https://hub"+uri, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := rt.RoundTrip(req)
	if err != nil {
		return 0, err.Error(), false
	}
	defer func() { _ = resp.Body.Close() }()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), resp.Header.Get(keptHeader) != ""
}

func TestKeptAnswersWhatTheHubAnsweredWhenItIsAway(t *testing.T) {
	statuses := "/apis/holdfast.dev/v1alpha1/namespaces/" + hubNS + "/clusterservicestatuses"
	css := statuses + "/web-edge"
	cssBody := `{"apiVersion":"holdfast.dev/v1alpha1","kind":"ClusterServiceStatus","metadata":{"name":"web-edge","resourceVersion":"42"}}`
	works := "/api/v1/namespaces/" + hubNS + "/secrets?" + url.Values{"labelSelector": {work.StatusLabel + "=" + naming.LabelValue("web-edge")}}.Encode()
	worksBody := `{"kind":"SecretList","items":[{"metadata":{"name":"work-1"}}]}`
	other := "/api/v1/namespaces/holdfast-pull-other/secrets"
	hub := &fakeHub{objects: map[string]string{
		css + "?resourceVersion=41": cssBody, works: worksBody, other: `{"kind":"SecretList"}`,
		statuses + "?watch=true": `{}`,
	}}
	own := keptTestStore(t)
	k, err := NewKept(t.Context(), own, "holdfast-system", hubNS, logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	rt := k.Wrap(hub)

	if code, body, kept := get(t, rt, css+"?resourceVersion=41"); code != http.StatusOK || body != cssBody || kept {
		t.Fatalf("with the hub up, its answer passes: %d %q kept=%v", code, body, kept)
	}
	get(t, rt, works)
	get(t, rt, other)
	get(t, rt, statuses+"?watch=true")

	hub.down = true
	t.Run("a status object read whole, at another resourceVersion", func(t *testing.T) {
		code, body, kept := get(t, rt, css+"?resourceVersion=50")
		if code != http.StatusOK || body != cssBody || !kept {
			t.Errorf("got %d %q kept=%v, want the kept answer", code, body, kept)
		}
	})
	t.Run("the works of the status object", func(t *testing.T) {
		if code, body, kept := get(t, rt, works); code != http.StatusOK || body != worksBody || !kept {
			t.Errorf("got %d %q kept=%v, want the kept answer", code, body, kept)
		}
	})
	t.Run("the list the cache starts from, made of the status objects kept", func(t *testing.T) {
		code, body, kept := get(t, rt, statuses+"?limit=500&resourceVersion=0")
		if code != http.StatusOK || !kept {
			t.Fatalf("got %d %q kept=%v", code, body, kept)
		}
		var list holdfastv1.ClusterServiceStatusList
		if err := json.Unmarshal([]byte(body), &list); err != nil {
			t.Fatal(err)
		}
		if len(list.Items) != 1 || list.Items[0].Name != "web-edge" || list.ResourceVersion != "42" {
			t.Errorf("list %+v, want web-edge at resourceVersion 42", list)
		}
	})
	for name, uri := range map[string]string{
		"another namespace's read":   other,
		"a watch":                    statuses + "?watch=true",
		"a read never answered":      statuses + "/db-edge",
		"a list with other selector": "/api/v1/namespaces/" + hubNS + "/secrets?labelSelector=x%3Dy",
	} {
		t.Run(name+" is not answered", func(t *testing.T) {
			if code, body, _ := get(t, rt, uri); code != 0 || !strings.Contains(body, "connection refused") {
				t.Errorf("got %d %q, want the hub's failure", code, body)
			}
		})
	}

	t.Run("saved on the agent's cluster, loaded by the next agent", func(t *testing.T) {
		k.flush(t.Context())
		secrets := savedSecrets(t, own)
		if len(secrets.Items) != 2 {
			t.Errorf("%d Secrets kept, want 2 (the status object and its works)", len(secrets.Items))
		}
		next, err := NewKept(t.Context(), own, "holdfast-system", hubNS, logr.Discard())
		if err != nil {
			t.Fatal(err)
		}
		if code, body, kept := get(t, next.Wrap(hub), css); code != http.StatusOK || body != cssBody || !kept {
			t.Errorf("the next agent answered %d %q kept=%v", code, body, kept)
		}
	})

	t.Run("a newer answer replaces the one saved", func(t *testing.T) {
		hub.down = false
		newer := strings.Replace(cssBody, `"42"`, `"43"`, 1)
		hub.objects[css+"?resourceVersion=41"] = newer
		if code, body, _ := get(t, rt, css+"?resourceVersion=41"); code != http.StatusOK || body != newer {
			t.Fatalf("got %d %q", code, body)
		}
		hub.down = true
		k.flush(t.Context())
		next, err := NewKept(t.Context(), own, "holdfast-system", hubNS, logr.Discard())
		if err != nil {
			t.Fatal(err)
		}
		if code, body, kept := get(t, next.Wrap(hub), css); code != http.StatusOK || body != newer || !kept {
			t.Errorf("the next agent answered %d %q kept=%v, want the newer answer", code, body, kept)
		}
	})

	t.Run("a status object the hub says is gone is forgotten, with its works", func(t *testing.T) {
		hub.down = false
		delete(hub.objects, css+"?resourceVersion=41")
		if code, _, _ := get(t, rt, css); code != http.StatusNotFound {
			t.Fatalf("got %d, want the hub's NotFound", code)
		}
		hub.down = true
		for _, uri := range []string{css, works, statuses} {
			if code, _, _ := get(t, rt, uri); code != 0 {
				t.Errorf("%s answered %d after the status object was gone", uri, code)
			}
		}
		k.flush(t.Context())
		secrets := savedSecrets(t, own)
		if len(secrets.Items) != 0 {
			t.Errorf("%d Secrets still kept", len(secrets.Items))
		}
	})
}
