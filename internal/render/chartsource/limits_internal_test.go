package chartsource

import (
	"context"
	"strings"
	"testing"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	helmregistry "helm.sh/helm/v4/pkg/registry"
)

func TestPullLimitsPreCopy(t *testing.T) {
	const mib = 1 << 20
	desc := func(mediaType string, size int64) ocispec.Descriptor {
		return ocispec.Descriptor{MediaType: mediaType, Size: size}
	}
	tests := []struct {
		name  string
		descs []ocispec.Descriptor
		want  string // "" when every descriptor passes
	}{
		{"a small chart", []ocispec.Descriptor{
			desc(helmregistry.ConfigMediaType, 300),
			desc(helmregistry.ChartLayerMediaType, 5*mib),
			desc(ocispec.MediaTypeImageManifest, 700),
		}, ""},
		{"a layer exactly at the limit", []ocispec.Descriptor{desc(helmregistry.ChartLayerMediaType, 64*mib)}, ""},
		{"a layer over the limit", []ocispec.Descriptor{desc(helmregistry.ChartLayerMediaType, 64*mib+1)}, "chart layer of 67108865 bytes, over the 64 MiB limit"},
		{"a legacy layer over the limit", []ocispec.Descriptor{desc(helmregistry.LegacyChartLayerMediaType, 1<<30)}, "chart layer of 1 GiB"},
		{"a config over 4 MiB", []ocispec.Descriptor{desc(helmregistry.ConfigMediaType, 5*mib)}, "chart config of 5 MiB, over the 4 MiB limit"},
		{"a manifest over 4 MiB", []ocispec.Descriptor{desc(ocispec.MediaTypeImageManifest, 5*mib)}, "manifest of 5 MiB"},
		{"a negative size", []ocispec.Descriptor{desc(helmregistry.ChartLayerMediaType, -1)}, "negative size"},
		{"layers over the limit together", []ocispec.Descriptor{
			desc(helmregistry.ChartLayerMediaType, 40*mib),
			desc(helmregistry.ChartLayerMediaType, 40*mib),
		}, "80 MiB of layers and manifests in all, over the 68 MiB limit"},
		// Helm skips a provenance layer unread, so its size does not matter.
		{"a skipped layer of any size", []ocispec.Descriptor{desc(helmregistry.ProvLayerMediaType, 1<<40)}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &pullLimits{archive: 64 * mib, total: 68 * mib}
			var err error
			for _, d := range tt.descs {
				if err = p.preCopy(context.Background(), d); err != nil {
					break
				}
			}
			if tt.want == "" {
				if err != nil || p.reason() != "" {
					t.Fatalf("refused: %v %s", err, p.reason())
				}
				return
			}
			if err != errDownloadLimit || !strings.Contains(p.reason(), tt.want) {
				t.Errorf("err = %v, reason %q; want errDownloadLimit and %q", err, p.reason(), tt.want)
			}
		})
	}
}

func TestByteSize(t *testing.T) {
	for n, want := range map[int64]string{
		64 << 20:      "64 MiB",
		1 << 30:       "1 GiB",
		256 << 10:     "256 KiB",
		(4 << 20) + 1: "4194305 bytes",
		0:             "0 bytes",
	} {
		if got := byteSize(n); got != want {
			t.Errorf("byteSize(%d) = %q, want %q", n, got, want)
		}
	}
}
