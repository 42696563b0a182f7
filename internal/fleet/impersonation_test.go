package fleet

import (
	"context"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// rbacForbidden is the error an API server's authorizer answers with, as client-go decodes it.
func rbacForbidden(user, verb string, gr schema.GroupResource, name, namespace string) error {
	where := " at the cluster scope"
	if namespace != "" {
		where = fmt.Sprintf(" in the namespace %q", namespace)
	}
	return apierrors.NewForbidden(gr, name, fmt.Errorf("User %q cannot %s resource %q in API group %q%s", user, verb, gr.Resource, gr.Group, where))
}

// TestExplainForbidden: a refusal of the impersonated ServiceAccount's RBAC, or of Holdfast's
// right to impersonate it, says whom to grant what; every other error is left as it is.
func TestExplainForbidden(t *testing.T) {
	sa := ServiceAccount{Namespace: "team-a", Name: "deployer"}
	configMaps := schema.GroupResource{Resource: "configmaps"}
	quota := apierrors.NewForbidden(configMaps, "x", errors.New(`exceeded quota: q, requested: count/configmaps=1, used: count/configmaps=10, limited: count/configmaps=10`))
	tests := []struct {
		name string
		err  error
		// want is the message of the *ImpersonationError; "" when err must come back unchanged.
		want          string
		impersonation bool
	}{
		{name: "apply refused in a namespace",
			err: rbacForbidden(sa.UserName(), "create", configMaps, "x", "b"),
			want: "forbidden as system:serviceaccount:team-a:deployer (create configmaps in namespace b): grant it get, list, create, patch and delete " +
				"on configmaps in namespace b (a Role and RoleBinding), or change spec.serviceAccount"},
		{name: "delete refused cluster-wide",
			err: rbacForbidden(sa.UserName(), "delete", schema.GroupResource{Group: "rbac.authorization.k8s.io", Resource: "clusterroles"}, "x", ""),
			want: "forbidden as system:serviceaccount:team-a:deployer (delete clusterroles.rbac.authorization.k8s.io cluster-wide): grant it get, list, create, patch and delete " +
				"on clusterroles.rbac.authorization.k8s.io cluster-wide (a ClusterRole and ClusterRoleBinding), or change spec.serviceAccount"},
		{name: "list refused",
			err: rbacForbidden(sa.UserName(), "list", schema.GroupResource{Group: "apps", Resource: "deployments"}, "", "b"),
			want: "forbidden as system:serviceaccount:team-a:deployer (list deployments.apps in namespace b): grant it get, list, create, patch and delete " +
				"on deployments.apps in namespace b (a Role and RoleBinding), or change spec.serviceAccount"},
		{name: "Holdfast may not impersonate",
			err: rbacForbidden("system:serviceaccount:holdfast-system:holdfast-manager", "impersonate", schema.GroupResource{Resource: "serviceaccounts"}, "deployer", "team-a"),
			want: "Holdfast's identity on the cluster (system:serviceaccount:holdfast-system:holdfast-manager) may not act as system:serviceaccount:team-a:deployer: " +
				"grant it impersonate on serviceaccounts in namespace team-a (a Role and RoleBinding), or change spec.serviceAccount",
			impersonation: true},
		{name: "another user refused", err: rbacForbidden("system:serviceaccount:team-b:deployer", "create", configMaps, "x", "b")},
		{name: "quota", err: quota},
		{name: "pod security", err: apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "p", errors.New(`violates PodSecurity "restricted:latest": privileged`))},
		{name: "not found", err: apierrors.NewNotFound(configMaps, "x")},
		{name: "no error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := explainForbidden(tt.err, sa)
			var ie *ImpersonationError
			if tt.want == "" {
				if got != tt.err || errors.As(got, &ie) {
					t.Fatalf("got %v, want the error unchanged: %v", got, tt.err)
				}
				return
			}
			if !errors.As(got, &ie) {
				t.Fatalf("got %T %v, want an *ImpersonationError", got, got)
			}
			if got.Error() != tt.want || ie.Impersonation != tt.impersonation || ie.ServiceAccount != sa {
				t.Errorf("got %q (impersonation %t, %v), want %q (impersonation %t)", got, ie.Impersonation, ie.ServiceAccount, tt.want, tt.impersonation)
			}
			if !apierrors.IsForbidden(got) || !errors.Is(got, tt.err) {
				t.Errorf("%v: no longer Forbidden, or no longer wraps the API server's error", got)
			}
			var orig apierrors.APIStatus
			if errors.As(tt.err, &orig) && !reflect.DeepEqual(ie.Status().Details, orig.Status().Details) {
				t.Errorf("the API server's details are lost: %+v, want %+v", ie.Status().Details, orig.Status().Details)
			}
			if explainForbidden(got, sa) != got {
				t.Error("explained twice")
			}
		})
	}
}

