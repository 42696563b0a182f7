package clusterservicestatus_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/decrypt/decrypttest"
)

// TestSOPSEncryptedSecretFromGitRepository: a Secret manifest encrypted with SOPS for an age key,
// in a Flux GitRepository's artifact, is decrypted at render time with the key of a Secret in
// the template's namespace and deployed in the clear. A key Secret of the same name in another
// namespace is never used; a Secret without the file's key is refused on the template and the
// cluster, naming the file and the Secret. A drift of the decrypted Secret is put back. The
// plaintext is in no object and no Event of the hub, and in no line of the controller's log.
func TestSOPSEncryptedSecretFromGitRepository(t *testing.T) {
	installGitRepositoryCRD(t)
	ctx := context.Background()
	name, ns := objName(t, ""), objName(t, "ns")
	keysName := name + "-keys"
	random := make([]byte, 12)
	_, _ = rand.Read(random)
	plaintext := "sops-plaintext-" + hex.EncodeToString(random)
	ageFile, recipient := decrypttest.AgeKey(t)
	strangerFile, _ := decrypttest.AgeKey(t)

	manifest := fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\n  namespace: %s\nstringData:\n  password: %s\n", ns, plaintext)
	encrypted := decrypttest.Encrypt(t, "secret.yaml", []byte(manifest), decrypttest.Options{Age: []string{recipient}, EncryptedRegex: "^(data|stringData)$"})
	srv := newArtifactServer(t)
	tarball := tarGz(t, map[string]string{"deploy/secret.yaml": string(encrypted), "deploy/app.yaml": artifactConfigMap(ns, "one")})
	setGitArtifact(t, name, srv.serve("/"+name+"/rev1.tar.gz", tarball), "main@sha1:5005", sha256Digest(tarball))
	t.Cleanup(func() {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("source.toolkit.fluxcd.io/v1")
		u.SetKind("GitRepository")
		u.SetNamespace(templateNamespace)
		u.SetName(name)
		_ = hub.Delete(ctx, u)
	})

	t.Log("The key Secret exists only in another namespace: not found in the template's")
	elsewhere := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: clusterNamespace, Name: keysName}, Data: map[string][]byte{"age.agekey": ageFile}}
	NewWithT(t).Expect(hub.Create(ctx, elsewhere)).To(Succeed())
	t.Cleanup(func() { _ = hub.Delete(ctx, elsewhere) })
	createTemplate(t, name, holdfastv1.ServiceTemplateSpec{
		Artifact: &holdfastv1.ArtifactSource{SourceRef: &holdfastv1.FluxSourceReference{Kind: "GitRepository", Name: name},
			Path: "deploy", Interval: &metav1.Duration{Duration: time.Second}},
		Decryption: &holdfastv1.Decryption{Provider: holdfastv1.DecryptionSOPS, SecretRef: holdfastv1.LocalObjectReference{Name: keysName}},
	})
	createServiceSet(t, name, holdfastv1.MultiClusterServiceSpec{
		ClusterSelector: selectEnv("dev"), SyncMode: holdfastv1.SyncModeContinuousWithDriftDetection,
		Services: []holdfastv1.Service{service("web", name, ns)},
	})
	secretRef := fmt.Sprintf("Secret %s/%s", templateNamespace, keysName)
	eventually(t, func(g Gomega) {
		src := condition(getTemplate(g, name).Status.Conditions, holdfastv1.SourceAvailableCondition)
		g.Expect(src.Reason).To(Equal(holdfastv1.SourceNotFoundReason))
		g.Expect(src.Message).To(ContainSubstring(secretRef + " (spec.decryption.secretRef) not found"))
		rendered := condition(statusOf(g, name, "cluster-1").Status.Conditions, holdfastv1.RenderedCondition)
		g.Expect(rendered.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(rendered.Reason).To(Equal(holdfastv1.SourceNotFoundReason))
	})
	expectNoSecret := func(g Gomega) {
		g.Expect(apiNotFound(targets["cluster-1"].Get(ctx, client.ObjectKey{Namespace: ns, Name: "db"}, &corev1.Secret{}))).To(BeTrue())
	}
	consistently(t, 2*time.Second, expectNoSecret, "a key of another namespace was used")

	t.Log("The Secret in the template's namespace without the file's key: DecryptionFailed, naming the file and the Secret")
	keys := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: templateNamespace, Name: keysName}, Data: map[string][]byte{"age.agekey": strangerFile}}
	NewWithT(t).Expect(hub.Create(ctx, keys)).To(Succeed())
	t.Cleanup(func() { _ = hub.Delete(ctx, keys) })
	eventually(t, func(g Gomega) {
		for _, c := range []metav1.Condition{
			condition(getTemplate(g, name).Status.Conditions, holdfastv1.SourceAvailableCondition),
			condition(statusOf(g, name, "cluster-1").Status.Conditions, holdfastv1.RenderedCondition),
		} {
			g.Expect(c.Reason).To(Equal(holdfastv1.DecryptionFailedReason))
			g.Expect(c.Message).To(And(ContainSubstring(`file "deploy/secret.yaml"`), ContainSubstring("cannot be decrypted with "+secretRef),
				ContainSubstring("encrypted for age recipients "+recipient)))
		}
	})
	consistently(t, 2*time.Second, expectNoSecret)

	t.Log("With the key: the Secret is deployed decrypted")
	eventually(t, func(g Gomega) {
		g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(keys), keys)).To(Succeed())
		keys.Data = map[string][]byte{"age.agekey": ageFile}
		g.Expect(hub.Update(ctx, keys)).To(Succeed())
	})
	expectReady(t, name, "cluster-1")
	c1 := targets["cluster-1"]
	eventually(t, func(g Gomega) {
		sec := &corev1.Secret{}
		g.Expect(c1.Get(ctx, client.ObjectKey{Namespace: ns, Name: "db"}, sec)).To(Succeed())
		g.Expect(string(sec.Data["password"])).To(Equal(plaintext))
		g.Expect(getConfigMap(g, "cluster-1", ns, "app").Data).To(HaveKeyWithValue("revision", "one"))
		g.Expect(condition(getTemplate(g, name).Status.Conditions, holdfastv1.SourceAvailableCondition).Reason).To(Equal(holdfastv1.SourceAvailableReason))
	})

	t.Log("Changed on the cluster: put back, and recorded without its values")
	eventually(t, func(g Gomega) {
		sec := &corev1.Secret{}
		g.Expect(c1.Get(ctx, client.ObjectKey{Namespace: ns, Name: "db"}, sec)).To(Succeed())
		sec.Data["password"] = []byte("typed-by-hand")
		g.Expect(c1.Update(ctx, sec, client.FieldOwner("kubectl-edit"))).To(Succeed())
	})
	eventually(t, func(g Gomega) {
		sec := &corev1.Secret{}
		g.Expect(c1.Get(ctx, client.ObjectKey{Namespace: ns, Name: "db"}, sec)).To(Succeed())
		g.Expect(string(sec.Data["password"])).To(Equal(plaintext))
		g.Expect(statusOf(g, name, "cluster-1").Status.Drifts).To(ContainElement(And(HaveField("Name", "db"),
			HaveField("Fields", ContainElement(HaveField("Path", ".data.password"))), HaveField("CorrectedTime", Not(BeNil())))))
	})

	t.Log("The plaintext is in no hub object, Event or log line")
	needles := []string{plaintext, base64.StdEncoding.EncodeToString([]byte(plaintext))}
	g := NewWithT(t)
	g.Expect(hubObjectsHolding(t, needles...)).To(BeEmpty(), "hub objects holding the plaintext")
	g.Expect(hubObjectsHolding(t, keysName)).To(ContainElement("servicetemplates "+templateNamespace+"/"+name), "the search finds what is there")
	for _, n := range needles {
		g.Expect(logs.String()).NotTo(ContainSubstring(n), "the controller's log holds the plaintext")
	}
	g.Expect(logs.String()).To(ContainSubstring(name), "the controller's log is captured")
}

