package image

import (
	"fmt"
	"os"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// Annotations naming the index entry of an OCI layout: the tag (what skopeo's oci:DIR:TAG
// and the OCI spec use) and the full reference (what containerd and nerdctl import it as).
const (
	refNameAnnotation   = "org.opencontainers.image.ref.name"
	imageNameAnnotation = "io.containerd.image.name"
)

// WriteLayout writes the index as an OCI image layout in dir, replacing whatever dir held, with
// the reference ref ("ghcr.io/org/holdfast:v0.3.0") as its name.
func WriteLayout(dir string, idx v1.ImageIndex, ref name.Tag) error {
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("removing the old layout %s: %w", dir, err)
	}
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return fmt.Errorf("creating the OCI layout %s: %w", dir, err)
	}
	if err := p.AppendIndex(idx, layout.WithAnnotations(map[string]string{
		refNameAnnotation: ref.TagStr(), imageNameAnnotation: ref.String(),
	})); err != nil {
		return fmt.Errorf("writing the image index into %s: %w", dir, err)
	}
	return nil
}

// WriteTarball writes one platform's image as a tarball that `docker load` and
// `kind load image-archive` read, tagged ref.
func WriteTarball(path string, img v1.Image, ref name.Tag) error {
	if err := tarball.WriteToFile(path, ref, img); err != nil {
		return fmt.Errorf("writing the image tarball %s: %w", path, err)
	}
	return nil
}
