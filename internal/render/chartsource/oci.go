package chartsource

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/Masterminds/semver/v3"
	helmregistry "helm.sh/helm/v4/pkg/registry"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/errdef"
	"oras.land/oras-go/v2/registry/remote/auth"
	"oras.land/oras-go/v2/registry/remote/errcode"

	"holdfast.dev/holdfast/internal/render"
)

// loadFromRegistry resolves h.Version among the registry's tags for the
// chart and pulls it with Helm's registry client.
func (s *Source) loadFromRegistry(ctx context.Context, h render.Helm, ref string) ([]byte, string, error) {
	repository := strings.TrimSuffix(strings.TrimPrefix(h.RepoURL, "oci://"), "/") + "/" + h.Chart
	version := strings.TrimPrefix(h.Version, "v")
	if exactVersion(h.Version) {
		if data, ok := s.archives.get(archiveKey(h, version)); ok {
			return data, version, nil
		}
	} else {
		tags, err := s.listTags(ctx, h, ref, repository)
		if err != nil {
			return nil, "", err
		}
		if len(tags) == 0 {
			return nil, "", notFound(ref, fmt.Sprintf("the registry has no versions of chart %q", h.Chart), nil)
		}
		if _, err := semver.NewConstraint(orStar(h.Version)); err != nil {
			return nil, "", invalid(ref, fmt.Sprintf("version %q is neither a version nor a semver range: %v", h.Version, err))
		}
		version, err = helmregistry.GetTagMatchingVersionOrConstraint(tags, h.Version)
		if err != nil {
			return nil, "", notFound(ref, fmt.Sprintf("no version of chart %q matches %q; %s", h.Chart, h.Version, listVersions(tags)), err)
		}
	}
	data, err := s.cached(ctx, archiveKey(h, version), func() ([]byte, error) {
		return s.pull(ctx, h, ref, repository, version)
	})
	if err != nil {
		return nil, "", err
	}
	return data, version, nil
}

// pull downloads the chart layer of one version. It is Helm's Client.Pull
// with the size checks Pull has no hook for: a chart layer over
// MaxArchiveSize, or a manifest or config over 4 MiB, is refused from its
// declared size before a byte of it is read, and the whole pull reads at most
// registryBudget bytes whatever the registry sends.
func (s *Source) pull(ctx context.Context, h render.Helm, ref, repository, version string) ([]byte, error) {
	budget := newByteBudget(s.registryBudget())
	client, err := s.registryClient(ctx, h, budget)
	if err != nil {
		return nil, fetchFailed(ref, "cannot create a registry client: "+err.Error(), err)
	}
	limits := &pullLimits{archive: s.opts.MaxArchiveSize, total: s.registryBudget()}
	generic := client.Generic()
	res, err := generic.PullGeneric(repository+":"+strings.ReplaceAll(version, "+", "_"), helmregistry.GenericPullOptions{
		AllowedMediaTypes: pulledMediaTypes,
		PreCopy:           limits.preCopy,
	})
	if err != nil {
		return nil, s.pullError(ctx, ref, version, err, limits, budget)
	}
	for _, d := range res.Descriptors {
		if !isChartLayer(d.MediaType) {
			continue
		}
		data, err := generic.GetDescriptorData(res.MemoryStore, d)
		if err != nil {
			return nil, fetchFailed(ref, fmt.Sprintf("reading the chart layer of version %s failed: %v", version, err), err)
		}
		if len(data) > 0 {
			return data, nil
		}
	}
	return nil, invalid(ref, fmt.Sprintf("version %s in the registry holds no chart layer", version))
}

// pullError explains a failed pull. Over a limit it names the limit, never
// what the registry sent.
func (s *Source) pullError(ctx context.Context, ref, version string, err error, limits *pullLimits, budget *byteBudget) error {
	switch {
	case limits.reason() != "":
		return invalid(ref, fmt.Sprintf("version %s was not downloaded: %s; %s", version, limits.reason(), shrinkHint))
	case budget.exceeded.Load():
		return invalid(ref, fmt.Sprintf("the registry sent or announced more than %s for version %s (the %s chart limit plus %s of manifests); %s",
			byteSize(budget.limit), version, byteSize(s.opts.MaxArchiveSize), byteSize(maxMetadataSize), shrinkHint))
	case errors.Is(err, errdef.ErrSizeExceedsLimit):
		return invalid(ref, fmt.Sprintf("version %s was not downloaded: its manifest is larger than the %s limit; check that repoURL and chart name a Helm chart", version, byteSize(maxMetadataSize)))
	case errors.Is(err, content.ErrTrailingData) || errors.Is(err, content.ErrMismatchedDigest):
		return fetchFailed(ref, fmt.Sprintf("the registry sent a blob of version %s that does not match its manifest (more bytes than declared, or other bytes); it was cut off and discarded", version), err)
	}
	return registryError(ctx, ref, fmt.Sprintf("version %s", version), err)
}

