package image

import (
	"fmt"
	"strconv"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Metadata is what the image says about itself, in its config's labels and the index's
// annotations (the org.opencontainers.image.* keys).
type Metadata struct {
	// Created is the image's creation time: SOURCE_DATE_EPOCH, the commit's time.
	Created time.Time
	// Version is the release version ("v0.3.0"), Revision the commit, Source the repository.
	Version  string
	Revision string
	Source   string
}

func (m Metadata) annotations() map[string]string {
	a := map[string]string{
		"org.opencontainers.image.title":       "holdfast",
		"org.opencontainers.image.description": "Keeps a fleet of Kubernetes clusters true to centrally declared services",
		"org.opencontainers.image.created":     m.Created.UTC().Format(time.RFC3339),
	}
	for k, v := range map[string]string{
		"org.opencontainers.image.version":  m.Version,
		"org.opencontainers.image.revision": m.Revision,
		"org.opencontainers.image.source":   m.Source,
	} {
		if v != "" {
			a[k] = v
		}
	}
	return a
}

// Image assembles the image of one platform around the binary at path bin.
func Image(p v1.Platform, bin string, meta Metadata) (v1.Image, error) {
	base, err := layer(baseEntries())
	if err != nil {
		return nil, err
	}
	binary, err := layer([]entry{{name: BinaryPath[1:], mode: 0o755, fromFile: bin}})
	if err != nil {
		return nil, err
	}
	created := v1.Time{Time: meta.Created.UTC()}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err = mutate.Append(img,
		mutate.Addendum{Layer: base, History: v1.History{Created: created, CreatedBy: "holdfast image: CA roots, users, /tmp", Comment: "go-containerregistry"}},
		mutate.Addendum{Layer: binary, History: v1.History{Created: created, CreatedBy: "holdfast image: " + BinaryPath, Comment: "go build -trimpath"}},
	)
	if err != nil {
		return nil, fmt.Errorf("adding the layers: %w", err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("reading the image config: %w", err)
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.Variant, cf.OSVersion = p.OS, p.Architecture, p.Variant, ""
	cf.Created = created
	user := strconv.Itoa(UID)
	cf.Config = v1.Config{
		User:       user + ":" + user,
		Entrypoint: []string{BinaryPath},
		Cmd:        []string{"controller"},
		WorkingDir: "/",
		Env: []string{
			"PATH=/usr/local/bin:/usr/bin:/bin",
			"HOME=" + homeDir,
			"SSL_CERT_FILE=" + CAPath,
		},
		Labels: meta.annotations(),
	}
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		return nil, fmt.Errorf("setting the image config: %w", err)
	}
	return img, nil
}

// Index gathers the images of every platform under one OCI image index, in the order given.
func Index(images []v1.Image, meta Metadata) (v1.ImageIndex, error) {
	adds := make([]mutate.IndexAddendum, 0, len(images))
	for _, img := range images {
		cf, err := img.ConfigFile()
		if err != nil {
			return nil, fmt.Errorf("reading an image config: %w", err)
		}
		adds = append(adds, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: cf.Platform()}})
	}
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	idx = mutate.AppendManifests(idx, adds...)
	return mutate.Annotations(idx, meta.annotations()).(v1.ImageIndex), nil
}
