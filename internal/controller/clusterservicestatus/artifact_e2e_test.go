package clusterservicestatus_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	ggcrregistry "github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/render"
	"holdfast.dev/holdfast/internal/render/chartsource"
)

// tarGz packs files (path -> content) as a tar.gz, as Flux's source-controller and
// `flux push artifact` do.
func tarGz(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for p, content := range files {
		if err := tw.WriteHeader(&tar.Header{Name: p, Mode: 0o644, Size: int64(len(content)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(content)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func sha256Digest(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// artifactServer serves artifacts on loopback as Flux's source-controller does.
type artifactServer struct {
	*httptest.Server
	mu    sync.Mutex
	files map[string][]byte
}

func newArtifactServer(t *testing.T) *artifactServer {
	s := &artifactServer{files: map[string][]byte{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		data, ok := s.files[r.URL.Path]
		s.mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write(data)
	}))
	t.Cleanup(s.Close)
	return s
}

// serve publishes data at p and returns its URL.
func (s *artifactServer) serve(p string, data []byte) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.files[p] = data
	return s.URL + p
}

var fluxCRDOnce sync.Once

// installGitRepositoryCRD installs a minimal GitRepository CRD on the hub (the real one's
// schema is not needed: Holdfast reads status.artifact only). It has no status subresource,
// so a test sets status.artifact with a plain update, as source-controller would publish it.
// Bucket is left uninstalled, as on a hub without Flux.
func installGitRepositoryCRD(t *testing.T) {
	t.Helper()
	fluxCRDOnce.Do(func() {
		crd := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
			"metadata": map[string]any{"name": "gitrepositories.source.toolkit.fluxcd.io"},
			"spec": map[string]any{
				"group": "source.toolkit.fluxcd.io", "scope": "Namespaced",
				"names": map[string]any{"kind": "GitRepository", "listKind": "GitRepositoryList", "plural": "gitrepositories", "singular": "gitrepository"},
				"versions": []any{map[string]any{
					"name": "v1", "served": true, "storage": true,
					"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
				}},
			},
		}}
		if err := hub.Create(context.Background(), crd); client.IgnoreAlreadyExists(err) != nil {
			t.Fatalf("installing the GitRepository CRD: %v", err)
		}
	})
	eventually(t, func(g Gomega) {
		l := &unstructured.UnstructuredList{}
		l.SetAPIVersion("source.toolkit.fluxcd.io/v1")
		l.SetKind("GitRepositoryList")
		g.Expect(hub.List(context.Background(), l, client.InNamespace(templateNamespace))).To(Succeed())
	}, "the GitRepository CRD is not served")
}

// setGitArtifact creates or updates the GitRepository name with status.artifact.
func setGitArtifact(t *testing.T, repoName, url, revision, digest string) {
	t.Helper()
	eventually(t, func(g Gomega) {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("source.toolkit.fluxcd.io/v1")
		u.SetKind("GitRepository")
		err := hub.Get(context.Background(), client.ObjectKey{Namespace: templateNamespace, Name: repoName}, u)
		artifact := map[string]any{"url": url, "revision": revision, "digest": digest, "path": "gitrepository/x.tar.gz"}
		if apiNotFound(err) {
			u.SetNamespace(templateNamespace)
			u.SetName(repoName)
			u.Object["spec"] = map[string]any{"url": "https://git.example/app", "interval": "1m"}
			u.Object["status"] = map[string]any{"artifact": artifact}
			g.Expect(hub.Create(context.Background(), u)).To(Succeed())
			return
		}
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(unstructured.SetNestedMap(u.Object, artifact, "status", "artifact")).To(Succeed())
		g.Expect(hub.Update(context.Background(), u)).To(Succeed())
	})
}

func artifactConfigMap(namespace, rev string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n  namespace: %s\ndata:\n  revision: %q\n", namespace, rev)
}

func getTemplate(g Gomega, name string) *holdfastv1.ServiceTemplate {
	tpl := &holdfastv1.ServiceTemplate{}
	g.Expect(hub.Get(context.Background(), client.ObjectKey{Namespace: templateNamespace, Name: name}, tpl)).To(Succeed())
	return tpl
}

// TestArtifactFromGitRepository: a template reading a Flux GitRepository's artifact (a tar.gz
// served from loopback) pins its url, revision and digest and deploys the manifests under its
// path; a new revision is pinned and rolled out; an artifact whose download does not match
// its digest is refused on the template and on the cluster with ArtifactDigestMismatch, naming
// both digests, and the cluster keeps what it had.
func TestArtifactFromGitRepository(t *testing.T) {
	installGitRepositoryCRD(t)
	name, ns := objName(t, ""), objName(t, "ns")
	srv := newArtifactServer(t)
	rev1 := tarGz(t, map[string]string{"README.md": "not a manifest", "deploy/app.yaml": artifactConfigMap(ns, "one"),
		"other/ignored.yaml": "not: [a manifest"})
	setGitArtifact(t, name, srv.serve("/"+name+"/rev1.tar.gz", rev1), "main@sha1:1111", sha256Digest(rev1))
	deleteGitRepositoryAtCleanup(t, name)
	createTemplate(t, name, holdfastv1.ServiceTemplateSpec{Artifact: &holdfastv1.ArtifactSource{
		SourceRef: &holdfastv1.FluxSourceReference{Kind: "GitRepository", Name: name},
		Path:      "deploy", Interval: &metav1.Duration{Duration: time.Second},
	}})
	createServiceSet(t, name, holdfastv1.MultiClusterServiceSpec{
		ClusterSelector: selectEnv("dev"), SyncMode: holdfastv1.SyncModeContinuous,
		Services: []holdfastv1.Service{service("web", name, ns)},
	})
	expectReady(t, name, "cluster-1")
	eventually(t, func(g Gomega) {
		g.Expect(getConfigMap(g, "cluster-1", ns, "app").Data).To(HaveKeyWithValue("revision", "one"))
		tpl := getTemplate(g, name)
		g.Expect(tpl.Status.Artifact).NotTo(BeNil())
		g.Expect(tpl.Status.Artifact.Digest).To(Equal(sha256Digest(rev1)))
		g.Expect(tpl.Status.Artifact.Revision).To(Equal("main@sha1:1111"))
		g.Expect(condition(tpl.Status.Conditions, holdfastv1.SourceAvailableCondition).Reason).To(Equal(holdfastv1.SourceAvailableReason))
	})

	// A new revision is pinned and rolled out.
	rev2 := tarGz(t, map[string]string{"deploy/app.yaml": artifactConfigMap(ns, "two")})
	setGitArtifact(t, name, srv.serve("/"+name+"/rev2.tar.gz", rev2), "main@sha1:2222", sha256Digest(rev2))
	eventually(t, func(g Gomega) {
		g.Expect(getConfigMap(g, "cluster-1", ns, "app").Data).To(HaveKeyWithValue("revision", "two"))
		g.Expect(getTemplate(g, name).Status.Artifact.Revision).To(Equal("main@sha1:2222"))
	})
	expectReady(t, name, "cluster-1")

	// A download that does not match the digest the source published is refused.
	rev3 := tarGz(t, map[string]string{"deploy/app.yaml": artifactConfigMap(ns, "three")})
	published := sha256Digest([]byte("what the source published"))
	setGitArtifact(t, name, srv.serve("/"+name+"/rev3.tar.gz", rev3), "main@sha1:3333", published)
	want := fmt.Sprintf("expected %s, got %s", published, sha256Digest(rev3))
	eventually(t, func(g Gomega) {
		src := condition(getTemplate(g, name).Status.Conditions, holdfastv1.SourceAvailableCondition)
		g.Expect(src.Reason).To(Equal(render.ReasonArtifactDigestMismatch))
		g.Expect(src.Message).To(ContainSubstring(want))
		css := statusOf(g, name, "cluster-1")
		rendered := condition(css.Status.Conditions, holdfastv1.RenderedCondition)
		g.Expect(rendered.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(rendered.Reason).To(Equal(render.ReasonArtifactDigestMismatch))
		g.Expect(rendered.Message).To(ContainSubstring(want))
		g.Expect(condition(css.Status.Conditions, holdfastv1.ReadyCondition).Reason).To(Equal(render.ReasonArtifactDigestMismatch))
	})
	consistently(t, 2*time.Second, func(g Gomega) {
		g.Expect(getConfigMap(g, "cluster-1", ns, "app").Data).To(HaveKeyWithValue("revision", "two"))
	}, "the cluster keeps the last revision that could be verified")
}

// TestArtifactSourceNotInstalled: a template naming a Flux kind the hub does not serve says so,
// and the controller goes on working.
func TestArtifactSourceNotInstalled(t *testing.T) {
	name := objName(t, "")
	createTemplate(t, name, holdfastv1.ServiceTemplateSpec{Artifact: &holdfastv1.ArtifactSource{
		SourceRef: &holdfastv1.FluxSourceReference{Kind: "Bucket", Name: "manifests"},
	}})
	eventually(t, func(g Gomega) {
		tpl := getTemplate(g, name)
		src := condition(tpl.Status.Conditions, holdfastv1.SourceAvailableCondition)
		g.Expect(src.Reason).To(Equal(holdfastv1.ArtifactSourceNotFoundReason))
		g.Expect(src.Message).To(ContainSubstring("install Flux's source-controller"))
		g.Expect(tpl.Status.Artifact).To(BeNil())
	})
}

// pushArtifact pushes files as `flux push artifact` does (one layer of Flux's media type) and
// returns the manifest digest.
func pushArtifact(t *testing.T, ref string, files map[string]string) string {
	t.Helper()
	layer := static.NewLayer(tarGz(t, files), chartsource.FluxContentMediaType)
	img, err := mutate.Append(empty.Image, mutate.Addendum{Layer: layer})
	if err != nil {
		t.Fatal(err)
	}
	img = mutate.MediaType(img, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, "application/vnd.cncf.flux.config.v1+json")
	r, err := name.ParseReference(ref, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(r, img); err != nil {
		t.Fatalf("pushing %s: %v", ref, err)
	}
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d.String()
}

// TestArtifactFromOCI: an OCI artifact in a registry on loopback deploys; pushing a new
// artifact to the same tag is resolved to its digest and rolled out.
func TestArtifactFromOCI(t *testing.T) {
	name, ns := objName(t, ""), objName(t, "ns")
	reg := httptest.NewServer(ggcrregistry.New(ggcrregistry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(reg.Close)
	host := strings.TrimPrefix(reg.URL, "http://")
	ref := host + "/manifests/" + name + ":v1"
	d1 := pushArtifact(t, ref, map[string]string{"app.yaml": artifactConfigMap(ns, "one")})
	createTemplate(t, name, holdfastv1.ServiceTemplateSpec{Artifact: &holdfastv1.ArtifactSource{
		URL: "oci://" + ref, PlainHTTP: true, Interval: &metav1.Duration{Duration: time.Second},
	}})
	createServiceSet(t, name, holdfastv1.MultiClusterServiceSpec{
		ClusterSelector: selectEnv("dev"), SyncMode: holdfastv1.SyncModeContinuous,
		Services: []holdfastv1.Service{service("web", name, ns)},
	})
	expectReady(t, name, "cluster-1")
	eventually(t, func(g Gomega) {
		g.Expect(getConfigMap(g, "cluster-1", ns, "app").Data).To(HaveKeyWithValue("revision", "one"))
		g.Expect(getTemplate(g, name).Status.Artifact).To(HaveValue(And(
			HaveField("Digest", d1), HaveField("Revision", "v1@"+d1))))
	})

	d2 := pushArtifact(t, ref, map[string]string{"app.yaml": artifactConfigMap(ns, "two")})
	eventually(t, func(g Gomega) {
		g.Expect(getConfigMap(g, "cluster-1", ns, "app").Data).To(HaveKeyWithValue("revision", "two"))
		g.Expect(getTemplate(g, name).Status.Artifact.Digest).To(Equal(d2))
	})
}