// hubObjectsHolding lists, as "<resource> <namespace>/<name>", every object on the hub, of
// every resource that can be listed (Holdfast's, Events, Secrets, ConfigMaps, ControllerRevisions
// and all others, namespaced and cluster-scoped), whose JSON holds one of needles.
func hubObjectsHolding(t *testing.T, needles ...string) []string {
	t.Helper()
	dc, err := discovery.NewDiscoveryClientForConfig(fl.Hub.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	lists, err := dc.ServerPreferredResources()
	if err != nil {
		t.Fatalf("discovering the hub's resources: %v", err)
	}
	var found []string
	searched := 0
	for _, l := range lists {
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") || !slices.Contains(r.Verbs, "list") {
				continue
			}
			u := &unstructured.UnstructuredList{}
			u.SetAPIVersion(l.GroupVersion)
			u.SetKind(r.Kind + "List")
			if err := hub.List(context.Background(), u); err != nil {
				t.Fatalf("listing %s %s: %v", l.GroupVersion, r.Name, err)
			}
			for _, o := range u.Items {
				searched++
				raw, err := json.Marshal(o.Object)
				if err != nil {
					t.Fatal(err)
				}
				for _, n := range needles {
					if strings.Contains(string(raw), n) {
						found = append(found, fmt.Sprintf("%s %s/%s", r.Name, o.GetNamespace(), o.GetName()))
					}
				}
			}
		}
	}
	if searched < 50 {
		t.Fatalf("searched only %d hub objects", searched)
	}
	return found
}
