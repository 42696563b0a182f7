package servicetemplate

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	chart "helm.sh/helm/v4/pkg/chart/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/conditions"
	"holdfast.dev/holdfast/internal/render"
)

func TestSetStatus(t *testing.T) {
	for _, tt := range []struct {
		name, reason, message string
		// source and ready are the SourceAvailable and Ready conditions' status; Ready's reason
		// and message are SourceAvailable's when it is False, Ready's own when it is True.
		source, ready             metav1.ConditionStatus
		readyReason, readyMessage string
	}{
		{name: "available", reason: holdfastv1.SourceAvailableReason, message: "every source the template reads is available",
			source: metav1.ConditionTrue, ready: metav1.ConditionTrue, readyReason: holdfastv1.ReadyReason},
		{name: "a missing ConfigMap", reason: holdfastv1.SourceNotFoundReason, message: "ConfigMap templates/x (spec.resources) not found",
			source: metav1.ConditionFalse, ready: metav1.ConditionFalse,
			readyReason: holdfastv1.SourceNotFoundReason, readyMessage: "ConfigMap templates/x (spec.resources) not found"},
		{name: "an unreachable repository", reason: holdfastv1.SourceUnavailableReason, message: "chart hello 1.0.0: timeout",
			source: metav1.ConditionFalse, ready: metav1.ConditionFalse,
			readyReason: holdfastv1.SourceUnavailableReason, readyMessage: "chart hello 1.0.0: timeout"},
		{name: "manifests that do not parse", reason: render.ReasonInvalidYAML, message: "document 1: not YAML",
			source: metav1.ConditionFalse, ready: metav1.ConditionFalse,
			readyReason: render.ReasonInvalidYAML, readyMessage: "document 1: not YAML"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tpl := &holdfastv1.ServiceTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: "templates", Name: "web", Generation: 4}}
			setStatus(tpl, tt.reason, tt.message)

			src := conditions.Get(tpl, holdfastv1.SourceAvailableCondition)
			if src == nil || src.Status != tt.source || src.Reason != tt.reason || src.Message != tt.message || src.ObservedGeneration != 4 {
				t.Errorf("SourceAvailable = %+v, want %s %s %q at generation 4", src, tt.source, tt.reason, tt.message)
			}
			ready := conditions.Get(tpl, holdfastv1.ReadyCondition)
			if ready == nil || ready.Status != tt.ready || ready.Reason != tt.readyReason || ready.Message != tt.readyMessage || ready.ObservedGeneration != 4 {
				t.Errorf("Ready = %+v, want %s %s %q at generation 4", ready, tt.ready, tt.readyReason, tt.readyMessage)
			}
			if len(tpl.Status.Conditions) != 4 || conditions.Get(tpl, holdfastv1.StalledCondition) == nil {
				t.Errorf("conditions = %v, want SourceAvailable, Ready, Stalled and Reconciling", tpl.Status.Conditions)
			}
			if tpl.Status.ObservedGeneration != 4 {
				t.Errorf("observedGeneration = %d, want 4", tpl.Status.ObservedGeneration)
			}
		})
	}
}

// charts is a render.ChartSource that records what it was asked for and answers err.
type charts struct {
	err   error
	asked []render.Helm
}

func (c *charts) Load(_ context.Context, h render.Helm) (*chart.Chart, error) {
	c.asked = append(c.asked, h)
	if c.err != nil {
		return nil, c.err
	}
	return &chart.Chart{Metadata: &chart.Metadata{Name: h.Chart, Version: h.Version}}, nil
}

