package render

import (
	"errors"
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// kustomizeSlot serialises kustomize builds: kustomize keeps its OpenAPI
// schema in package state, which concurrent builds race on (Flux serialises
// its builds for the same reason). It is a channel rather than a mutex so that
// waiting for it ends with the render's time: a build that went over its
// time keeps the slot until it ends.
var kustomizeSlot = make(chan struct{}, 1)

var kustomizationNames = []string{"kustomization.yaml", "kustomization.yml", "Kustomization"}

// renderKustomize builds the overlay from an in-memory file system. Remote
// resources and plugins are refused before kustomize runs: kustomize would
// otherwise fetch URLs or run git from the controller.
//
// The build itself cannot be interrupted. It runs under the render's time
// (budget.run), its input is bounded by the size of the objects it comes from,
// and its output by MaxOutputBytes and MaxObjects.
func renderKustomize(k *Kustomize, goTemplate bool, data templateData, b *budget) ([]item, error) {
	dir := path.Clean("/" + strings.TrimPrefix(k.Path, "/"))
	origin := "kustomize overlay " + strings.TrimPrefix(dir, "/")
	if dir == "/" {
		origin = "kustomize overlay ."
	}
	if strings.HasPrefix(path.Clean(k.Path), "..") {
		return nil, newError(ReasonInvalidSource, origin, fmt.Sprintf("path %q leaves the overlay's files", k.Path), nil)
	}
	files, sensitive, err := overlayFiles(k, origin, goTemplate, data, b)
	if err != nil {
		return nil, err
	}
	if err := checkKustomizations(origin, files, sensitive); err != nil {
		return nil, err
	}
	fs := filesys.MakeFsInMemory()
	for name, content := range files {
		if err := fs.WriteFile(name, content); err != nil {
			return nil, newError(ReasonInvalidSource, origin, fmt.Sprintf("file %q: %v", strings.TrimPrefix(name, "/"), err), err)
		}
	}
	out, err := buildKustomization(fs, dir, origin, withheldFiles(sensitive), b)
	if err != nil {
		return nil, err
	}
	// Line numbers of kustomize's output mean nothing to the user.
	return parseStream(origin, out, false, len(sensitive) > 0)
}

// overlayFiles are the overlay's files by their absolute paths in the in-memory file system,
// executed as Go templates when goTemplate, and the names of those read from a Secret
// (SensitiveFiles), whose template errors are withheld.
func overlayFiles(k *Kustomize, origin string, goTemplate bool, data templateData, b *budget) (files map[string][]byte, sensitive map[string]bool, _ error) {
	files = make(map[string][]byte, len(k.Files))
	sensitive = map[string]bool{}
	names := make([]string, 0, len(k.Files))
	for name := range k.Files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		clean := path.Clean(name)
		if name == "" || path.IsAbs(name) || clean == "." || strings.HasPrefix(clean, "../") || clean == ".." {
			return nil, nil, newError(ReasonInvalidSource, origin, fmt.Sprintf("file %q is not a relative path inside the overlay", name), nil)
		}
		content := k.Files[name]
		if k.SensitiveFiles[name] {
			sensitive["/"+clean] = true
		}
		if goTemplate {
			out, err := executeTemplate("kustomize file "+clean, string(content), data, b)
			if err != nil {
				if sensitive["/"+clean] {
					err = withholdTemplateError(err)
				}
				return nil, nil, err
			}
			content = out
		}
		files["/"+clean] = content
	}
	return files, sensitive, nil
}

// withheldFiles is what kustomize's messages say instead of themselves when files of the
// overlay are read from a Secret: its messages and its output may quote any file, so they say
// which files and no more. "" when none is.
func withheldFiles(sensitive map[string]bool) string {
	if len(sensitive) == 0 {
		return ""
	}
	secretFiles := make([]string, 0, len(sensitive))
	for name := range sensitive {
		secretFiles = append(secretFiles, strings.TrimPrefix(name, "/"))
	}
	sort.Strings(secretFiles)
	return "details withheld because files of the overlay are read from a Secret (" + strings.Join(secretFiles, ", ") + ")"
}

// buildKustomization builds the kustomization in dir of fs, one build at a time in the process
// (kustomizeSlot), within the budget, plugins off and files outside the overlay out of reach.
// withheld, if not "", replaces kustomize's messages.
func buildKustomization(fs filesys.FileSystem, dir, origin, withheld string, b *budget) ([]byte, error) {
	failed := func(what string, err error) error {
		if withheld != "" {
			return newError(ReasonKustomizeFailed, origin, what+": "+withheld, nil)
		}
		return newError(ReasonKustomizeFailed, origin, what+": "+err.Error(), err)
	}
	opts := krusty.MakeDefaultOptions()
	opts.LoadRestrictions = types.LoadRestrictionsRootOnly
	opts.PluginConfig = types.DisabledPluginConfig()

	wait := time.NewTimer(b.remainingTime())
	defer wait.Stop()
	select {
	case kustomizeSlot <- struct{}{}:
	case <-wait.C:
		return nil, errors.New("render: the time for rendering ran out while waiting for another kustomize build to finish")
	case <-b.ctx.Done():
		return nil, b.ctx.Err()
	}
	var out []byte
	var buildErr, encodeErr error
	err := b.run(func() {
		defer func() { <-kustomizeSlot }()
		m, err := krusty.MakeKustomizer(opts).Run(fs, dir)
		if err != nil {
			buildErr = err
			return
		}
		out, encodeErr = m.AsYaml()
	})
	switch {
	case err != nil:
		var le *limitError
		if errors.As(err, &le) {
			return nil, limitExceeded(origin, "", le)
		}
		if b.ctx.Err() != nil {
			return nil, err
		}
		return nil, failed("kustomize build failed", err)
	case buildErr != nil:
		return nil, failed("kustomize build failed", buildErr)
	case encodeErr != nil:
		return nil, failed("kustomize output cannot be encoded", encodeErr)
	case len(out) > b.limits.MaxOutputBytes:
		return nil, limitExceeded(origin, "", b.fail(fmt.Sprintf("kustomize built more than %s, the limit for one render; build less or split the service", byteSize(b.limits.MaxOutputBytes))))
	}
	return out, nil
}

