package servicetemplate

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/conditions"
	"holdfast.dev/holdfast/internal/render"
	"holdfast.dev/holdfast/internal/templatesource"
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
	// Artifacts resolves and downloads spec.artifact sources.
	Artifacts templatesource.Artifacts
	// Now is the clock of status.artifact.fetchedTime (default time.Now).
	Now func() time.Time
}

// +kubebuilder:rbac:groups=holdfast.dev,resources=servicetemplates,verbs=get;list;watch
// +kubebuilder:rbac:groups=holdfast.dev,resources=servicetemplates/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=source.toolkit.fluxcd.io,resources=gitrepositories;ocirepositories;buckets,verbs=get

var readySummary = conditions.Summary{Positive: []string{holdfastv1.SourceAvailableCondition}}

// Reconcile checks the source and patches the status once.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (_ ctrl.Result, retErr error) {
	t := &holdfastv1.ServiceTemplate{}
	if err := r.Client.Get(ctx, req.NamespacedName, t); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	before := t.DeepCopy()
	reason, msg, requeue := r.check(ctx, t)
	setStatus(t, reason, msg)
	if !equality.Semantic.DeepEqual(before.Status, t.Status) {
		if err := r.Client.Status().Patch(ctx, t, client.MergeFrom(before)); client.IgnoreNotFound(err) != nil {
			retErr = kerrors.NewAggregate([]error{retErr, fmt.Errorf("patching the status of ServiceTemplate %s: %w", req.NamespacedName, err)})
		}
	}
	return ctrl.Result{RequeueAfter: requeue}, retErr
}

// setStatus records the SourceAvailable condition, True only for SourceAvailableReason, Ready
// summarised from it, and the generation they describe.
func setStatus(t *holdfastv1.ServiceTemplate, reason, msg string) {
	status := metav1.ConditionTrue
	if reason != holdfastv1.SourceAvailableReason {
		status = metav1.ConditionFalse
	}
	conditions.Set(t, metav1.Condition{Type: holdfastv1.SourceAvailableCondition, Status: status, Reason: reason, Message: msg})
	conditions.SetReady(t, readySummary)
	t.Status.ObservedGeneration = t.Generation
}

// check returns the SourceAvailable reason and message, and when to look again.
func (r *Reconciler) check(ctx context.Context, t *holdfastv1.ServiceTemplate) (string, string, time.Duration) {
	sources := templatesource.Reader{Client: r.Client, APIReader: r.APIReader, Artifacts: r.Artifacts}
	spec := t.Spec
	switch {
	case spec.Artifact != nil:
		return r.checkArtifact(ctx, sources, t)
	case spec.Helm != nil:
		h, err := sources.Helm(ctx, t)
		if err != nil {
			return missing(err)
		}
		if _, err := r.Charts.Load(ctx, *h); err != nil {
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
			if err := sources.Exists(ctx, t, holdfastv1.ManifestSourceConfigMap, f.ConfigMap, templatesource.FieldKustomizeFiles); err != nil {
				return missing(err)
			}
		}
	case len(spec.Resources) > 0:
		// Only that the objects exist: the keys are read when the template is rendered.
		for _, ref := range spec.Resources {
			if err := sources.Exists(ctx, t, ref.Kind, ref.Name, templatesource.FieldResources); err != nil {
				return missing(err)
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

// missing returns the SourceAvailable reason and message for a referenced object that could not
// be read, and when to look again: at once when it appears (a watch brings the template back),
// in a minute when reading it failed.
func missing(err error) (string, string, time.Duration) {
	var re *templatesource.ReadError
	if !errors.As(err, &re) {
		return holdfastv1.SourceUnavailableReason, err.Error(), time.Minute
	}
	if re.NotFound() {
		return holdfastv1.SourceNotFoundReason, fmt.Sprintf("%s %s/%s (%s) not found: create it or fix the reference", re.Kind, re.Namespace, re.Name, re.Field), 0
	}
	return holdfastv1.SourceUnavailableReason, fmt.Sprintf("reading %s %s/%s: %v", re.Kind, re.Namespace, re.Name, re.Err), time.Minute
}

func versionOrLatest(v string) string {
	if v == "" {
		return "(latest)"
	}
	return v
}