func TestCheck(t *testing.T) {
	const ns = "templates"
	boom := errors.New("connection refused")
	cache := fake.NewClientBuilder().WithObjects(
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "manifests"}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "base"}},
	).Build()
	api := fake.NewClientBuilder().WithObjects(
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "login"},
			Data: map[string][]byte{"username": []byte("robot"), "password": []byte("s3cret")}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tls"}},
	).Build()
	failing := fake.NewClientBuilder().WithInterceptorFuncs(interceptor.Funcs{
		Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
			return boom
		},
	}).Build()
	hello := func(version string, login string) *holdfastv1.HelmSource {
		h := &holdfastv1.HelmSource{RepoURL: "https://charts.example", Chart: "hello", Version: version, ReleaseName: "hi"}
		if login != "" {
			h.CredentialsSecretRef = &holdfastv1.LocalObjectReference{Name: login}
		}
		return h
	}
	resources := func(refs ...holdfastv1.ManifestReference) holdfastv1.ServiceTemplateSpec {
		return holdfastv1.ServiceTemplateSpec{Resources: refs}
	}
	configMapRef := func(name string) holdfastv1.ManifestReference {
		return holdfastv1.ManifestReference{Kind: holdfastv1.ManifestSourceConfigMap, Name: name}
	}
	secretRef := func(name string) holdfastv1.ManifestReference {
		return holdfastv1.ManifestReference{Kind: holdfastv1.ManifestSourceSecret, Name: name, Key: "not-checked.yaml"}
	}

	for _, tt := range []struct {
		name      string
		spec      holdfastv1.ServiceTemplateSpec
		apiReader client.Reader // default api
		chartErr  error
		reason    string
		message   string // exact, or the prefix when it ends in "..."
		requeue   time.Duration
		// asked is the chart reference the chart source must have been asked for; nil: none.
		asked *render.Helm
	}{
		{name: "inline manifests that parse", spec: holdfastv1.ServiceTemplateSpec{Inline: "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: web\n"},
			reason: holdfastv1.SourceAvailableReason, message: "every source the template reads is available"},
		{name: "inline manifests without a kind", spec: holdfastv1.ServiceTemplateSpec{Inline: "apiVersion: v1\nmetadata:\n  name: web\n"},
			reason: render.ReasonMissingKindOrName, message: `service "web": ...`},
		{name: "inline Go templates wait for a cluster",
			spec:   holdfastv1.ServiceTemplateSpec{Inline: "kind: {{ .Cluster.Name", Templating: holdfastv1.TemplatingGoTemplate},
			reason: holdfastv1.SourceAvailableReason, message: "every source the template reads is available"},
		{name: "a chart that can be fetched", spec: holdfastv1.ServiceTemplateSpec{Helm: hello("1.0.0", "")},
			reason: holdfastv1.SourceAvailableReason, message: "chart hello 1.0.0 is available from https://charts.example", requeue: chartRecheck,
			asked: &render.Helm{RepoURL: "https://charts.example", Chart: "hello", Version: "1.0.0", ReleaseName: "hi", IncludeCRDs: true}},
		{name: "the latest chart, with credentials", spec: holdfastv1.ServiceTemplateSpec{Helm: hello("", "login")},
			reason: holdfastv1.SourceAvailableReason, message: "chart hello (latest) is available from https://charts.example", requeue: chartRecheck,
			asked: &render.Helm{RepoURL: "https://charts.example", Chart: "hello", ReleaseName: "hi", IncludeCRDs: true,
				Username: "robot", Password: "s3cret"}},
		{name: "a missing credentials Secret", spec: holdfastv1.ServiceTemplateSpec{Helm: hello("1.0.0", "absent")},
			reason: holdfastv1.SourceNotFoundReason, message: "Secret templates/absent (spec.helm.credentialsSecretRef) not found: create it or fix the reference"},
		{name: "a repository that does not answer", spec: holdfastv1.ServiceTemplateSpec{Helm: hello("1.0.0", "")},
			chartErr: &render.Error{Reason: render.ReasonChartFetchFailed, Object: "chart hello 1.0.0", Message: "timeout"},
			reason:   holdfastv1.SourceUnavailableReason, message: "chart hello 1.0.0: timeout", requeue: time.Minute,
			asked: &render.Helm{RepoURL: "https://charts.example", Chart: "hello", Version: "1.0.0", ReleaseName: "hi", IncludeCRDs: true}},
		{name: "a chart version that does not exist", spec: holdfastv1.ServiceTemplateSpec{Helm: hello("9.9.9", "")},
			chartErr: &render.Error{Reason: render.ReasonChartNotFound, Object: "chart hello 9.9.9", Message: "no such version"},
			reason:   render.ReasonChartNotFound, message: "chart hello 9.9.9: no such version", requeue: chartRecheck,
			asked: &render.Helm{RepoURL: "https://charts.example", Chart: "hello", Version: "9.9.9", ReleaseName: "hi", IncludeCRDs: true}},
		{name: "a chart error without a reason", spec: holdfastv1.ServiceTemplateSpec{Helm: hello("1.0.0", "")},
			chartErr: &render.Error{Object: "chart hello 1.0.0", Message: "odd"},
			reason:   holdfastv1.SourceNotFoundReason, message: "chart hello 1.0.0: odd", requeue: chartRecheck,
			asked: &render.Helm{RepoURL: "https://charts.example", Chart: "hello", Version: "1.0.0", ReleaseName: "hi", IncludeCRDs: true}},
		{name: "kustomize files that exist",
			spec:   holdfastv1.ServiceTemplateSpec{Kustomize: &holdfastv1.KustomizeSource{Files: []holdfastv1.KustomizeFiles{{ConfigMap: "base"}}}},
			reason: holdfastv1.SourceAvailableReason, message: "every source the template reads is available"},
		{name: "a missing kustomize ConfigMap",
			spec:   holdfastv1.ServiceTemplateSpec{Kustomize: &holdfastv1.KustomizeSource{Files: []holdfastv1.KustomizeFiles{{ConfigMap: "base"}, {ConfigMap: "overlay"}}}},
			reason: holdfastv1.SourceNotFoundReason, message: "ConfigMap templates/overlay (spec.kustomize.files) not found: create it or fix the reference"},
		{name: "manifests that exist; keys are not checked", spec: resources(configMapRef("manifests"), secretRef("tls")),
			reason: holdfastv1.SourceAvailableReason, message: "every source the template reads is available"},
		{name: "a missing manifest Secret", spec: resources(configMapRef("manifests"), secretRef("absent")),
			reason: holdfastv1.SourceNotFoundReason, message: "Secret templates/absent (spec.resources) not found: create it or fix the reference"},
		{name: "a Secret that cannot be read", spec: resources(secretRef("tls")), apiReader: failing,
			reason: holdfastv1.SourceUnavailableReason, message: "reading Secret templates/tls: connection refused", requeue: time.Minute},
	} {
		t.Run(tt.name, func(t *testing.T) {
			src := &charts{err: tt.chartErr}
			r := &Reconciler{Client: cache, APIReader: api, Charts: src}
			if tt.apiReader != nil {
				r.APIReader = tt.apiReader
			}
			tpl := &holdfastv1.ServiceTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}, Spec: tt.spec}

			reason, message, requeue := r.check(context.Background(), tpl)

			if reason != tt.reason {
				t.Errorf("reason = %s, want %s (message %q)", reason, tt.reason, message)
			}
			if prefix, ok := strings.CutSuffix(tt.message, "..."); ok {
				if !strings.HasPrefix(message, prefix) {
					t.Errorf("message = %q, want it to start with %q", message, prefix)
				}
			} else if message != tt.message {
				t.Errorf("message = %q, want %q", message, tt.message)
			}
			if requeue != tt.requeue {
				t.Errorf("requeue after %s, want %s", requeue, tt.requeue)
			}
			switch {
			case tt.asked == nil && len(src.asked) > 0:
				t.Errorf("the chart source was asked for %+v, want no chart", src.asked)
			case tt.asked != nil && (len(src.asked) != 1 || src.asked[0] != *tt.asked):
				t.Errorf("the chart source was asked for %+v, want %+v once", src.asked, *tt.asked)
			}
		})
	}
}
