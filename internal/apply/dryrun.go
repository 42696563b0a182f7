package apply

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/fluxcd/pkg/ssa/jsondiff"
	"github.com/fluxcd/pkg/ssa/normalize"
	"github.com/fluxcd/pkg/ssa/utils"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"holdfast.dev/holdfast/internal/fieldset"
)

// maxDiffLines caps a diff so that a huge object cannot bloat the status it is reported in.
const maxDiffLines = 200

// redacted replaces every Secret value in diffs.
const redacted = "***"

// lastApplied is kubectl's client-side apply annotation; on a Secret it holds the values.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// dryRunOne decides what applying it would do, with a server-side dry-run apply: the API server
// runs defaulting, validation and admission without persisting anything.
func (r *run) dryRunOne(ctx context.Context, it *item) {
	if ns := it.ref.Namespace; it.unvalidated == "" && ns != "" {
		r.mu.Lock()
		if r.newNamespaces[ns] {
			it.unvalidated = fmt.Sprintf("not validated by the API server: its namespace %s is created by this set", ns)
		}
		r.mu.Unlock()
	}
	if it.unvalidated != "" {
		it.result.Action, it.result.Message = WouldCreate, it.unvalidated
		it.result.Diff = createDiff(it.obj)
		return
	}

	dry := it.obj.DeepCopy()
	err := r.a.client.Apply(ctx, client.ApplyConfigurationFromUnstructured(dry),
		client.DryRunAll, client.ForceOwnership, client.FieldOwner(fieldset.FieldManager))
	if err != nil {
		it.fail(err)
		return
	}
	if it.live == nil {
		it.result.Action = WouldCreate
		it.result.Diff = createDiff(it.obj)
		if utils.IsNamespace(it.obj) {
			r.mu.Lock()
			r.newNamespaces[it.obj.GetName()] = true
			r.mu.Unlock()
		}
		return
	}
	lines, err := updateDiff(it.live, dry)
	if err != nil {
		it.fail(fmt.Errorf("computing diff: %w", err))
		return
	}
	if len(lines) == 0 {
		it.result.Action, it.result.Message = Unchanged, "server-side dry run: no change"
		return
	}
	it.result.Action = WouldUpdate
	it.result.Diff = capLines(lines)
}

// updateDiff lists the fields an apply would change, "path: old -> new", comparing the live
// object with the dry-run result: the spec (and every other top-level field but metadata and
// status) in full, labels and annotations only where they would be added or changed (others'
// additions are not Holdfast's to remove). Secret values are masked.
func updateDiff(live, dry *unstructured.Unstructured) ([]string, error) {
	live, dry = live.DeepCopy(), dry.DeepCopy()
	if err := normalize.DryRunUnstructured(dry); err != nil {
		return nil, err
	}
	body, err := jsondiff.DiffUnstructured(live, dry)
	if err != nil {
		return nil, err
	}
	if utils.IsSecret(dry) {
		body = jsondiff.MaskSecretPatchData(body)
	}
	var lines []string
	for _, field := range []string{"labels", "annotations"} {
		x, _, _ := unstructured.NestedStringMap(live.Object, "metadata", field)
		y, _, _ := unstructured.NestedStringMap(dry.Object, "metadata", field)
		if utils.IsSecret(dry) && field == "annotations" {
			maskKey(x, lastApplied)
			maskKey(y, lastApplied)
		}
		meta, err := jsondiff.DiffUnstructured(wrap(field, x), wrap(field, y))
		if err != nil {
			return nil, err
		}
		for _, op := range meta {
			if op.Type == "remove" {
				continue
			}
			lines = append(lines, diffLine("/metadata"+op.Path, op.OldValue, op.Value, op.Type))
		}
	}
	for _, op := range body {
		lines = append(lines, diffLine(op.Path, op.OldValue, op.Value, op.Type))
	}
	return lines, nil
}

func wrap(field string, m map[string]string) *unstructured.Unstructured {
	obj := map[string]any{}
	if m != nil {
		inner := make(map[string]any, len(m))
		for k, v := range m {
			inner[k] = v
		}
		obj[field] = inner
	}
	return &unstructured.Unstructured{Object: obj}
}

func maskKey(m map[string]string, k string) {
	if _, ok := m[k]; ok {
		m[k] = redacted
	}
}

// diffLine renders one change; absent values (an add's old value, a remove's new one) show as
// "<none>".
func diffLine(path string, old, new any, op string) string {
	o, n := render(old), render(new)
	switch op {
	case "add":
		o = "<none>"
	case "remove":
		n = "<none>"
	}
	return fmt.Sprintf("%s: %s -> %s", path, o, n)
}

func render(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%v", v)
	}
	return string(b)
}

// createDiff renders an object to be created as YAML, each line prefixed "+ ", with Secret
// values masked.
func createDiff(obj *unstructured.Unstructured) string {
	c := redactSecret(obj)
	unstructured.RemoveNestedField(c.Object, "metadata", "managedFields")
	unstructured.RemoveNestedField(c.Object, "status")
	b, err := yaml.Marshal(c.Object)
	if err != nil {
		return "+ " + RefOf(obj).String()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	for i := range lines {
		lines[i] = "+ " + lines[i]
	}
	return capLines(lines)
}

// redactSecret returns a copy of obj with, for a Secret, every data and stringData value and
// kubectl's last-applied annotation masked; other objects are returned as copies.
func redactSecret(obj *unstructured.Unstructured) *unstructured.Unstructured {
	c := obj.DeepCopy()
	if !utils.IsSecret(c) {
		return c
	}
	for _, field := range []string{"data", "stringData"} {
		if m, ok := c.Object[field].(map[string]any); ok {
			for k := range m {
				m[k] = redacted
			}
		}
	}
	if a := c.GetAnnotations(); a != nil {
		maskKey(a, lastApplied)
		c.SetAnnotations(a)
	}
	return c
}

func capLines(lines []string) string {
	if len(lines) > maxDiffLines {
		extra := len(lines) - maxDiffLines
		lines = append(lines[:maxDiffLines:maxDiffLines], fmt.Sprintf("... %d more lines", extra))
	}
	return strings.Join(lines, "\n")
}
