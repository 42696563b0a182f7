package chartsource

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	repo "helm.sh/helm/v4/pkg/repo/v1"
	"sigs.k8s.io/yaml"

	"holdfast.dev/holdfast/internal/render"
)

// loadFromRepo resolves h.Version in the repository's index.yaml and returns
// the chart archive, verified against the index's digest when it has one.
func (s *Source) loadFromRepo(ctx context.Context, h render.Helm, ref string) ([]byte, string, error) {
	if exactVersion(h.Version) {
		if data, ok := s.archives.get(archiveKey(h, h.Version)); ok {
			return data, h.Version, nil
		}
	}
	index, err := s.index(ctx, h, ref)
	if err != nil {
		return nil, "", err
	}
	cv, err := index.Get(h.Chart, h.Version)
	if err != nil {
		vs, ok := index.Entries[h.Chart]
		if !ok || errors.Is(err, repo.ErrNoChartName) {
			return nil, "", notFound(ref, fmt.Sprintf("the repository has no chart named %q", h.Chart), err)
		}
		names := make([]string, 0, len(vs))
		for _, v := range vs {
			names = append(names, v.Version)
		}
		return nil, "", notFound(ref, fmt.Sprintf("no version of chart %q matches %q; %s", h.Chart, h.Version, listVersions(names)), err)
	}
	if len(cv.URLs) == 0 {
		return nil, "", notFound(ref, fmt.Sprintf("the index lists chart %q version %s without a download URL", h.Chart, cv.Version), nil)
	}
	data, err := s.cached(ctx, archiveKey(h, cv.Version), func() ([]byte, error) {
		archiveURL, err := repo.ResolveReferenceURL(h.RepoURL, cv.URLs[0])
		if err != nil {
			return nil, notFound(ref, fmt.Sprintf("the index has an invalid URL for version %s: %v", cv.Version, err), err)
		}
		data, err := s.get(ctx, h, ref, archiveURL, "chart archive "+cv.Version)
		if err != nil {
			return nil, err
		}
		if cv.Digest != "" {
			sum := sha256.Sum256(data)
			if got := hex.EncodeToString(sum[:]); !strings.EqualFold(got, strings.TrimPrefix(cv.Digest, "sha256:")) {
				return nil, fetchFailed(ref, fmt.Sprintf("downloaded archive of version %s has digest sha256:%s, the index says %s", cv.Version, got, cv.Digest), nil)
			}
		}
		return data, nil
	})
	if err != nil {
		return nil, "", err
	}
	return data, cv.Version, nil
}

// index returns the repository's parsed index, reused for Options.IndexTTL.
func (s *Source) index(ctx context.Context, h render.Helm, ref string) (*repo.IndexFile, error) {
	key := scope(h)
	if idx, ok := s.indexes.get(key); ok {
		return idx, nil
	}
	v, err := s.lookups.do(ctx, "index\x00"+key, func() (any, error) {
		indexURL := strings.TrimSuffix(h.RepoURL, "/") + "/index.yaml"
		data, err := s.get(ctx, h, ref, indexURL, indexYAML)
		if err != nil {
			return nil, err
		}
		idx := &repo.IndexFile{}
		if err := yaml.Unmarshal(data, idx); err != nil {
			return nil, fetchFailed(ref, "the repository's index.yaml does not parse: "+err.Error(), err)
		}
		if idx.APIVersion == "" {
			return nil, fetchFailed(ref, "the repository's index.yaml has no apiVersion; is repoURL a chart repository?", repo.ErrNoAPIVersion)
		}
		for name, vs := range idx.Entries {
			kept := vs[:0]
			for _, v := range vs {
				if v != nil && v.Metadata != nil {
					kept = append(kept, v)
				}
			}
			idx.Entries[name] = kept
		}
		idx.SortEntries()
		s.indexes.add(key, idx, int64(len(data)))
		return idx, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*repo.IndexFile), nil
}

const indexYAML = "index.yaml"

// get downloads what url points at. Basic auth is sent only to the
// repository's own host, as Helm does, so credentials never leak to a CDN
// the index points at.
func (s *Source) get(ctx context.Context, h render.Helm, ref, rawURL, what string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, invalid(ref, fmt.Sprintf("cannot request the %s: %v", what, err))
	}
	if repoURL, err := url.Parse(h.RepoURL); err == nil && req.URL.Host == repoURL.Host && (h.Username != "" || h.Password != "") {
		req.SetBasicAuth(h.Username, h.Password)
	}
	req.Header.Set("User-Agent", "holdfast")
	client := &http.Client{Transport: s.transport(h), CheckRedirect: redirectPolicy(what)}
	resp, err := client.Do(req)
	if err != nil {
		if refused := policyError(ref, "the "+what, err); refused != nil {
			return nil, refused
		}
		if ctx.Err() != nil {
			return nil, fetchFailed(ref, fmt.Sprintf("fetching the %s timed out or was cancelled", what), ctx.Err())
		}
		return nil, fetchFailed(ref, fmt.Sprintf("fetching the %s failed: %v", what, err), err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusOK:
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return nil, notFound(ref, fmt.Sprintf("the repository refused access to the %s (HTTP %d); check the credentials", what, resp.StatusCode), nil)
	case resp.StatusCode == http.StatusRequestTimeout || resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
		return nil, fetchFailed(ref, fmt.Sprintf("the repository answered HTTP %d for the %s", resp.StatusCode, what), nil)
	default:
		return nil, notFound(ref, fmt.Sprintf("the repository answered HTTP %d for the %s; check repoURL", resp.StatusCode, what), nil)
	}
	tooLarge := func() error {
		hint := shrinkHint
		if what == indexYAML {
			hint = "prune old versions from the repository's index.yaml, or serve the chart from an OCI registry"
		}
		return invalid(ref, fmt.Sprintf("the %s is larger than the %s limit; %s", what, byteSize(s.opts.MaxArchiveSize), hint))
	}
	if resp.ContentLength > s.opts.MaxArchiveSize {
		return nil, tooLarge()
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, s.opts.MaxArchiveSize+1))
	if err != nil {
		return nil, fetchFailed(ref, fmt.Sprintf("reading the %s failed: %v", what, err), err)
	}
	if int64(len(data)) > s.opts.MaxArchiveSize {
		return nil, tooLarge()
	}
	return data, nil
}