// fakeAPIServer serves discovery of v1 ConfigMaps and the ConfigMap b/x: to Holdfast's own
// identity, and as an authorizer would to the ServiceAccount team-a:deployer (refused) and to
// team-a:nobody (Holdfast may not impersonate it). It records the identity of every request.
type fakeAPIServer struct {
	mu   sync.Mutex
	seen []string // Impersonate-User of each ConfigMap request, "" for none
}

func (f *fakeAPIServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/api":
		answer(w, "application/json", http.StatusOK, `{"kind":"APIVersions","versions":["v1"]}`)
		return
	case "/apis":
		answer(w, "application/json", http.StatusOK, `{"kind":"APIGroupList","apiVersion":"v1","groups":[]}`)
		return
	case "/api/v1":
		answer(w, "application/json", http.StatusOK, `{"kind":"APIResourceList","groupVersion":"v1","resources":[`+
			`{"name":"configmaps","singularName":"configmap","namespaced":true,"kind":"ConfigMap","verbs":["get","list","create","patch","delete"]}]}`)
		return
	case "/api/v1/namespaces/b/configmaps/x":
	default:
		http.NotFound(w, r)
		return
	}
	if r.Header.Get("Authorization") != "Bearer "+secretValue {
		answer(w, "application/json", http.StatusUnauthorized, status(http.StatusUnauthorized, "Unauthorized", "Unauthorized"))
		return
	}
	user := r.Header.Get("Impersonate-User")
	f.mu.Lock()
	f.seen = append(f.seen, user)
	f.mu.Unlock()
	switch user {
	case "":
		answer(w, "application/json", http.StatusOK, `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"x","namespace":"b"}}`)
	case "system:serviceaccount:team-a:deployer":
		answer(w, "application/json", http.StatusForbidden, forbiddenStatus("configmaps", "x",
			`User "system:serviceaccount:team-a:deployer" cannot get resource "configmaps" in API group "" in the namespace "b"`))
	default:
		answer(w, "application/json", http.StatusForbidden, forbiddenStatus("serviceaccounts", strings.TrimPrefix(user, "system:serviceaccount:team-a:"),
			`User "holdfast" cannot impersonate resource "serviceaccounts" in API group "" in the namespace "team-a"`))
	}
}

// forbiddenStatus is the Status of apierrors.NewForbidden as an API server sends it.
func forbiddenStatus(resource, name, why string) string {
	return fmt.Sprintf(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":403,`+
		`"details":{"name":%q,"kind":%q},"message":%q}`, name, resource, fmt.Sprintf("%s %q is forbidden: %s", resource, name, why))
}

func (f *fakeAPIServer) identities() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.seen...)
}

// connectAs returns a registry connection to srv, with the kubeconfig changed by mutate.
func connectAs(t *testing.T, srv *httptest.Server, mutate func(*clientcmdapi.Config)) (*Registry, *Connection) {
	t.Helper()
	r := NewRegistry(Options{})
	t.Cleanup(r.Close)
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	conn, err := r.Connect(types.NamespacedName{Namespace: "fleet", Name: "c"}, "", kubeconfig(t, func(c *clientcmdapi.Config) {
		c.Clusters["c"].Server, c.Clusters["c"].CertificateAuthorityData = srv.URL, ca
		if mutate != nil {
			mutate(c)
		}
	}))
	if err != nil {
		t.Fatal(err)
	}
	return r, conn
}

// TestClientAsActsAsTheServiceAccount: ClientAs sends every request with the connection's
// credentials, impersonating the ServiceAccount; the connection's own client does not; and the
// API server's refusals name the ServiceAccount and what to grant.
func TestClientAsActsAsTheServiceAccount(t *testing.T) {
	api := &fakeAPIServer{}
	srv := httptest.NewTLSServer(api)
	t.Cleanup(srv.Close)
	_, conn := connectAs(t, srv, nil)
	ctx := context.Background()
	key := client.ObjectKey{Namespace: "b", Name: "x"}

	if err := conn.APIReader().Get(ctx, key, &corev1.ConfigMap{}); err != nil {
		t.Fatalf("as Holdfast's own identity: %v", err)
	}
	deployer, err := conn.ClientAs(ServiceAccount{Namespace: "team-a", Name: "deployer"})
	if err != nil {
		t.Fatal(err)
	}
	err = deployer.Get(ctx, key, &corev1.ConfigMap{})
	var ie *ImpersonationError
	if !errors.As(err, &ie) || !apierrors.IsForbidden(err) || ie.Impersonation {
		t.Fatalf("as the ServiceAccount: got %T %v, want a refusal of the ServiceAccount", err, err)
	}
	if want := "forbidden as system:serviceaccount:team-a:deployer (get configmaps in namespace b): grant it get, list, create, patch and delete " +
		"on configmaps in namespace b (a Role and RoleBinding), or change spec.serviceAccount"; err.Error() != want {
		t.Errorf("got %q, want %q", err, want)
	}
	nobody, err := conn.ClientAs(ServiceAccount{Namespace: "team-a", Name: "nobody"})
	if err != nil {
		t.Fatal(err)
	}
	err = nobody.Get(ctx, key, &corev1.ConfigMap{})
	if !errors.As(err, &ie) || !ie.Impersonation || !strings.Contains(err.Error(), "may not act as system:serviceaccount:team-a:nobody: grant it impersonate on serviceaccounts in namespace team-a") {
		t.Errorf("Holdfast refused the impersonation: got %v", err)
	}
	want := []string{"", "system:serviceaccount:team-a:deployer", "system:serviceaccount:team-a:nobody"}
	if got := api.identities(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("requests made as %q, want %q", got, want)
	}
}

