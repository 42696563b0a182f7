package clusterservicestatus_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/notify"
)

// receiver records the requests a webhook receives.
type receiver struct {
	mu       sync.Mutex
	requests []received
}

type received struct {
	header http.Header
	body   []byte
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	rc.requests = append(rc.requests, received{r.Header.Clone(), body})
	rc.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

func (rc *receiver) all() []received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]received(nil), rc.requests...)
}

// TestDriftNotifications: drift is sent to a signed JSON webhook and a Slack-compatible one,
// configured by Secret references; Secret values never leave the controller; a target whose
// Secret lacks the URL is reported and skipped without holding up the others.
func TestDriftNotifications(t *testing.T) {
	name, ns := objName(t, ""), objName(t, "ns")
	ctx := context.Background()
	hooks, slack := &receiver{}, &receiver{}
	hookSrv, slackSrv := httptest.NewServer(hooks), httptest.NewServer(slack)
	defer hookSrv.Close()
	defer slackSrv.Close()
	const key = "signing-key-for-the-test"
	for secretName, data := range map[string]map[string]string{
		name + "-hook":   {notify.SecretKeyURL: hookSrv.URL + "/holdfast", notify.SecretKeyHMACKey: key},
		name + "-slack":  {notify.SecretKeyURL: slackSrv.URL + "/services/T0/B0/xyz"},
		name + "-broken": {"address": "nowhere"},
	} {
		NewWithT(t).Expect(hub.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: secretName, Namespace: templateNamespace}, StringData: data})).To(Succeed())
	}
	createTemplate(t, name, holdfastv1.ServiceTemplateSpec{Templating: holdfastv1.TemplatingGoTemplate,
		Inline: configMaps(ns, "a") + "---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: creds\n  namespace: " + ns + "\nstringData:\n  password: declared-secret-value\n"})
	createServiceSet(t, name, holdfastv1.MultiClusterServiceSpec{
		ClusterSelector: selectEnv("dev"), SyncMode: holdfastv1.SyncModeContinuousWithDriftDetection,
		Services: []holdfastv1.Service{service("web", name, ns)},
		Notifications: []holdfastv1.NotificationTarget{
			{Name: "broken", Type: holdfastv1.NotificationWebhook, SecretRef: holdfastv1.SecretReference{Namespace: templateNamespace, Name: name + "-broken"}},
			{Name: "audit", Type: holdfastv1.NotificationWebhook, SecretRef: holdfastv1.SecretReference{Namespace: templateNamespace, Name: name + "-hook"}},
			{Name: "chat", Type: holdfastv1.NotificationSlack, SecretRef: holdfastv1.SecretReference{Namespace: templateNamespace, Name: name + "-slack"}},
		},
	})
	expectReady(t, name, "cluster-1")

	editConfigMap(t, "cluster-1", ns, "a", "kubectl-edit", "cluster", "edited-by-hand")
	eventually(t, func(g Gomega) {
		sec := &corev1.Secret{}
		g.Expect(targets["cluster-1"].Get(ctx, client.ObjectKey{Namespace: ns, Name: "creds"}, sec)).To(Succeed())
		sec.Data["password"] = []byte("hand-typed-secret-value")
		g.Expect(targets["cluster-1"].Update(ctx, sec, client.FieldOwner("kubectl-edit"))).To(Succeed())
	})

	type payload struct {
		Type    string `json:"type"`
		Cluster struct {
			Name string `json:"name"`
		} `json:"cluster"`
		Object struct {
			Kind string `json:"kind"`
			Name string `json:"name"`
		} `json:"object"`
		Drift struct {
			Manager string `json:"manager"`
			Fields  []struct {
				Path, Old, New string
			} `json:"fields"`
		} `json:"drift"`
	}
	eventually(t, func(g Gomega) {
		var got []payload
		for _, r := range hooks.all() {
			g.Expect(notify.Verify([]byte(key), r.header, r.body, time.Now(), notify.DefaultTolerance)).To(Succeed(), "signature of %s", r.body)
			var p payload
			g.Expect(json.Unmarshal(r.body, &p)).To(Succeed())
			got = append(got, p)
		}
		g.Expect(got).To(ContainElement(And(HaveField("Type", string(notify.DriftCorrected)), HaveField("Object.Name", "a"),
			HaveField("Cluster.Name", "cluster-1"), HaveField("Drift.Manager", "kubectl-edit"),
			HaveField("Drift.Fields", ContainElement(HaveField("Path", ".data.cluster"))))))
		g.Expect(got).To(ContainElement(And(HaveField("Type", string(notify.DriftCorrected)), HaveField("Object.Name", "creds"))))
		g.Expect(slack.all()).NotTo(BeEmpty())
		g.Expect(string(slack.all()[0].body)).To(HavePrefix(`{"text":`))
	})
	for _, r := range append(hooks.all(), slack.all()...) {
		body := string(r.body)
		for _, secret := range []string{"hand-typed-secret-value", "declared-secret-value", base64.StdEncoding.EncodeToString([]byte("hand-typed-secret-value"))} {
			if strings.Contains(body, secret) {
				t.Fatalf("a notification carries a Secret value: %s", body)
			}
		}
	}
	if strings.Contains(logs.String(), hookSrv.URL) || strings.Contains(logs.String(), key) {
		t.Fatal("a notification URL or signing key was logged")
	}
	NewWithT(t).Expect(logs.String()).To(ContainSubstring(`"target": "broken"`))
	eventually(t, func(g Gomega) {
		notes := warningNotes(g, statusOf(g, name, "cluster-1").Name, "NotificationTargetInvalid")
		g.Expect(notes).To(ContainElement(And(ContainSubstring(name+"-broken"), ContainSubstring(`"url"`))))
	})
}
