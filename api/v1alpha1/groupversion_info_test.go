package v1alpha1_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

func TestAddToSchemeRegistersEveryKind(t *testing.T) {
	s := runtime.NewScheme()
	if err := holdfastv1.AddToScheme(s); err != nil {
		t.Fatalf("AddToScheme: %v", err)
	}
	for _, tt := range []struct {
		obj  runtime.Object
		kind string
	}{
		{&holdfastv1.Cluster{}, "Cluster"},
		{&holdfastv1.ClusterList{}, "ClusterList"},
		{&holdfastv1.ServiceTemplate{}, "ServiceTemplate"},
		{&holdfastv1.ServiceTemplateList{}, "ServiceTemplateList"},
		{&holdfastv1.MultiClusterService{}, "MultiClusterService"},
		{&holdfastv1.MultiClusterServiceList{}, "MultiClusterServiceList"},
		{&holdfastv1.ClusterServiceStatus{}, "ClusterServiceStatus"},
		{&holdfastv1.ClusterServiceStatusList{}, "ClusterServiceStatusList"},
		{&holdfastv1.ServiceSet{}, "ServiceSet"},
		{&holdfastv1.ServiceSetList{}, "ServiceSetList"},
	} {
		gvks, _, err := s.ObjectKinds(tt.obj)
		if err != nil {
			t.Errorf("%s is not registered: %v", tt.kind, err)
			continue
		}
		if len(gvks) != 1 || gvks[0] != holdfastv1.GroupVersion.WithKind(tt.kind) {
			t.Errorf("%T is registered as %v, want %v", tt.obj, gvks, holdfastv1.GroupVersion.WithKind(tt.kind))
		}
	}
	// metav1's options types are registered in the group version too, as every API group has them.
	if !s.Recognizes(holdfastv1.GroupVersion.WithKind("ListOptions")) {
		t.Errorf("ListOptions is not registered in %s", holdfastv1.GroupVersion)
	}
}
