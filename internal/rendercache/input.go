package rendercache

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"sort"

	"helm.sh/helm/v4/pkg/chart/common"
	chart "helm.sh/helm/v4/pkg/chart/v2"

	"holdfast.dev/holdfast/internal/render"
)

// formatVersion is part of every input digest. Bump it only when kept renderings must not be
// reused — it renders every Helm service of the fleet again, with new generated values.
const formatVersion = 1

// InputDigest is the digest of everything rendering req reads: the request itself and the
// content of ch, the chart req's Helm source resolved to (nil for other sources). Where the
// chart came from and how it was fetched is left out (see the package comment).
func InputDigest(req render.Request, ch *chart.Chart) (string, error) {
	if h := req.Source.Helm; h != nil {
		// The chart is identified by its content.
		req.Source.Helm = &render.Helm{Chart: h.Chart, ReleaseName: h.ReleaseName, IncludeCRDs: h.IncludeCRDs}
	}
	in := struct {
		Format  int            `json:"format"`
		Request render.Request `json:"request"`
		Chart   string         `json:"chart,omitempty"`
		// Inline is the digest of a large inline source, which Request then leaves out
		// (inline_digest.go).
		Inline string `json:"inline,omitempty"`
	}{Format: formatVersion, Request: req}
	if len(req.Source.Inline) >= memoizedInline {
		in.Inline, in.Request.Source.Inline = inlineDigest(req.Source.Inline), ""
	}
	if ch != nil {
		in.Chart = ChartDigest(ch)
	}
	raw, err := json.Marshal(in)
	if err != nil {
		return "", fmt.Errorf("encoding the inputs of service %q: %w", req.Service, err)
	}
	sum := sha256.Sum256(raw)
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}

// ChartDigest is a digest of a loaded chart's content: its metadata, lock, values, schema,
// templates and files, and those of its subcharts. Modification times are left out, so the
// same chart packaged twice has one digest.
func ChartDigest(ch *chart.Chart) string {
	h := sha256.New()
	writeChart(h, ch)
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

func writeChart(h hash.Hash, ch *chart.Chart) {
	section := func(name string, data []byte) {
		fmt.Fprintf(h, "%s %d\n", name, len(data))
		h.Write(data)
	}
	// Metadata, lock and values are plain data: their JSON is canonical (sorted map keys).
	meta, _ := json.Marshal(ch.Metadata)
	lock, _ := json.Marshal(ch.Lock)
	values, _ := json.Marshal(ch.Values)
	section("metadata", meta)
	section("lock", lock)
	section("values", values)
	section("schema", ch.Schema)
	for _, f := range sortedFiles(ch.Templates) {
		section("template "+f.Name, f.Data)
	}
	for _, f := range sortedFiles(ch.Files) {
		section("file "+f.Name, f.Data)
	}
	deps := append([]*chart.Chart(nil), ch.Dependencies()...)
	sort.SliceStable(deps, func(i, j int) bool {
		if deps[i].Name() != deps[j].Name() {
			return deps[i].Name() < deps[j].Name()
		}
		return version(deps[i]) < version(deps[j])
	})
	for _, d := range deps {
		section("subchart "+d.Name()+" "+version(d), nil)
		writeChart(h, d)
	}
	section("end", nil)
}

func version(ch *chart.Chart) string {
	if ch.Metadata == nil {
		return ""
	}
	return ch.Metadata.Version
}

func sortedFiles(files []*common.File) []*common.File {
	out := append([]*common.File(nil), files...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
