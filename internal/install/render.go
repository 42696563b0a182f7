package install

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	ssautil "github.com/fluxcd/pkg/ssa/utils"
	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/common"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	release "helm.sh/helm/v4/pkg/release/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"holdfast.dev/holdfast/internal/render"
)

// Defaults of an installation, the same as the README's `helm install` command line.
const (
	DefaultReleaseName = "holdfast"
	DefaultNamespace   = "holdfast-system"
)

// Options choose the release and its values.
type Options struct {
	// ReleaseName and Namespace are the Helm release's; the hub's defaults above when empty.
	ReleaseName string
	Namespace   string
	// Values override the chart's values.yaml, as `helm install -f/--set` do.
	Values map[string]any
}

func (o Options) withDefaults() Options {
	if o.ReleaseName == "" {
		o.ReleaseName = DefaultReleaseName
	}
	if o.Namespace == "" {
		o.Namespace = DefaultNamespace
	}
	return o
}

// Render renders the embedded chart as `helm template` does.
func Render(ctx context.Context, o Options) (string, error) {
	ch, err := Chart()
	if err != nil {
		return "", err
	}
	return RenderChart(ctx, ch, o)
}

// RenderChart renders ch as `helm template` does: values checked against values.schema.json,
// the objects in Helm's install order, one YAML document each, headed by the template it came
// from. The chart has no hooks.
func RenderChart(ctx context.Context, ch *chart.Chart, o Options) (string, error) {
	o = o.withDefaults()
	install := action.NewInstall(action.NewConfiguration(action.ConfigurationSetLogger(slog.DiscardHandler)))
	install.DryRunStrategy = action.DryRunClient
	install.ReleaseName = o.ReleaseName
	install.Namespace = o.Namespace
	install.Replace = true
	kv, err := KubeVersion()
	if err != nil {
		return "", err
	}
	install.KubeVersion = kv
	values := o.Values
	if values == nil {
		values = map[string]any{}
	}
	rr, err := install.RunWithContext(ctx, ch, values)
	if err != nil {
		return "", fmt.Errorf("rendering chart %s %s: %w", ch.Name(), ch.Metadata.Version, err)
	}
	rel, ok := rr.(*release.Release)
	if !ok {
		return "", fmt.Errorf("rendering chart %s: Helm returned a %T", ch.Name(), rr)
	}
	if len(rel.Hooks) > 0 {
		return "", fmt.Errorf("chart %s has hooks, which an export would leave out", ch.Name())
	}
	return rel.Manifest, nil
}

// KubeVersion is the Kubernetes version the chart is rendered for, Holdfast's renderer's (a
// client-only rendering cannot ask the cluster).
func KubeVersion() (*common.KubeVersion, error) {
	kv, err := common.ParseKubeVersion(render.DefaultKubeVersion)
	if err != nil {
		return nil, fmt.Errorf("parsing Kubernetes version %s: %w", render.DefaultKubeVersion, err)
	}
	return kv, nil
}

// Objects parses rendered manifests into objects, in their order.
func Objects(manifest string) ([]*unstructured.Unstructured, error) {
	objs, err := ssautil.ReadObjects(strings.NewReader(manifest))
	if err != nil {
		return nil, fmt.Errorf("parsing the rendered manifests: %w", err)
	}
	return objs, nil
}

// Manifests are what `holdfast install` applies and `holdfast install --export` prints: the
// hub chart as ManifestsOf renders it.
func Manifests(ctx context.Context, o Options) (string, error) {
	ch, err := Chart()
	if err != nil {
		return "", err
	}
	return ManifestsOf(ctx, ch, o)
}

// ManifestsOf renders ch for an installation without Helm (kubectl apply, a GitOps repository):
// with o.Values over its defaults, plus the release namespace, which no Helm is there to create
// (the chart's createNamespace: true, unless o.Values says otherwise).
func ManifestsOf(ctx context.Context, ch *chart.Chart, o Options) (string, error) {
	values := map[string]any{"createNamespace": true}
	for k, v := range o.Values {
		values[k] = v
	}
	o.Values = values
	return RenderChart(ctx, ch, o)
}