// checkKustomizations refuses what would make kustomize leave the in-memory
// files: resources, components and CRDs that are not among them (kustomize
// would try them as git repositories or URLs), http(s) URLs anywhere kustomize
// loads a file, and Helm chart inflation. sensitive marks, by name, the files
// read from a Secret.
func checkKustomizations(origin string, files map[string][]byte, sensitive map[string]bool) error {
	dirs := map[string]bool{"/": true}
	for name := range files {
		for d := path.Dir(name); d != "/"; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		base := path.Base(name)
		isKustomization := false
		for _, kn := range kustomizationNames {
			isKustomization = isKustomization || base == kn
		}
		if !isKustomization {
			continue
		}
		where := fmt.Sprintf("%s (%s)", origin, strings.TrimPrefix(name, "/"))
		var kz kustomization
		if err := yaml.Unmarshal(files[name], &kz); err != nil {
			// What cannot be read cannot be checked: refused, never handed to kustomize.
			msg := "is not a valid kustomization"
			if !sensitive[name] {
				msg += ": " + err.Error()
			}
			return newError(ReasonKustomizeFailed, where, msg+"; fix its YAML", nil)
		}
		// A path named in a kustomization read from a Secret is not quoted.
		quote := strconv.Quote
		if sensitive[name] {
			quote = func(string) string { return "[path withheld: the kustomization is read from a Secret]" }
		}
		dir := path.Dir(name)
		local := func(p string) bool {
			full := path.Join(dir, p)
			_, isFile := files[full]
			return isFile || dirs[full]
		}
		for _, list := range [][]string{kz.Resources, kz.Bases, kz.Components, kz.Crds} {
			for _, p := range list {
				if !local(p) {
					return newError(ReasonKustomizeFailed, where,
						fmt.Sprintf("resource %s is not among the overlay's files; remote bases and URLs are not supported, put the files in the source", quote(p)), nil)
				}
			}
		}
		if len(kz.HelmCharts) > 0 || len(kz.HelmChartInflationGenerator) > 0 || kz.HelmGlobals != nil {
			return newError(ReasonKustomizeFailed, where, "helmCharts are not supported in kustomize overlays; use a Helm source instead", nil)
		}
		for _, p := range kz.loadedPaths() {
			if p == "" || strings.Contains(p, "\n") { // none, or an inline patch or configuration
				continue
			}
			// Only the overlay's own files: a URL, a git or ssh address (github.com/org/repo//dir,
			// git@host:repo.git) or any other path outside the files would make kustomize fetch.
			if !local(p) {
				return newError(ReasonKustomizeFailed, where,
					fmt.Sprintf("%s is not among the overlay's files; remote files are not supported, put the file in the source", quote(p)), nil)
			}
		}
	}
	return nil
}

// loadedPaths are the files a kustomization loads besides its resources: patches,
// replacements, generators' sources, configurations, generators, transformers, validators and
// its OpenAPI schema. Inline patches and configurations hold a newline; a path not given is "".
func (kz *kustomization) loadedPaths() []string {
	var loaded []string
	for _, p := range kz.Patches {
		loaded = append(loaded, p.Path)
	}
	for _, p := range kz.PatchesJSON6902 {
		loaded = append(loaded, p.Path)
	}
	loaded = append(loaded, kz.PatchesStrategicMerge...)
	for _, r := range kz.Replacements {
		loaded = append(loaded, r.Path)
	}
	for _, g := range kz.ConfigMapGenerator {
		loaded = append(loaded, generatorPaths(g.KvPairSources)...)
	}
	for _, g := range kz.SecretGenerator {
		loaded = append(loaded, generatorPaths(g.KvPairSources)...)
	}
	loaded = append(loaded, kz.Configurations...)
	loaded = append(loaded, kz.Generators...)
	loaded = append(loaded, kz.Transformers...)
	loaded = append(loaded, kz.Validators...)
	return append(loaded, kz.OpenAPI["path"])
}

// kustomization is a kustomization file as checkKustomizations reads it. The fields kustomize
// still honours but types.Kustomization marks deprecated (it converts them to Resources and
// Patches when it loads the file) are decoded into fields of their own: at a shallower depth,
// they take those keys from the embedded struct's fields of the same JSON name.
type kustomization struct {
	types.Kustomization
	Bases                 []string      `json:"bases,omitempty"`
	PatchesJSON6902       []types.Patch `json:"patchesJson6902,omitempty"`
	PatchesStrategicMerge []string      `json:"patchesStrategicMerge,omitempty"`
}

// generatorPaths returns the files a generator reads (file sources are "key=path" or "path").
func generatorPaths(s types.KvPairSources) []string {
	var out []string
	for _, f := range s.FileSources {
		if _, p, ok := strings.Cut(f, "="); ok {
			f = p
		}
		out = append(out, f)
	}
	out = append(out, s.EnvSources...)
	if s.EnvSource != "" {
		out = append(out, s.EnvSource)
	}
	return out
}
