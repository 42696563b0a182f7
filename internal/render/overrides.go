// Per-cluster overrides: values merged over the service's before rendering, patches applied to
// the rendered objects after it, with Kustomize's patches (strategic merge and JSON 6902).

package render

import (
	"errors"
	"fmt"
	"strings"

	"sigs.k8s.io/kustomize/api/provider"
	"sigs.k8s.io/kustomize/api/resmap"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/resid"
	"sigs.k8s.io/yaml"
)

// ReasonOverrideFailed: an override's values or patches could not be applied on the cluster
// (values that are not a map, a patch that does not apply or whose target selects nothing).
const ReasonOverrideFailed = "OverrideFailed"

// Override adjusts a service for one cluster: Values are merged over the service's values,
// Patches applied to the rendered objects, in order.
type Override struct {
	// Name names the override in errors.
	Name string
	// Values is a YAML map, a Go template like the service's values.
	Values string
	// Patches are Kustomize patches.
	Patches []Patch
}

// Patch is one Kustomize patch: strategic merge, or JSON 6902 with a Target.
type Patch struct {
	Patch  string
	Target *PatchTarget
}

// PatchTarget selects objects as a Kustomize patch target does.
type PatchTarget struct {
	Group, Version, Kind, Name, Namespace, LabelSelector, AnnotationSelector string
}

func (o Override) origin() string { return fmt.Sprintf("override %q", o.Name) }

// overrideValues merges the values of the overrides over values, in order.
func overrideValues(values map[string]any, overrides []Override, data templateData, b *budget) (map[string]any, error) {
	for _, o := range overrides {
		v, err := parseValues(o.origin()+" values", o.Values, false, data, b)
		if err != nil {
			return nil, err
		}
		values = mergeValues(values, v)
	}
	return values, nil
}

// applyOverrides applies the patches of overrides to the rendered items, in order, through
// Kustomize: the items are the resources of an in-memory kustomization whose patches are the
// overrides'. A patch whose target selects no object fails, naming the override, the patch
// and the target: Kustomize itself would skip it.
func applyOverrides(items []item, overrides []Override, b *budget) ([]item, error) {
	var patches []types.Patch
	var owners []Override
	for _, o := range overrides {
		for _, p := range o.Patches {
			patches = append(patches, types.Patch{Patch: p.Patch, Target: p.Target.selector()})
			owners = append(owners, o)
		}
	}
	if len(patches) == 0 {
		return items, nil
	}
	var stream strings.Builder
	for _, it := range items {
		out, err := yaml.Marshal(it.obj.Object)
		if err != nil {
			return nil, newError(ReasonInvalidYAML, it.origin, fmt.Sprintf("%s cannot be encoded: %v", objectRef(it.obj), err), err)
		}
		stream.WriteString("---\n")
		stream.Write(out)
	}
	if err := checkTargets(stream.String(), patches, owners); err != nil {
		return nil, err
	}
	fs := filesys.MakeFsInMemory()
	k := types.Kustomization{TypeMeta: types.TypeMeta{APIVersion: types.KustomizationVersion, Kind: types.KustomizationKind},
		Resources: []string{"rendered.yaml"}, Patches: patches}
	kdata, err := yaml.Marshal(k)
	if err != nil {
		return nil, newError(ReasonOverrideFailed, "overrides", err.Error(), err)
	}
	if err := fs.WriteFile("/kustomization.yaml", kdata); err != nil {
		return nil, newError(ReasonOverrideFailed, "overrides", err.Error(), err)
	}
	if err := fs.WriteFile("/rendered.yaml", []byte(stream.String())); err != nil {
		return nil, newError(ReasonOverrideFailed, "overrides", err.Error(), err)
	}
	origin := overridesOrigin(overrides)
	out, err := buildKustomization(fs, "/", origin, "", b)
	if err != nil {
		var re *Error
		if errors.As(err, &re) && re.Reason == ReasonKustomizeFailed {
			re.Reason = ReasonOverrideFailed
		}
		return nil, err
	}
	patched, err := parseStream(origin, out, false, false)
	if err != nil {
		return nil, err
	}
	// Keep where each object came from: a patch changes objects, not their origin.
	from := make(map[string]string, len(items))
	for _, it := range items {
		from[objectRef(it.obj)] = it.origin
	}
	for i := range patched {
		if o, ok := from[objectRef(patched[i].obj)]; ok {
			patched[i].origin = o
		}
	}
	return patched, nil
}

// checkTargets fails for the first patch with a target that selects none of the objects in
// stream.
func checkTargets(stream string, patches []types.Patch, owners []Override) error {
	var rm resmap.ResMap
	for i, p := range patches {
		if p.Target == nil {
			continue // a strategic-merge patch naming its object: Kustomize fails when it is missing
		}
		if rm == nil {
			var err error
			if rm, err = resmap.NewFactory(provider.NewDefaultDepProvider().GetResourceFactory()).NewResMapFromBytes([]byte(stream)); err != nil {
				return newError(ReasonOverrideFailed, owners[i].origin(), "reading the rendered objects: "+err.Error(), err)
			}
		}
		matched, err := rm.Select(*p.Target)
		if err != nil {
			return newError(ReasonOverrideFailed, owners[i].origin(), fmt.Sprintf("patch %d: its target cannot be used: %v", patchNumber(owners, i), err), err)
		}
		if len(matched) == 0 {
			return newError(ReasonOverrideFailed, owners[i].origin(), fmt.Sprintf("patch %d: its target (%s) selects none of the rendered objects", patchNumber(owners, i), describeTarget(p.Target)), nil)
		}
	}
	return nil
}

// patchNumber is the 1-based number of patch i within its override.
func patchNumber(owners []Override, i int) int {
	n := 1
	for j := i - 1; j >= 0 && owners[j].Name == owners[i].Name; j-- {
		n++
	}
	return n
}

// overridesOrigin names the overrides whose patches a build applies.
func overridesOrigin(overrides []Override) string {
	var names []string
	for _, o := range overrides {
		if len(o.Patches) > 0 {
			names = append(names, fmt.Sprintf("%q", o.Name))
		}
	}
	if len(names) == 1 {
		return "override " + names[0]
	}
	return "overrides " + strings.Join(names, ", ")
}

func (t *PatchTarget) selector() *types.Selector {
	if t == nil {
		return nil
	}
	return &types.Selector{
		ResId:         resid.NewResIdWithNamespace(resid.Gvk{Group: t.Group, Version: t.Version, Kind: t.Kind}, t.Name, t.Namespace),
		LabelSelector: t.LabelSelector, AnnotationSelector: t.AnnotationSelector,
	}
}

func describeTarget(s *types.Selector) string {
	var parts []string
	add := func(k, v string) {
		if v != "" {
			parts = append(parts, k+"="+v)
		}
	}
	add("group", s.Group)
	add("version", s.Version)
	add("kind", s.Kind)
	add("name", s.Name)
	add("namespace", s.Namespace)
	add("labelSelector", s.LabelSelector)
	add("annotationSelector", s.AnnotationSelector)
	if len(parts) == 0 {
		return "empty"
	}
	return strings.Join(parts, ", ")
}