// TestClientAsRefusesImpersonatingKubeconfigs: Kubernetes cannot impersonate twice.
func TestClientAsRefusesImpersonatingKubeconfigs(t *testing.T) {
	srv := httptest.NewTLSServer(http.NotFoundHandler())
	t.Cleanup(srv.Close)
	_, conn := connectAs(t, srv, func(c *clientcmdapi.Config) { c.AuthInfos["u"].Impersonate = "someone" })
	if _, err := conn.ClientAs(ServiceAccount{Namespace: "team-a", Name: "deployer"}); err == nil || !strings.Contains(err.Error(), "impersonates already") {
		t.Errorf("got %v, want a refusal", err)
	}
}

// TestImpersonatingClientsAreKeptBoundedAndGoWithTheConnection: one client per ServiceAccount,
// reused; at most MaxImpersonatingClients per connection, the least recently used let go; none
// kept once the connection is let go.
func TestImpersonatingClientsAreKeptBoundedAndGoWithTheConnection(t *testing.T) {
	srv := httptest.NewTLSServer(http.NotFoundHandler())
	t.Cleanup(srv.Close)
	r, conn := connectAs(t, srv, nil)
	as := func(i int) client.Client {
		t.Helper()
		c, err := conn.ClientAs(ServiceAccount{Namespace: "team-a", Name: fmt.Sprintf("sa-%d", i)})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	first := as(0)
	if as(0) != first {
		t.Fatal("a second client built for the same ServiceAccount")
	}
	if as(1) == first {
		t.Fatal("two ServiceAccounts share a client")
	}
	for i := 2; i < MaxImpersonatingClients+10; i++ {
		as(0) // kept in use
		as(i)
	}
	if n := conn.impersonating.len(); n != MaxImpersonatingClients {
		t.Errorf("%d clients kept, want %d", n, MaxImpersonatingClients)
	}
	if as(0) != first {
		t.Error("the client in use was let go")
	}
	if n := conn.impersonating.len(); n != MaxImpersonatingClients {
		t.Errorf("%d clients kept, want %d", n, MaxImpersonatingClients)
	}

	r.Remove(conn.Key())
	if n := conn.impersonating.len(); n != 0 {
		t.Errorf("%d clients kept after the connection was let go", n)
	}
	if c := as(0); c == nil || c == first || conn.impersonating.len() != 0 {
		t.Error("a closed connection keeps clients, or gives none")
	}
}

// TestClientCacheEvictsTheLeastRecentlyUsed: the bound lets go of the client used longest ago.
func TestClientCacheEvictsTheLeastRecentlyUsed(t *testing.T) {
	cache := clientCache{max: 2}
	builds := map[string]int{}
	get := func(name string) {
		t.Helper()
		if _, err := cache.get(ServiceAccount{Namespace: "ns", Name: name}, func() (client.Client, error) {
			builds[name]++
			return &impersonatingClient{}, nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	get("a")
	get("b")
	get("a") // b is now the least recently used
	get("c") // lets b go
	get("a")
	get("b") // built again, lets c go
	get("a")
	if want := map[string]int{"a": 1, "b": 2, "c": 1}; fmt.Sprint(builds) != fmt.Sprint(want) {
		t.Errorf("builds %v, want %v", builds, want)
	}
	failing := errors.New("cannot build")
	if _, err := cache.get(ServiceAccount{Namespace: "ns", Name: "d"}, func() (client.Client, error) { return nil, failing }); !errors.Is(err, failing) {
		t.Errorf("got %v, want the build's error", err)
	}
	if cache.len() != 2 {
		t.Errorf("%d kept, want 2 (a failed build keeps nothing)", cache.len())
	}
}
