package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version of every type in this package.
	GroupVersion = schema.GroupVersion{Group: "holdfast.dev", Version: "v1alpha1"}

	// SchemeBuilder registers the types of this package with a runtime.Scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds the types of this package to a runtime.Scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

// addKnownTypes registers every kind of this package, and its list, under GroupVersion.
func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(GroupVersion,
		&Cluster{}, &ClusterList{},
		&ServiceTemplate{}, &ServiceTemplateList{},
		&MultiClusterService{}, &MultiClusterServiceList{},
		&ClusterServiceStatus{}, &ClusterServiceStatusList{},
		&ClusterServiceInventory{}, &ClusterServiceInventoryList{},
		&ServiceSet{}, &ServiceSetList{},
		&AlertRule{}, &AlertRuleList{},
	)
	metav1.AddToGroupVersion(scheme, GroupVersion)
	return nil
}