// shrinkHint says what to do about a chart over the limit.
const shrinkHint = "Holdfast does not download larger charts, to bound the controller's memory: make the chart smaller (move large files out of it) or check that repoURL and chart name the chart you meant"

func orStar(v string) string {
	if v == "" {
		return "*"
	}
	return v
}

// listTags returns the chart's semver tags, newest first, reused for
// Options.IndexTTL.
func (s *Source) listTags(ctx context.Context, h render.Helm, ref, repository string) ([]string, error) {
	key := scope(h) + "\x00" + h.Chart
	if tags, ok := s.tags.get(key); ok {
		return tags, nil
	}
	v, err := s.lookups.do(ctx, "tags\x00"+key, func() (any, error) {
		budget := newByteBudget(s.registryBudget())
		client, err := s.registryClient(ctx, h, budget)
		if err != nil {
			return nil, fetchFailed(ref, "cannot create a registry client: "+err.Error(), err)
		}
		tags, err := client.Tags(repository)
		if err != nil {
			if budget.exceeded.Load() {
				return nil, invalid(ref, fmt.Sprintf("the registry's tag list for chart %q is larger than %s; remove old tags or pin an exact version, which needs no tag list", h.Chart, byteSize(budget.limit)))
			}
			return nil, registryError(ctx, ref, "the tag list", err)
		}
		s.tags.add(key, tags, tagsSize(tags))
		return tags, nil
	})
	if err != nil {
		return nil, err
	}
	return v.([]string), nil
}

// tagsSize is roughly what a tag list takes in memory.
func tagsSize(tags []string) int64 {
	n := int64(len(tags)) * 16 // string headers
	for _, t := range tags {
		n += int64(len(t))
	}
	return n
}

// registryClient returns a Helm registry client bound to ctx that uses only
// the credentials in h (never the controller's Docker or Helm config) and
// reads at most budget bytes of responses.
func (s *Source) registryClient(ctx context.Context, h render.Helm, budget *byteBudget) (*helmregistry.Client, error) {
	httpClient := &http.Client{Transport: ctxTransport{ctx: ctx, base: limitTransport{base: s.transport(h), budget: budget}}}
	authorizer := auth.Client{Client: httpClient, Cache: auth.NewCache()}
	authorizer.SetUserAgent("holdfast")
	if h.Username != "" || h.Password != "" {
		host := strings.SplitN(strings.TrimPrefix(h.RepoURL, "oci://"), "/", 2)[0]
		authorizer.Credential = auth.StaticCredential(host, auth.Credential{Username: h.Username, Password: h.Password})
	}
	opts := []helmregistry.ClientOption{
		helmregistry.ClientOptHTTPClient(httpClient),
		helmregistry.ClientOptAuthorizer(authorizer),
		helmregistry.ClientOptWriter(io.Discard),
		// Never read or written: the authorizer above supplies credentials.
		helmregistry.ClientOptCredentialsFile(filepath.Join(os.TempDir(), "holdfast-unused-registry-config.json")),
	}
	if h.PlainHTTP {
		opts = append(opts, helmregistry.ClientOptPlainHTTP())
	}
	return helmregistry.NewClient(opts...)
}

// registryError classifies a registry failure: the registry answered that
// the chart or version does not exist or may not be read (ChartNotFound), or
// it failed or did not answer (ChartFetchFailed, retried).
func registryError(ctx context.Context, ref, what string, err error) error {
	if refused := policyError(ref, what, err); refused != nil {
		return refused
	}
	if ctx.Err() != nil {
		return fetchFailed(ref, fmt.Sprintf("fetching %s timed out or was cancelled", what), ctx.Err())
	}
	var resp *errcode.ErrorResponse
	if errors.As(err, &resp) {
		switch {
		case resp.StatusCode == http.StatusNotFound:
			return notFound(ref, fmt.Sprintf("the registry has no %s (HTTP 404)", what), err)
		case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
			return notFound(ref, fmt.Sprintf("the registry refused access to %s (HTTP %d); check the credentials", what, resp.StatusCode), err)
		case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
			return fetchFailed(ref, fmt.Sprintf("the registry answered HTTP %d for %s", resp.StatusCode, what), err)
		}
	}
	if errors.Is(err, errdef.ErrNotFound) {
		return notFound(ref, fmt.Sprintf("the registry has no %s", what), err)
	}
	return fetchFailed(ref, fmt.Sprintf("fetching %s from the registry failed: %v", what, err), err)
}
