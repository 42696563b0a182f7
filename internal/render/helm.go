package render

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"time"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/common"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
	ri "helm.sh/helm/v4/pkg/release"
	release "helm.sh/helm/v4/pkg/release/v1"
)

// DefaultKubeVersion is the Kubernetes version Helm charts see when
// Request.KubeVersion is empty.
const DefaultKubeVersion = "v1.36.0"

// renderHelm fetches the chart and renders it with the Helm SDK as
// `helm template` does (a client-only dry-run install): values are checked
// against values.schema.json, dependencies are processed, the chart's
// kubeVersion constraint is checked, CRDs from crds/ come first when
// IncludeCRDs is set, and objects are in Helm's install order.
//
// Hooks: pre-install hooks are placed before the chart's objects and
// post-install hooks after them, each group sorted by hook weight then name,
// as plain objects (Holdfast applies continuously; there is no install event
// to hang them on). Hooks that do not run on install (test, upgrade, rollback,
// delete) are left out. Their helm.sh/hook annotations are kept.
//
// The release namespace is TargetNamespace, or "default" (Helm's own
// default) when the service has none.
//
// Rendering is client-only, with no connection to the target: `lookup`
// returns an empty map, so a chart that uses it to reuse a value already on
// the cluster (a password in an existing Secret) generates a new one instead.
// Values a chart generates (randAlphaNum, uuidv4, genCA, ...) differ on every
// render; package rendercache keeps a rendering until its inputs change.
//
// Limits: the chart's templates are instrumented like Go templates
// (instrumentChart), Helm's engine gets sprig's functions capped through
// CustomTemplateFuncs (Helm's own include, tpl, toYaml... stay Helm's), Helm
// runs on a goroutine the render stops waiting for when its time is up, and
// the manifests it returns are bounded by MaxOutputBytes. The time spent
// fetching the chart is not counted.
func renderHelm(ctx context.Context, req Request, values map[string]any, charts ChartSource, b *budget) ([]item, string, error) {
	h := *req.Source.Helm
	if h.Artifact == nil && (h.Chart == "" || h.RepoURL == "") {
		return nil, "", newError(ReasonInvalidSource, "helm source", "chart and repoURL are both required", nil)
	}
	if charts == nil {
		return nil, "", errors.New("render: a Helm source needs a ChartSource, and none was given")
	}
	install, err := newHelmInstall(req, b)
	if err != nil {
		return nil, "", err
	}
	ch, err := loadChart(ctx, charts, h, b)
	if err != nil {
		return nil, "", err
	}
	origin := fmt.Sprintf("chart %s %s", ch.Name(), ch.Metadata.Version)
	if err := instrumentChart(ch); err != nil {
		return nil, "", newError(ReasonRenderLimitExceeded, origin,
			"the render limits cannot be applied to the chart's "+err.Error()+"; Holdfast does not render it", err)
	}
	rel, err := runHelmInstall(ctx, install, ch, values, origin, b)
	if err != nil {
		return nil, "", err
	}
	items, err := releaseItems(origin, rel)
	if err != nil {
		return nil, "", err
	}
	return items, ch.Metadata.Version, nil
}

// newHelmInstall is a client-side dry-run install of the service's release: its name (the
// service's by default), namespace and Kubernetes version checked, with the budget's template
// functions.
func newHelmInstall(req Request, b *budget) (*action.Install, error) {
	h := *req.Source.Helm
	releaseName := h.ReleaseName
	if releaseName == "" {
		releaseName = req.Service
	}
	if err := chartutil.ValidateReleaseName(releaseName); err != nil {
		return nil, newError(ReasonInvalidSource, "helm source", fmt.Sprintf("release name %q is not valid: %v", releaseName, err), err)
	}
	kv := req.KubeVersion
	if kv == "" {
		kv = DefaultKubeVersion
	}
	kubeVersion, err := common.ParseKubeVersion(kv)
	if err != nil {
		return nil, newError(ReasonInvalidSource, "helm source", fmt.Sprintf("Kubernetes version %q is not valid: %v", kv, err), err)
	}
	namespace := req.TargetNamespace
	if namespace == "" {
		namespace = "default"
	}
	cfg := action.NewConfiguration(action.ConfigurationSetLogger(slog.DiscardHandler))
	cfg.CustomTemplateFuncs = b.helmFuncs()
	install := action.NewInstall(cfg)
	install.DryRunStrategy = action.DryRunClient
	install.ReleaseName = releaseName
	install.Namespace = namespace
	install.KubeVersion = kubeVersion
	install.IncludeCRDs = h.IncludeCRDs
	install.Replace = true
	return install, nil
}

