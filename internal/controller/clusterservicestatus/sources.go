package clusterservicestatus

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/render"
	"holdfast.dev/holdfast/internal/templatesource"
)

// sourceError is a service that cannot be rendered because of the hub's objects: a missing
// template or a missing ConfigMap or Secret. Reason is a condition reason; the message names
// the service, the object and what to fix.
type sourceError struct {
	reason    string
	message   string
	transient bool
}

func (e *sourceError) Error() string { return e.message }

// renderRequest builds the render request for one service of the scope's service set on its
// cluster, reading the template (or the revision's copy, see loadRevision) and what it
// references from the hub, if the tenancy policy lets the set use it. Secrets and ConfigMaps are
// read from the API server (ConfigMaps once per version, see templatesource.RecentConfigMaps),
// never cached.
func (r *Reconciler) renderRequest(ctx context.Context, s *scope, svc holdfastv1.Service) (render.Request, error) {
	mcs, cluster := s.mcs, s.cluster
	req := render.Request{
		Service: svc.Name,
		Cluster: render.Cluster{
			Name: cluster.Name, Namespace: cluster.Namespace,
			Labels: cluster.Labels, Annotations: cluster.Annotations,
		},
		TargetNamespace: svc.Namespace,
		KubeVersion:     cluster.Status.Version,
		ServiceValues:   svc.Values,
	}
	overrides, err := overridesFor(svc, cluster)
	if err != nil {
		return req, err
	}
	req.Overrides = overrides
	if err := r.Tenancy.Template(mcs, svc.Name, svc.Template.Namespace); err != nil {
		return req, &sourceError{reason: holdfastv1.CrossNamespaceReferenceReason, message: err.Error()}
	}
	tkey := types.NamespacedName{Namespace: svc.Template.Namespace, Name: svc.Template.Name}
	tpl, err := r.template(ctx, s, tkey)
	if err != nil {
		if apierrors.IsNotFound(err) {
			return req, &sourceError{reason: holdfastv1.TemplateNotFoundReason, message: fmt.Sprintf(
				"service %q: ServiceTemplate %s not found: create it or fix spec.services[%s].template", svc.Name, tkey, svc.Name)}
		}
		return req, &sourceError{reason: holdfastv1.SourceUnavailableReason, transient: true,
			message: fmt.Sprintf("service %q: reading ServiceTemplate %s: %v", svc.Name, tkey, err)}
	}
	req.TemplateValues = tpl.Spec.Values
	src, err := templatesource.Reader{Client: r.Client, APIReader: r.APIReader, ConfigMaps: r.configMaps, Artifacts: r.Artifacts}.Source(ctx, tpl)
	if err != nil {
		return req, unreadable(svc.Name, tpl, err)
	}
	req.Source = src
	return req, nil
}

// unreadable words a template's source that could not be read for the service's conditions.
func unreadable(service string, tpl *holdfastv1.ServiceTemplate, err error) error {
	var re *templatesource.ReadError
	switch {
	case !errors.As(err, &re):
		return fmt.Errorf("service %q: reading the source of ServiceTemplate %s/%s: %w", service, tpl.Namespace, tpl.Name, err)
	case re.Err == nil:
		return &sourceError{reason: holdfastv1.SourceNotFoundReason, message: fmt.Sprintf(
			"service %q: %s %s/%s has no key %q (ServiceTemplate %s/%s %s): add the key or fix the reference",
			service, re.Kind, re.Namespace, re.Name, re.Key, tpl.Namespace, tpl.Name, re.Field)}
	case re.NotFound():
		return &sourceError{reason: holdfastv1.SourceNotFoundReason, message: fmt.Sprintf(
			"service %q: %s %s/%s not found (ServiceTemplate %s/%s %s): create it or fix the reference",
			service, re.Kind, re.Namespace, re.Name, tpl.Namespace, tpl.Name, re.Field)}
	default:
		return &sourceError{reason: holdfastv1.SourceUnavailableReason, transient: true, message: fmt.Sprintf(
			"service %q: reading %s %s/%s: %v", service, re.Kind, re.Namespace, re.Name, re.Err)}
	}
}

// overridesFor returns the overrides of svc whose cluster selector matches cluster, in order.
func overridesFor(svc holdfastv1.Service, cluster *holdfastv1.Cluster) ([]render.Override, error) {
	var out []render.Override
	for _, o := range svc.Overrides {
		sel, err := metav1.LabelSelectorAsSelector(&o.ClusterSelector)
		if err != nil {
			return nil, &sourceError{reason: render.ReasonOverrideFailed, message: fmt.Sprintf(
				"service %q: override %q: clusterSelector: %v", svc.Name, o.Name, err)}
		}
		if !sel.Matches(labels.Set(cluster.Labels)) {
			continue
		}
		ro := render.Override{Name: o.Name, Values: o.Values}
		for _, p := range o.Patches {
			rp := render.Patch{Patch: p.Patch}
			if t := p.Target; t != nil {
				rp.Target = &render.PatchTarget{Group: t.Group, Version: t.Version, Kind: t.Kind, Name: t.Name, Namespace: t.Namespace,
					LabelSelector: t.LabelSelector, AnnotationSelector: t.AnnotationSelector}
			}
			ro.Patches = append(ro.Patches, rp)
		}
		out = append(out, ro)
	}
	return out, nil
}
