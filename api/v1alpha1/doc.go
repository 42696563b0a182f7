// Package v1alpha1 holds Holdfast's API types for the holdfast.dev group: the objects a platform
// team declares (clusters, service templates, service sets) and the status Holdfast reports on
// them. The package has no logic beyond defaults expressed as markers; controllers live in
// internal/controller.
//
// +kubebuilder:object:generate=true
// +groupName=holdfast.dev
package v1alpha1