// loadChart fetches the chart, its time not counted in the render's budget.
func loadChart(ctx context.Context, charts ChartSource, h Helm, b *budget) (*chart.Chart, error) {
	fetchStart := time.Now()
	ch, err := charts.Load(ctx, h)
	b.extend(time.Since(fetchStart))
	if err != nil {
		var re *Error
		if errors.As(err, &re) {
			return nil, err
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, newError(ReasonChartFetchFailed, ChartRef(h), "fetching the chart failed: "+err.Error(), err)
	}
	return ch, nil
}

// runHelmInstall renders the chart within the budget; its output, hooks included, may not
// exceed the limit for one render.
func runHelmInstall(ctx context.Context, install *action.Install, ch *chart.Chart, values map[string]any, origin string, b *budget) (*release.Release, error) {
	var rr ri.Releaser
	var runErr error
	err := b.run(func() { rr, runErr = install.RunWithContext(ctx, ch, values) })
	if err == nil {
		err = runErr
	}
	if v := b.violation(); v != nil {
		return nil, limitExceeded(origin, helmLocation(err), v)
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, helmError(origin, err)
	}
	rel, ok := rr.(*release.Release)
	if !ok {
		return nil, newError(ReasonInvalidSource, origin, fmt.Sprintf("Helm returned an unexpected release type %T", rr), nil)
	}
	total := len(rel.Manifest)
	for _, hk := range rel.Hooks {
		total += len(hk.Manifest)
	}
	if total > b.limits.MaxOutputBytes {
		return nil, limitExceeded(origin, "", b.fail(fmt.Sprintf("the chart rendered more than %s, the limit for one render; turn parts of the chart off through values or split the service", byteSize(b.limits.MaxOutputBytes))))
	}
	return rel, nil
}

// releaseItems are the objects of a release in the order they are applied: the pre-install
// hooks, the manifest, the post-install hooks.
func releaseItems(origin string, rel *release.Release) ([]item, error) {
	var pre, post []*release.Hook
	for _, hk := range rel.Hooks {
		switch {
		case hasEvent(hk, release.HookPreInstall):
			pre = append(pre, hk)
		case hasEvent(hk, release.HookPostInstall):
			post = append(post, hk)
		}
	}
	var items []item
	for _, hk := range sortHooks(pre) {
		it, err := parseHelmStream(fmt.Sprintf("%s, pre-install hook", origin), hk.Manifest, hk.Path)
		if err != nil {
			return nil, err
		}
		items = append(items, it...)
	}
	it, err := parseHelmStream(origin, rel.Manifest, "")
	if err != nil {
		return nil, err
	}
	items = append(items, it...)
	for _, hk := range sortHooks(post) {
		it, err := parseHelmStream(fmt.Sprintf("%s, post-install hook", origin), hk.Manifest, hk.Path)
		if err != nil {
			return nil, err
		}
		items = append(items, it...)
	}
	return items, nil
}

// instrumentChart instruments the templates of c and of its subcharts
// (instrument.go). The templates are replaced, not modified in place.
func instrumentChart(c *chart.Chart) error {
	templates := make([]*common.File, len(c.Templates))
	for i, f := range c.Templates {
		text, err := prepareHelm(f.Name, string(f.Data))
		if err != nil {
			return fmt.Errorf("template %s", f.Name)
		}
		nf := *f
		nf.Data = []byte(text)
		templates[i] = &nf
	}
	c.Templates = templates
	for _, d := range c.Dependencies() {
		if err := instrumentChart(d); err != nil {
			return err
		}
	}
	return nil
}

var helmLocationRE = regexp.MustCompile(`([^\s:"'<>()]+/templates/[^\s:"'<>()]+):(\d+)`)

// helmLocation returns "template <path> line N" from an error of Helm's
// engine, or "". Only the template's path in the chart and the line are
// taken from the message, never the template text Helm may quote.
func helmLocation(err error) string {
	if err == nil {
		return ""
	}
	m := helmLocationRE.FindStringSubmatch(err.Error())
	if m == nil {
		return ""
	}
	return fmt.Sprintf("template %s line %s", m[1], m[2])
}

func hasEvent(h *release.Hook, e release.HookEvent) bool {
	for _, x := range h.Events {
		if x == e {
			return true
		}
	}
	return false
}

// sortHooks orders hooks as Helm runs them: by weight, then by name.
func sortHooks(hs []*release.Hook) []*release.Hook {
	sort.SliceStable(hs, func(i, j int) bool {
		if hs[i].Weight != hs[j].Weight {
			return hs[i].Weight < hs[j].Weight
		}
		return hs[i].Name < hs[j].Name
	})
	return hs
}

const sourcePrefix = "# Source: "

// parseHelmStream parses Helm output, naming each document after the
// template it came from ("# Source: hello/templates/deployment.yaml").
func parseHelmStream(origin, manifest, source string) ([]item, error) {
	var items []item
	for _, d := range splitDocuments([]byte(manifest)) {
		first, _, _ := strings.Cut(string(d.text), "\n")
		if strings.HasPrefix(first, sourcePrefix) {
			source = strings.TrimSpace(strings.TrimPrefix(first, sourcePrefix))
		}
		loc := origin
		if source != "" {
			loc = fmt.Sprintf("%s, template %s", origin, source)
		}
		it, err := parseDocument(loc, d, false)
		if err != nil {
			return nil, err
		}
		items = append(items, it...)
	}
	return items, nil
}

// helmError classifies an error of Helm's install action. Helm returns plain
// errors, so this goes by their text. Template failures are InvalidValues:
// with a published chart, a template that fails (required, fail, a missing
// key) almost always does so because of the values given to it.
func helmError(origin string, err error) error {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "YAML parse error"):
		return newError(ReasonInvalidYAML, origin, "the chart rendered invalid YAML: "+msg, err)
	case strings.Contains(msg, "chart requires kubeVersion"):
		return newError(ReasonInvalidSource, origin, msg+"; pick a chart version that supports the cluster", err)
	case strings.Contains(msg, "dependencies processing failed"), strings.Contains(msg, "invalid chart apiVersion"),
		strings.Contains(msg, "release name check failed"):
		return newError(ReasonInvalidSource, origin, msg, err)
	case strings.Contains(msg, "values don't meet the specifications of the schema"):
		return newError(ReasonInvalidValues, origin, "values do not match the chart's values.schema.json: "+oneLine(msg), err)
	default:
		return newError(ReasonInvalidValues, origin, "the chart's templates failed with these values: "+oneLine(msg), err)
	}
}

// oneLine folds Helm's multi-line messages so a condition message stays one
// line.
func oneLine(s string) string {
	s = strings.TrimSpace(s)
	s = strings.ReplaceAll(s, ":\n", ": ")
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", "; ")), " ")
}

// ChartRef names a chart request for messages ("chart hello 1.x from
// oci://registry/charts"), without credentials; ChartSource implementations
// use it as Error.Object.
func ChartRef(h Helm) string {
	if h.Artifact != nil {
		dir := h.Artifact.Path
		if dir == "" {
			dir = "."
		}
		return fmt.Sprintf("chart at %s in %s", dir, ArtifactRef(*h.Artifact))
	}
	v := h.Version
	if v == "" {
		v = "latest"
	}
	repoURL := h.RepoURL
	if u, err := url.Parse(repoURL); err != nil {
		repoURL = "an invalid repoURL"
	} else if u.User != nil {
		u.User = nil
		repoURL = u.String()
	}
	return fmt.Sprintf("chart %s %s from %s", h.Chart, v, repoURL)
}
