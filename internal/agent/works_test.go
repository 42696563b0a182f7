package agent

import (
	"context"
	"errors"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/controller/clusterservicestatus"
	"holdfast.dev/holdfast/internal/render"
	"holdfast.dev/holdfast/internal/work"
)

// TestWorksRefusesAnotherServiceSetsWork: a status object names its work by digest; a work found
// under that digest but encoded for another service set (a status object's annotation pointed at
// another's work) is refused, not applied; the status object's own work is read and kept.
func TestWorksRefusesAnotherServiceSetsWork(t *testing.T) {
	hub := keptTestStore(t)
	publish := func(status types.NamespacedName, serviceSet string) string {
		t.Helper()
		cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": serviceSet, "namespace": "apps"}}}
		objs := []*unstructured.Unstructured{cm}
		objsDigest, err := render.Digest(objs)
		if err != nil {
			t.Fatal(err)
		}
		data, digest, err := work.Encode(work.Work{ServiceSet: serviceSet, Services: []work.Service{{Name: "web", Digest: objsDigest, Objects: objs}}})
		if err != nil {
			t.Fatal(err)
		}
		for _, part := range work.Parts(status, data, digest, 0) {
			if err := hub.Create(t.Context(), part); err != nil {
				t.Fatal(err)
			}
		}
		return digest
	}
	shop := types.NamespacedName{Namespace: hubNS, Name: "shop.edge"}
	bank := types.NamespacedName{Namespace: hubNS, Name: "bank.edge"}
	shopDigest := publish(shop, "shop")
	statusOf := func(key types.NamespacedName, serviceSet, digest string) *holdfastv1.ClusterServiceStatus {
		css := &holdfastv1.ClusterServiceStatus{}
		css.Namespace, css.Name, css.Spec.MultiClusterService, css.Spec.Cluster = key.Namespace, key.Name, serviceSet, "edge"
		css.Annotations = map[string]string{clusterservicestatus.WorkAnnotation: digest}
		return css
	}
	w := &Works{Hub: hub, Key: types.NamespacedName{Namespace: hubNS, Name: "edge"}}

	got, err := w.Work(t.Context(), statusOf(shop, "shop", shopDigest))
	if err != nil || got.ServiceSet != "shop" || len(got.Services) != 1 {
		t.Fatalf("shop's own work: %+v, %v", got, err)
	}
	// bank's status object names shop's work, published under bank's label.
	stray := publish(bank, "shop")
	if _, err := w.Work(t.Context(), statusOf(bank, "bank", stray)); err == nil {
		t.Fatal("bank's status object was given a work of service set shop")
	}
	if _, err := w.Work(t.Context(), statusOf(bank, "bank", "")); !errors.Is(err, clusterservicestatus.ErrNoWork) {
		t.Errorf("a status object naming no work: %v, want ErrNoWork", err)
	}
	if _, err := w.Work(t.Context(), statusOf(bank, "bank", "sha256:0000")); !errors.Is(err, clusterservicestatus.ErrNoWork) {
		t.Errorf("a status object naming a work not published: %v, want ErrNoWork", err)
	}
}

// noList is a hub reader that refuses lists: what reads a work by name must not need one.
type noList struct{ client.Reader }

func (noList) List(context.Context, client.ObjectList, ...client.ListOption) error {
	return errors.New("listed")
}

// TestWorksReadsPartsByName: a status object saying how many parts its work is in has them read
// by name, with no list of the namespace's Secrets; one naming a wrong count finds no work; one
// saying nothing (a hub older than the annotation) has them listed.
func TestWorksReadsPartsByName(t *testing.T) {
	hub := keptTestStore(t)
	status := types.NamespacedName{Namespace: hubNS, Name: "shop.edge"}
	cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "settings", "namespace": "apps"}, "data": map[string]any{"mode": strings.Repeat("fast ", 400)}}}
	objs := []*unstructured.Unstructured{cm}
	objsDigest, err := render.Digest(objs)
	if err != nil {
		t.Fatal(err)
	}
	data, digest, err := work.Encode(work.Work{ServiceSet: "shop", Services: []work.Service{{Name: "web", Digest: objsDigest, Objects: objs}}})
	if err != nil {
		t.Fatal(err)
	}
	parts := work.Parts(status, data, digest, len(data)/3+1)
	if len(parts) != 3 {
		t.Fatalf("the work is in %d parts, want 3", len(parts))
	}
	for _, part := range parts {
		if err := hub.Create(t.Context(), part); err != nil {
			t.Fatal(err)
		}
	}
	statusSaying := func(parts string) *holdfastv1.ClusterServiceStatus {
		css := &holdfastv1.ClusterServiceStatus{}
		css.Namespace, css.Name, css.Spec.MultiClusterService, css.Spec.Cluster = status.Namespace, status.Name, "shop", "edge"
		css.Annotations = map[string]string{clusterservicestatus.WorkAnnotation: digest}
		if parts != "" {
			css.Annotations[clusterservicestatus.WorkPartsAnnotation] = parts
		}
		return css
	}
	cluster := types.NamespacedName{Namespace: hubNS, Name: "edge"}

	byName := &Works{Hub: noList{hub}, Key: cluster}
	got, err := byName.Work(t.Context(), statusSaying("3"))
	if err != nil || got.ServiceSet != "shop" || len(got.Services) != 1 || got.Services[0].Objects[0].GetName() != "settings" {
		t.Fatalf("the work read by name: %+v, %v", got, err)
	}
	if _, err := (&Works{Hub: noList{hub}, Key: cluster}).Work(t.Context(), statusSaying("2")); !errors.Is(err, clusterservicestatus.ErrNoWork) {
		t.Errorf("a status object naming the wrong number of parts: %v, want ErrNoWork", err)
	}
	if _, err := (&Works{Hub: noList{hub}, Key: cluster}).Work(t.Context(), statusSaying("")); err == nil || !strings.Contains(err.Error(), "listed") {
		t.Errorf("a status object saying nothing of its parts was not listed: %v", err)
	}
	if got, err := (&Works{Hub: hub, Key: cluster}).Work(t.Context(), statusSaying("")); err != nil || got.ServiceSet != "shop" {
		t.Errorf("the work read by a list: %+v, %v", got, err)
	}
}
