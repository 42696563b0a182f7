package clusterservicestatus_test

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/fleet"
)

// TestRedirectingTargetQuotesNothing: a Cluster whose server (here a reverse proxy in front of
// cluster-1) answers the requests for one object with a redirect to an internal service. The
// redirect is not followed, the internal service is never asked, and what it would answer
// reaches neither the status object (which tenants read) nor its Events: the object's entry
// says the server redirected, and the set's other object deploys.
func TestRedirectingTargetQuotesNothing(t *testing.T) {
	ctx := context.Background()
	name, ns := objName(t, ""), objName(t, "ns")
	const marker = "internal-service-body-5d2a"
	var asked atomic.Int32
	internal := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		asked.Add(1)
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte("internal service: " + marker))
	}))
	defer internal.Close()
	proxy := redirectingProxy(t, "cluster-1", "/configmaps/leaky", internal.URL+"/"+marker)

	t.Log("A Cluster is registered whose server is the proxy")
	cluster := name + "-c"
	kc := clientcmdapi.NewConfig()
	kc.Clusters["c"] = &clientcmdapi.Cluster{Server: proxy.URL,
		CertificateAuthorityData: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: proxy.Certificate().Raw})}
	kc.AuthInfos["u"] = &clientcmdapi.AuthInfo{Token: "the-proxy-authenticates"}
	kc.Contexts["c"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "u"}
	kc.CurrentContext = "c"
	data, err := clientcmd.Write(*kc)
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	c, err := fleet.Register(ctx, hub, fleet.Registration{Namespace: clusterNamespace, Name: cluster, Labels: map[string]string{"redirect": name}, Kubeconfig: data})
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() {
		_ = hub.Delete(ctx, c)
		_ = hub.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: clusterNamespace, Name: fleet.KubeconfigSecretName(cluster)}})
		NewWithT(t).Eventually(func() bool { return apiNotFound(hub.Get(ctx, client.ObjectKeyFromObject(c), c)) }).
			WithTimeout(timeout).WithPolling(poll).Should(BeTrue(), "Cluster %s still exists", cluster)
	})

	t.Log("A service set deploys two ConfigMaps to it; the server redirects the requests for one")
	createTemplate(t, name, holdfastv1.ServiceTemplateSpec{Inline: "apiVersion: v1\nkind: Namespace\nmetadata: {name: " + ns + "}\n---\n" +
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: fine, namespace: " + ns + "}\ndata: {k: v}\n---\n" +
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: leaky, namespace: " + ns + "}\ndata: {k: v}\n"})
	createServiceSet(t, name, holdfastv1.MultiClusterServiceSpec{
		ClusterSelector: holdfastv1.ClusterSelector{LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"redirect": name}}},
		Services:        []holdfastv1.Service{service("web", name, ns)},
	})
	quotesNothing := func(g Gomega, css *holdfastv1.ClusterServiceStatus) {
		all, err := json.Marshal(css)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(string(all)).NotTo(Or(ContainSubstring(marker), ContainSubstring(internal.URL)), "the status quotes the internal service")
		events := &eventsv1.EventList{}
		g.Expect(hub.List(ctx, events, client.InNamespace(clusterNamespace))).To(Succeed())
		for _, e := range events.Items {
			if e.Regarding.Name == css.Name {
				g.Expect(e.Note).NotTo(Or(ContainSubstring(marker), ContainSubstring(internal.URL)), "Event %s quotes the internal service", e.Reason)
			}
		}
	}
	eventually(t, func(g Gomega) {
		css := statusOf(g, name, cluster)
		leaky := entryOf(css, "ConfigMap", "leaky")
		g.Expect(leaky.State).To(Equal(holdfastv1.ResourceFailed))
		g.Expect(leaky.Message).To(ContainSubstring("the cluster's API server answered with a redirect, which Holdfast does not follow (HTTP 302 Found)"))
		g.Expect(entryOf(css, "ConfigMap", "fine").State).To(Equal(holdfastv1.ResourceInSync))
		g.Expect(getConfigMap(g, "cluster-1", ns, "fine").Data).To(HaveKeyWithValue("k", "v"))
		quotesNothing(g, css)
	})
	consistently(t, 3*time.Second, func(g Gomega) { quotesNothing(g, statusOf(g, name, cluster)) })
	NewWithT(t).Expect(asked.Load()).To(BeZero(), "the internal service was asked")
}

// redirectingProxy serves target's API server on a TLS listener of its own, authenticating to
// it with the target's admin credentials, except that it answers every request whose path holds
// redirected with a 302 to location.
func redirectingProxy(t *testing.T, target, redirected, location string) *httptest.Server {
	t.Helper()
	var upstream *rest.Config
	for _, tc := range fl.Targets {
		if tc.Name() == target {
			upstream = tc.RESTConfig()
		}
	}
	NewWithT(t).Expect(upstream).NotTo(BeNil(), "target %s", target)
	transport, err := rest.TransportFor(upstream)
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	to, err := url.Parse(upstream.Host)
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(to)
			r.Out.Header.Del("Authorization")
		},
		Transport: transport, FlushInterval: -1,
	}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, redirected) {
			http.Redirect(w, r, location, http.StatusFound)
			return
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}
