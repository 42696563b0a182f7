package image

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// Platforms are the platforms `make image` builds.
var Platforms = []v1.Platform{{OS: "linux", Architecture: "amd64"}, {OS: "linux", Architecture: "arm64"}}

// Options describe an image build.
type Options struct {
	Compile   Compile
	Platforms []v1.Platform
	Metadata  Metadata
	// BinDir receives the binary of each platform (holdfast-<os>-<arch>). The image's layers
	// read them when they are written, so they must stay until then.
	BinDir string
}

// Built is the result of Build.
type Built struct {
	Index  v1.ImageIndex
	Images []v1.Image // in the order of Options.Platforms
}

// Image returns the image of platform p.
func (b Built) Image(p v1.Platform) (v1.Image, error) {
	for _, img := range b.Images {
		cf, err := img.ConfigFile()
		if err != nil {
			return nil, fmt.Errorf("reading an image config: %w", err)
		}
		if cf.Platform().Equals(p) {
			return img, nil
		}
	}
	return nil, fmt.Errorf("no image for %s was built", p.String())
}

// Build compiles the binary for every platform and assembles the image index.
func Build(ctx context.Context, o Options) (Built, error) {
	if len(o.Platforms) == 0 {
		return Built{}, fmt.Errorf("no platform to build for")
	}
	if err := os.MkdirAll(o.BinDir, 0o755); err != nil {
		return Built{}, fmt.Errorf("creating %s: %w", o.BinDir, err)
	}
	var built Built
	for _, p := range o.Platforms {
		bin := filepath.Join(o.BinDir, BinaryName(p))
		if err := o.Compile.Binary(ctx, p, bin); err != nil {
			return Built{}, err
		}
		img, err := Image(p, bin, o.Metadata)
		if err != nil {
			return Built{}, fmt.Errorf("assembling the %s image: %w", p.String(), err)
		}
		built.Images = append(built.Images, img)
	}
	idx, err := Index(built.Images, o.Metadata)
	if err != nil {
		return Built{}, err
	}
	built.Index = idx
	return built, nil
}

// BinaryName is the file name of a platform's binary: holdfast-linux-arm64.
func BinaryName(p v1.Platform) string {
	n := "holdfast-" + p.OS + "-" + p.Architecture
	if p.Variant != "" {
		n += "-" + p.Variant
	}
	return n
}
