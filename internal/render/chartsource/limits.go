package chartsource

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	helmregistry "helm.sh/helm/v4/pkg/registry"
)

const (
	// DefaultMaxArchiveSize is the default Options.MaxArchiveSize: the largest
	// chart archive (HTTP) or chart layer (OCI), and the largest index.yaml,
	// that a Source downloads.
	DefaultMaxArchiveSize int64 = 64 << 20
	// DefaultCacheBytes is the default Options.CacheBytes: how many bytes of
	// chart archives the cache holds in all.
	DefaultCacheBytes int64 = 256 << 20

	// maxMetadataSize bounds an OCI manifest, index or chart config. They are
	// a few kilobytes of JSON; 4 MiB is what oras-go allows for manifests.
	maxMetadataSize int64 = 4 << 20
)

// pulledMediaTypes are what a chart pull downloads; Helm skips every other
// layer (provenance, foreign layers) without reading it.
var pulledMediaTypes = []string{
	ocispec.MediaTypeImageIndex,
	ocispec.MediaTypeImageManifest,
	helmregistry.ConfigMediaType,
	helmregistry.ChartLayerMediaType,
	helmregistry.LegacyChartLayerMediaType,
}

func isChartLayer(mediaType string) bool {
	return mediaType == helmregistry.ChartLayerMediaType || mediaType == helmregistry.LegacyChartLayerMediaType
}

// registryBudget is how many response bytes one registry operation (a pull
// or a tag listing) may read over all its requests: a chart's worth plus its
// manifests.
func (s *Source) registryBudget() int64 { return s.opts.MaxArchiveSize + maxMetadataSize }

// pullLimits checks the descriptors of an OCI pull before they are
// downloaded. oras-go allocates a blob's declared size up front and then
// reads it into memory, so a manifest declaring a 1 GiB layer must be refused
// from the manifest alone. What a registry sends beyond what it declared is
// cut off by oras-go's verifying reader and, over all responses, by
// limitTransport.
type pullLimits struct {
	archive  int64 // largest chart layer
	total    int64 // all descriptors of one pull together
	declared atomic.Int64
	refused  atomic.Pointer[string]
}

// preCopy is Helm's GenericPullOptions.PreCopy: oras-go calls it before it
// fetches a layer or config (and after it fetched a manifest, which oras-go
// already bounds to 4 MiB).
func (p *pullLimits) preCopy(_ context.Context, d ocispec.Descriptor) error {
	if !slices.Contains(pulledMediaTypes, d.MediaType) {
		return nil // Helm skips it unread
	}
	kind, limit := "manifest", maxMetadataSize
	switch {
	case isChartLayer(d.MediaType):
		kind, limit = "chart layer", p.archive
	case d.MediaType == helmregistry.ConfigMediaType:
		kind = "chart config"
	}
	if d.Size < 0 {
		return p.refuse(fmt.Sprintf("its manifest declares a %s of negative size", kind))
	}
	if d.Size > limit {
		return p.refuse(fmt.Sprintf("its manifest declares a %s of %s, over the %s limit", kind, byteSize(d.Size), byteSize(limit)))
	}
	if total := p.declared.Add(d.Size); total > p.total {
		return p.refuse(fmt.Sprintf("its manifest declares %s of layers and manifests in all, over the %s limit", byteSize(total), byteSize(p.total)))
	}
	return nil
}

func (p *pullLimits) refuse(why string) error {
	p.refused.CompareAndSwap(nil, &why)
	return errDownloadLimit
}

// reason says why the pull was refused, or "" if it was not.
func (p *pullLimits) reason() string {
	if r := p.refused.Load(); r != nil {
		return *r
	}
	return ""
}

// byteSize formats n for a message: "64 MiB" when it is a whole number of
// KiB, MiB or GiB, "1234 bytes" otherwise.
func byteSize(n int64) string {
	for _, u := range []struct {
		size int64
		name string
	}{{1 << 30, "GiB"}, {1 << 20, "MiB"}, {1 << 10, "KiB"}} {
		if n >= u.size && n%u.size == 0 {
			return fmt.Sprintf("%d %s", n/u.size, u.name)
		}
	}
	return fmt.Sprintf("%d bytes", n)
}
