package render

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// MaxObjectSize is the largest rendered object, as JSON, that Render accepts:
// 1 MiB, about what etcd and the API server accept for one object.
const MaxObjectSize = 1 << 20

const inlineOrigin = "inline manifests"

// Render renders req's source for req.Cluster. charts fetches Helm charts and
// may be nil when no Helm source is used. Errors are *Error (see Transient),
// or the context's error if ctx ends first.
func Render(ctx context.Context, req Request, charts ChartSource) (*Result, error) {
	res, err := render(ctx, req, charts)
	return res, withService(err, req.Service)
}

func render(ctx context.Context, req Request, charts ChartSource) (*Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := checkSource(req.Source); err != nil {
		return nil, err
	}
	b := newBudget(ctx, req.Limits)
	values, err := resolveValues(req, b)
	if err != nil {
		return nil, err
	}
	values, err = overrideValues(values, req.Overrides,
		templateData{Cluster: req.Cluster, Service: req.Service, TargetNamespace: req.TargetNamespace}, b)
	if err != nil {
		return nil, err
	}
	data := templateData{Cluster: req.Cluster, Service: req.Service, TargetNamespace: req.TargetNamespace, Values: values}

	var items []item
	var chartVersion string
	src := req.Source
	switch {
	case src.Inline != "":
		items, err = renderText(inlineOrigin, []byte(src.Inline), src.GoTemplate, false, data, b)
	case len(src.Documents) > 0:
		items, err = renderDocuments(src.Documents, src.GoTemplate, data, b)
	case src.Kustomize != nil:
		items, err = renderKustomize(src.Kustomize, src.GoTemplate, data, b)
	case src.Helm != nil:
		items, chartVersion, err = renderHelm(ctx, req, values, charts, b)
		if err != nil && (req.TemplateValuesFrom.Sensitive || req.ServiceValuesFrom.Sensitive) {
			err = withholdHelmValuesError(err)
		}
	}
	if err != nil {
		return nil, err
	}
	if items, err = applyOverrides(items, req.Overrides, b); err != nil {
		return nil, err
	}
	return finish(items, req.TargetNamespace, chartVersion, b)
}

// checkSource requires exactly one source.
func checkSource(s Source) error {
	var set []string
	if s.Inline != "" {
		set = append(set, "inline manifests")
	}
	if len(s.Documents) > 0 {
		set = append(set, "documents")
	}
	if s.Kustomize != nil {
		set = append(set, "kustomize")
	}
	if s.Helm != nil {
		set = append(set, "helm")
	}
	switch len(set) {
	case 1:
		return nil
	case 0:
		return newError(ReasonInvalidSource, "source", "no source is set; set exactly one of inline manifests, ConfigMap/Secret references, kustomize or helm", nil)
	default:
		return newError(ReasonInvalidSource, "source", fmt.Sprintf("several sources are set (%s); set exactly one", strings.Join(set, ", ")), nil)
	}
}

// renderText renders one manifest stream, through Go templates if asked.
// sensitive marks text read from a Secret (see Document.Sensitive).
func renderText(origin string, text []byte, goTemplate, sensitive bool, data templateData, b *budget) ([]item, error) {
	if goTemplate {
		out, err := executeTemplate(origin, string(text), data, b)
		if err != nil {
			if sensitive {
				err = withholdTemplateError(err)
			}
			return nil, err
		}
		text = out
	}
	return parseStream(origin, text, true, sensitive)
}

func renderDocuments(docs []Document, goTemplate bool, data templateData, b *budget) ([]item, error) {
	var items []item
	for i, d := range docs {
		origin := d.Origin
		if origin == "" {
			origin = fmt.Sprintf("document source %d", i+1)
		}
		it, err := renderText(origin, d.Content, goTemplate, d.Sensitive, data, b)
		if err != nil {
			return nil, err
		}
		items = append(items, it...)
		if len(items) > b.limits.MaxObjects {
			return nil, limitExceeded(origin, "", b.fail(b.limits.tooManyObjects()))
		}
	}
	return items, nil
}

// objectKey identifies an object on a cluster. The version is left out: the
// same object may be declared under two versions of its group.
type objectKey struct {
	group, kind, namespace, name string
}

// finish checks the rendered set (count, sizes, duplicates) and computes its
// digest.
func finish(items []item, targetNamespace, chartVersion string, b *budget) (*Result, error) {
	if len(items) > b.limits.MaxObjects {
		return nil, limitExceeded("", "", b.fail(b.limits.tooManyObjects()))
	}
	res := &Result{Objects: make([]*unstructured.Unstructured, 0, len(items)), ChartVersion: chartVersion}
	seen := make(map[objectKey]string, len(items))
	d := newDigest()
	for _, it := range items {
		raw, err := json.Marshal(it.obj.Object)
		if err != nil {
			return nil, newError(ReasonInvalidYAML, it.origin, fmt.Sprintf("%s cannot be encoded as JSON: %v", objectRef(it.obj), err), err)
		}
		if len(raw) > MaxObjectSize {
			return nil, newError(ReasonObjectTooLarge, objectRef(it.obj),
				fmt.Sprintf("object is %s as JSON, over the 1 MiB limit for one object (from %s); split it or move the data elsewhere", size(len(raw)), it.origin), nil)
		}
		gv, _ := schema.ParseGroupVersion(it.obj.GetAPIVersion())
		// Namespace is not defaulted here, but "" and the target namespace end
		// up the same for a namespaced kind, so compare them as equal.
		ns := it.obj.GetNamespace()
		if ns == "" {
			ns = targetNamespace
		}
		k := objectKey{group: gv.Group, kind: it.obj.GetKind(), namespace: ns, name: it.obj.GetName()}
		if first, dup := seen[k]; dup {
			return nil, newError(ReasonDuplicateObject, objectRef(it.obj),
				fmt.Sprintf("object is declared twice (in %s and in %s); keep one", first, it.origin), nil)
		}
		seen[k] = it.origin
		d.add(raw)
		res.Objects = append(res.Objects, it.obj)
	}
	res.Digest = d.sum()
	return res, nil
}

func size(n int) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%.2f MiB (%d bytes)", float64(n)/(1<<20), n)
	}
	return fmt.Sprintf("%d bytes", n)
}
