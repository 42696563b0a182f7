package chartsource

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"holdfast.dev/holdfast/internal/render"
)

// FluxContentMediaType is the layer media type `flux push artifact` writes.
const FluxContentMediaType = "application/vnd.cncf.flux.content.v1.tar+gzip"

// artifactLayerTypes are the layers an OCI artifact's files may be in: Flux's, and a generic
// gzip-compressed tar layer.
var artifactLayerTypes = []types.MediaType{
	FluxContentMediaType,
	types.OCILayer,
	types.DockerLayer,
	"application/tar+gzip",
}

// ResolveArtifact returns the manifest digest an oci:// URL's tag points at now, or the
// digest the URL names (oci://host/repo@sha256:...) without asking the registry.
func (s *Source) ResolveArtifact(ctx context.Context, a render.Artifact) (string, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.opts.Timeout)
		defer cancel()
	}
	ref := "artifact " + a.URL
	if a.InsecureSkipTLSVerify && s.opts.ForbidInsecureSkipTLSVerify {
		return "", insecureForbidden(ref)
	}
	r, err := ociReference(a)
	if err != nil {
		return "", &render.Error{Reason: render.ReasonInvalidArtifact, Object: ref, Message: err.Error()}
	}
	if d, ok := r.(name.Digest); ok {
		return d.DigestStr(), nil
	}
	budget := newByteBudget(maxMetadataSize)
	desc, err := remote.Head(r, s.remoteOptions(ctx, a, budget)...)
	if err != nil {
		return "", s.registryArtifactError(ctx, ref, "the tag", err, budget)
	}
	return desc.Digest.String(), nil
}

// pullArtifact pulls the manifest a.Digest pins and its one tar.gz layer. go-containerregistry
// checks the manifest and the layer against their digests; a layer declaring more than
// MaxArchiveSize is refused from the manifest, and the whole pull reads at most
// registryBudget bytes.
func (s *Source) pullArtifact(ctx context.Context, a render.Artifact, ref string) ([]byte, error) {
	r, err := ociReference(a)
	if err != nil {
		return nil, &render.Error{Reason: render.ReasonInvalidArtifact, Object: ref, Message: err.Error()}
	}
	pinned := r.Context().Digest(a.Digest)
	budget := newByteBudget(s.registryBudget())
	img, err := remote.Image(pinned, s.remoteOptions(ctx, a, budget)...)
	if err != nil {
		return nil, s.registryArtifactError(ctx, ref, "the manifest", err, budget)
	}
	manifest, err := img.Manifest()
	if err != nil {
		return nil, s.registryArtifactError(ctx, ref, "the manifest", err, budget)
	}
	for _, l := range manifest.Layers {
		if !isArtifactLayer(l.MediaType) {
			continue
		}
		if l.Size < 0 || l.Size > s.opts.MaxArchiveSize {
			return nil, &render.Error{Reason: render.ReasonInvalidArtifact, Object: ref, Message: fmt.Sprintf(
				"its manifest declares a layer of %s, over the %s limit; make the artifact smaller", byteSize(l.Size), byteSize(s.opts.MaxArchiveSize))}
		}
		layer, err := img.LayerByDigest(l.Digest)
		if err != nil {
			return nil, s.registryArtifactError(ctx, ref, "the layer", err, budget)
		}
		rc, err := layer.Compressed()
		if err != nil {
			return nil, s.registryArtifactError(ctx, ref, "the layer", err, budget)
		}
		data, err := io.ReadAll(rc)
		_ = rc.Close()
		if err != nil {
			return nil, s.registryArtifactError(ctx, ref, "the layer", err, budget)
		}
		return data, nil
	}
	return nil, &render.Error{Reason: render.ReasonInvalidArtifact, Object: ref, Message: fmt.Sprintf(
		"its manifest has no tar.gz layer (%s); push it with `flux push artifact`", FluxContentMediaType)}
}

func isArtifactLayer(mt types.MediaType) bool {
	for _, t := range artifactLayerTypes {
		if mt == t {
			return true
		}
	}
	return false
}

// ociReference parses an oci:// URL: a tag, a digest, or neither (the tag "latest").
func ociReference(a render.Artifact) (name.Reference, error) {
	rest, ok := strings.CutPrefix(a.URL, "oci://")
	if !ok {
		return nil, fmt.Errorf("URL %q is not an oci:// URL", a.URL)
	}
	var opts []name.Option
	if a.PlainHTTP {
		opts = append(opts, name.Insecure)
	}
	r, err := name.ParseReference(rest, opts...)
	if err != nil {
		return nil, fmt.Errorf("URL %q is not an OCI reference: %w", a.URL, err)
	}
	return r, nil
}

// remoteOptions are the go-containerregistry options of one registry operation: the shared
// transport (egress policy, TLS choice) bound to ctx and to budget, and only a's credentials,
// never the controller's Docker config.
func (s *Source) remoteOptions(ctx context.Context, a render.Artifact, budget *byteBudget) []remote.Option {
	h := artifactHelm(a)
	var auth authn.Authenticator = authn.Anonymous
	if a.Username != "" || a.Password != "" {
		auth = &authn.Basic{Username: a.Username, Password: a.Password}
	}
	return []remote.Option{
		remote.WithContext(ctx),
		remote.WithAuth(auth),
		remote.WithUserAgent("holdfast"),
		remote.WithRetryBackoff(remote.Backoff{Steps: 1}),
		remote.WithTransport(ctxTransport{ctx: ctx, base: limitTransport{base: s.transport(h), budget: budget}}),
	}
}

// registryArtifactError classifies a registry failure for an artifact: a digest that does not
// match, the controller's refusals, limits, and a registry that refused or failed (retried).
func (s *Source) registryArtifactError(ctx context.Context, ref, what string, err error, budget *byteBudget) error {
	if refused := policyError(ref, what, err); refused != nil {
		return refused
	}
	msg := err.Error()
	switch {
	case strings.Contains(msg, "does not match requested digest") || strings.Contains(msg, "error verifying"):
		return &render.Error{Reason: render.ReasonArtifactDigestMismatch, Object: ref, Err: err, Message: fmt.Sprintf(
			"%s does not match its digest, so it is refused: %v", what, err)}
	case budget.exceeded.Load() || errors.Is(err, errDownloadLimit):
		return &render.Error{Reason: render.ReasonInvalidArtifact, Object: ref, Err: err, Message: fmt.Sprintf(
			"the registry sent or announced more than %s; make the artifact smaller", byteSize(budget.limit))}
	case ctx.Err() != nil:
		return &render.Error{Reason: render.ReasonArtifactFetchFailed, Object: ref, Err: ctx.Err(), Message: fmt.Sprintf("fetching %s timed out or was cancelled", what)}
	}
	var te *transport.Error
	if errors.As(err, &te) && (te.StatusCode == http.StatusUnauthorized || te.StatusCode == http.StatusForbidden) {
		return &render.Error{Reason: render.ReasonArtifactFetchFailed, Object: ref, Err: err, Message: fmt.Sprintf(
			"the registry refused access to %s (HTTP %d); check the credentials", what, te.StatusCode)}
	}
	return &render.Error{Reason: render.ReasonArtifactFetchFailed, Object: ref, Err: err, Message: fmt.Sprintf("fetching %s from the registry failed: %v", what, err)}
}
