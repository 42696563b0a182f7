package servicetemplate

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/conditions"
	"holdfast.dev/holdfast/internal/render"
)

// chartRecheck is how often a template whose chart is fine or unreachable is checked again:
// charts change in their repository without any event on the hub.
const chartRecheck = 10 * time.Minute

// Reconciler reports whether a ServiceTemplate's source is usable.
type Reconciler struct {
	Client client.Client
	// APIReader reads Secrets from the API server, never the cache.
	APIReader client.Reader
	Charts    render.ChartSource
}

// +kubebuilder:rbac:groups=holdfast.dev,resources=servicetemplates,verbs=get;list;watch
// +kubebuilder:rbac:groups=holdfast.dev,resources=servicetemplates/status,verbs=get;update;patch

var readySummary = conditions.Summary{Positive: []string{holdfastv1.SourceAvailableCondition}}

// Reconcile checks the source and patches the status once.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (_ ctrl.Result, retErr error) {
	t := &holdfastv1.ServiceTemplate{}
	if err := r.Client.Get(ctx, req.NamespacedName, t); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	before := t.DeepCopy()
	reason, msg, requeue := r.check(ctx, t)
	status := metav1.ConditionTrue
	if reason != holdfastv1.SourceAvailableReason {
		status = metav1.ConditionFalse
	}
	conditions.Set(t, metav1.Condition{Type: holdfastv1.SourceAvailableCondition, Status: status, Reason: reason, Message: msg})
	conditions.SetReady(t, readySummary)
	t.Status.ObservedGeneration = t.Generation
	if !equality.Semantic.DeepEqual(before.Status, t.Status) {
		if err := r.Client.Status().Patch(ctx, t, client.MergeFrom(before)); client.IgnoreNotFound(err) != nil {
			retErr = kerrors.NewAggregate([]error{retErr, fmt.Errorf("patching the status of ServiceTemplate %s: %w", req.NamespacedName, err)})
		}
	}
	return ctrl.Result{RequeueAfter: requeue}, retErr
}

// check returns the SourceAvailable reason and message, and when to look again.
func (r *Reconciler) check(ctx context.Context, t *holdfastv1.ServiceTemplate) (string, string, time.Duration) {
	spec := t.Spec
	switch {
	case spec.Helm != nil:
		h := render.Helm{Chart: spec.Helm.Chart, Version: spec.Helm.Version, RepoURL: spec.Helm.RepoURL,
			PlainHTTP: spec.Helm.PlainHTTP, InsecureSkipTLSVerify: spec.Helm.InsecureSkipTLSVerify}
		if ref := spec.Helm.CredentialsSecretRef; ref != nil {
			s := &corev1.Secret{}
			if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: t.Namespace, Name: ref.Name}, s); err != nil {
				return missing("Secret", t, ref.Name, "spec.helm.credentialsSecretRef", err)
			}
			h.Username, h.Password = string(s.Data["username"]), string(s.Data["password"])
		}
		if _, err := r.Charts.Load(ctx, h); err != nil {
			if render.Transient(err) {
				return holdfastv1.SourceUnavailableReason, err.Error(), time.Minute
			}
			reason := render.ReasonOf(err)
			if reason == "" {
				reason = holdfastv1.SourceNotFoundReason
			}
			return reason, err.Error(), chartRecheck
		}
		return holdfastv1.SourceAvailableReason, fmt.Sprintf("chart %s %s is available from %s", spec.Helm.Chart, versionOrLatest(spec.Helm.Version), spec.Helm.RepoURL), chartRecheck
	case spec.Kustomize != nil:
		for _, f := range spec.Kustomize.Files {
			if err := r.Client.Get(ctx, client.ObjectKey{Namespace: t.Namespace, Name: f.ConfigMap}, &corev1.ConfigMap{}); err != nil {
				return missing("ConfigMap", t, f.ConfigMap, "spec.kustomize.files", err)
			}
		}
	case len(spec.Resources) > 0:
		for _, ref := range spec.Resources {
			var err error
			if ref.Kind == holdfastv1.ManifestSourceSecret {
				err = r.APIReader.Get(ctx, client.ObjectKey{Namespace: t.Namespace, Name: ref.Name}, &corev1.Secret{})
			} else {
				err = r.Client.Get(ctx, client.ObjectKey{Namespace: t.Namespace, Name: ref.Name}, &corev1.ConfigMap{})
			}
			if err != nil {
				return missing(string(ref.Kind), t, ref.Name, "spec.resources", err)
			}
		}
	case spec.Templating != holdfastv1.TemplatingGoTemplate:
		// Plain inline manifests do not depend on the cluster: parse them once here.
		if _, err := render.Render(ctx, render.Request{Service: t.Name, Source: render.Source{Inline: spec.Inline}}, nil); err != nil {
			var re *render.Error
			if errors.As(err, &re) {
				return re.Reason, err.Error(), 0
			}
			return holdfastv1.RenderFailedReason, err.Error(), 0
		}
	}
	return holdfastv1.SourceAvailableReason, "every source the template reads is available", 0
}

func missing(kind string, t *holdfastv1.ServiceTemplate, name, field string, err error) (string, string, time.Duration) {
	if apierrors.IsNotFound(err) {
		return holdfastv1.SourceNotFoundReason, fmt.Sprintf("%s %s/%s (%s) not found: create it or fix the reference", kind, t.Namespace, name, field), 0
	}
	return holdfastv1.SourceUnavailableReason, fmt.Sprintf("reading %s %s/%s: %v", kind, t.Namespace, name, err), time.Minute
}

func versionOrLatest(v string) string {
	if v == "" {
		return "(latest)"
	}
	return v
}
