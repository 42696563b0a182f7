// Command image builds Holdfast's multi-platform container image without a container runtime
// (see package internal/image) and writes, under -out:
//
//	oci/                        the OCI image layout of the index (crane push --index, skopeo, containerd)
//	holdfast-<os>-<arch>.tar    the image of this machine's platform, for docker load / kind load image-archive
//	binaries/                   the static binary of each platform
//
// `make image` runs it with the version stamp and SOURCE_DATE_EPOCH taken from git.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"holdfast.dev/holdfast/internal/image"
)

type options struct {
	out, repository, tag, platforms, ldflags, source, revision string
}

func main() {
	var o options
	flag.StringVar(&o.out, "out", "bin/image", "output directory")
	flag.StringVar(&o.repository, "repository", "ghcr.io/holdfast-dev/holdfast", "image repository the layout and tarball name")
	flag.StringVar(&o.tag, "tag", "", "image tag, and the version label (required)")
	flag.StringVar(&o.platforms, "platforms", "linux/amd64,linux/arm64", "comma-separated os/arch[/variant] list")
	flag.StringVar(&o.ldflags, "ldflags", "", "linker flags added to the reproducible ones (the version stamp)")
	flag.StringVar(&o.revision, "revision", "", "commit the image is built from, for its labels")
	flag.StringVar(&o.source, "source", "", "repository URL, for the image's labels")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	if err := run(ctx, log, o); err != nil {
		log.Error("Building the image failed", "err", err)
		stop()
		os.Exit(1)
	}
}

func run(ctx context.Context, log *slog.Logger, o options) error {
	if o.tag == "" {
		return fmt.Errorf("-tag is required")
	}
	ref, err := name.NewTag(o.repository + ":" + o.tag)
	if err != nil {
		return fmt.Errorf("image reference %s:%s: %w", o.repository, o.tag, err)
	}
	platforms, err := parsePlatforms(o.platforms)
	if err != nil {
		return err
	}
	created, err := sourceDateEpoch()
	if err != nil {
		return err
	}
	began := time.Now()
	built, err := image.Build(ctx, image.Options{
		Compile:   image.Compile{Package: "./cmd/holdfast", LDFlags: o.ldflags},
		Platforms: platforms,
		Metadata:  image.Metadata{Created: created, Version: o.tag, Revision: o.revision, Source: o.source},
		BinDir:    filepath.Join(o.out, "binaries"),
	})
	if err != nil {
		return err
	}
	layoutDir := filepath.Join(o.out, "oci")
	if err := image.WriteLayout(layoutDir, built.Index, ref); err != nil {
		return err
	}
	digest, err := built.Index.Digest()
	if err != nil {
		return fmt.Errorf("computing the index digest: %w", err)
	}
	log.Info("Wrote the OCI image layout", "dir", layoutDir, "ref", ref.String(), "digest", digest.String(),
		"platforms", o.platforms, "took", time.Since(began).Round(time.Millisecond))

	host := v1.Platform{OS: "linux", Architecture: runtime.GOARCH}
	img, err := built.Image(host)
	if err != nil {
		log.Info("No image for this machine's platform; no tarball written", "platform", host.String())
		return nil
	}
	tarPath := filepath.Join(o.out, image.BinaryName(host)+".tar")
	if err := image.WriteTarball(tarPath, img, ref); err != nil {
		return err
	}
	log.Info("Wrote the image tarball", "path", tarPath, "ref", ref.String())
	return nil
}

func parsePlatforms(s string) ([]v1.Platform, error) {
	var out []v1.Platform
	for _, f := range strings.Split(s, ",") {
		p, err := v1.ParsePlatform(strings.TrimSpace(f))
		if err != nil || p.OS == "" || p.Architecture == "" {
			return nil, fmt.Errorf("platform %q: want os/arch[/variant]", f)
		}
		out = append(out, *p)
	}
	return out, nil
}

// sourceDateEpoch reads SOURCE_DATE_EPOCH (reproducible-builds.org), the Unix epoch when unset.
func sourceDateEpoch() (time.Time, error) {
	s := os.Getenv("SOURCE_DATE_EPOCH")
	if s == "" {
		return time.Unix(0, 0).UTC(), nil
	}
	sec, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH %q: %w", s, err)
	}
	return time.Unix(sec, 0).UTC(), nil
}
