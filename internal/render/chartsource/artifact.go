package chartsource

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"path"
	"strings"

	"helm.sh/helm/v4/pkg/chart/loader/archive"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"

	"holdfast.dev/holdfast/internal/render"
)

// Artifact files: a tar.gz pinned by digest, from a Flux source's artifact URL (http(s)://) or
// an OCI registry (oci://). They share the chart archives' transports, egress policy, byte
// budget, download limit and cache: an artifact is cached, compressed, under its digest and
// the credentials it was read with, so a cluster still pinned to an older digest renders it
// without a download while the digest is in the cache.

// artifactKey is the cache key of a verified artifact: its digest, scoped like a chart by the
// URL and credentials it was read with, so that content read with one identity is never served
// to another.
func artifactKey(a render.Artifact) string {
	return "artifact\x00" + scope(artifactHelm(a)) + "\x00" + a.Digest
}

// artifactHelm is a as the chart request the shared transport and HTTP code take.
func artifactHelm(a render.Artifact) render.Helm {
	return render.Helm{RepoURL: a.URL, Username: a.Username, Password: a.Password,
		PlainHTTP: a.PlainHTTP, InsecureSkipTLSVerify: a.InsecureSkipTLSVerify}
}

// ArtifactFiles returns every file of the artifact a pins, by slash-separated path from the
// archive's root, downloading it unless it is cached. The download must have a's digest;
// otherwise it is refused with reason ArtifactDigestMismatch. a.Path is not applied: a
// Kustomize overlay may use files outside it.
func (s *Source) ArtifactFiles(ctx context.Context, a render.Artifact) (map[string][]byte, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.opts.Timeout)
		defer cancel()
	}
	ref := render.ArtifactRef(a)
	if a.InsecureSkipTLSVerify && s.opts.ForbidInsecureSkipTLSVerify {
		return nil, insecureForbidden(ref)
	}
	if _, err := parseDigest(a.Digest); err != nil {
		return nil, &render.Error{Reason: render.ReasonInvalidArtifact, Object: ref, Message: err.Error()}
	}
	u, err := url.Parse(a.URL)
	if err != nil {
		return nil, &render.Error{Reason: render.ReasonInvalidArtifact, Object: ref, Message: "the URL is not a URL"}
	}
	if u.User != nil {
		return nil, &render.Error{Reason: render.ReasonInvalidArtifact, Object: ref, Message: "the URL contains credentials; give them in a Secret instead"}
	}
	var fetch func() ([]byte, error)
	switch u.Scheme {
	case "http", "https":
		fetch = func() ([]byte, error) { return s.fetchHTTPArtifact(ctx, a, ref) }
	case "oci":
		fetch = func() ([]byte, error) { return s.pullArtifact(ctx, a, ref) }
	default:
		return nil, &render.Error{Reason: render.ReasonInvalidArtifact, Object: ref,
			Message: fmt.Sprintf("URL scheme %q is not supported; use http://, https:// or oci://", u.Scheme)}
	}
	data, err := s.cached(ctx, artifactKey(a), fetch)
	if err != nil {
		return nil, err
	}
	return extract(ref, data, s.opts.extractLimits())
}

// fetchHTTPArtifact downloads a Flux artifact and checks the tarball's sha256 against the
// pinned digest.
func (s *Source) fetchHTTPArtifact(ctx context.Context, a render.Artifact, ref string) ([]byte, error) {
	data, err := s.get(ctx, artifactHelm(a), ref, a.URL, "artifact")
	if err != nil {
		return nil, asArtifactError(err)
	}
	sum := sha256.Sum256(data)
	if got := "sha256:" + hex.EncodeToString(sum[:]); got != a.Digest {
		return nil, digestMismatch(ref, a.Digest, got)
	}
	return data, nil
}

// asArtifactError words a chart-download failure for an artifact: a server that failed or
// answered that it has no such file is retried (a Flux source replaces its artifacts; the
// template controller pins the new one), while the controller's refusals stay as they are.
func asArtifactError(err error) error {
	var re *render.Error
	if !errors.As(err, &re) {
		return err
	}
	out := *re
	switch re.Reason {
	case render.ReasonChartFetchFailed, render.ReasonChartNotFound:
		out.Reason = render.ReasonArtifactFetchFailed
	case render.ReasonInvalidSource:
		out.Reason = render.ReasonInvalidArtifact
	}
	return &out
}

func digestMismatch(ref, want, got string) error {
	return &render.Error{Reason: render.ReasonArtifactDigestMismatch, Object: ref, Message: fmt.Sprintf(
		"the download does not match the pinned digest: expected %s, got %s; it is refused. The source's artifact changed after it was published, or something between the controller and the server altered it", want, got)}
}

// parseDigest checks that d is "sha256:" and 64 lowercase hex digits and returns the hex.
func parseDigest(d string) (string, error) {
	hexPart, ok := strings.CutPrefix(d, "sha256:")
	if !ok || len(hexPart) != 64 || strings.Trim(hexPart, "0123456789abcdef") != "" {
		return "", fmt.Errorf("digest %q is not sha256:<64 hex digits>", d)
	}
	return hexPart, nil
}

// loadArtifactChart loads the chart directory at h.Artifact.Path.
func (s *Source) loadArtifactChart(ctx context.Context, h render.Helm) (*chart.Chart, error) {
	a := *h.Artifact
	ref := render.ChartRef(h)
	files, err := s.ArtifactFiles(ctx, a)
	if err != nil {
		return nil, err
	}
	var buffered []*archive.BufferedFile
	for name, data := range under(files, a.Path) {
		buffered = append(buffered, &archive.BufferedFile{Name: name, Data: data})
	}
	if len(buffered) == 0 {
		return nil, &render.Error{Reason: render.ReasonInvalidArtifact, Object: ref, Message: "the artifact has no files at that path; fix spec.artifact.path"}
	}
	c, err := loader.LoadFiles(buffered)
	if err != nil {
		return nil, &render.Error{Reason: render.ReasonInvalidArtifact, Object: ref, Message: "not a valid Helm chart directory: " + err.Error(), Err: err}
	}
	return c, nil
}

// under returns the files of files inside dir ("" or "." is the root), named relative to it.
func under(files map[string][]byte, dir string) map[string][]byte {
	dir = path.Clean("/" + dir)
	if dir == "/" {
		return files
	}
	out := map[string][]byte{}
	for name, data := range files {
		if rel, ok := strings.CutPrefix("/"+name, dir+"/"); ok {
			out[rel] = data
		}
	}
	return out
}
