package chartsource

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/Masterminds/semver/v3"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	repo "helm.sh/helm/v4/pkg/repo/v1"

	"holdfast.dev/holdfast/internal/netpolicy"
	"holdfast.dev/holdfast/internal/render"
)

// Options configures a Source. Zero values mean the defaults.
type Options struct {
	// CacheSize is how many chart archives are kept (default 64).
	CacheSize int
	// CacheBytes bounds the total size of the kept chart archives (default
	// DefaultCacheBytes, 256 MiB). The least recently used go first; an
	// archive larger than CacheBytes is used but not kept.
	CacheBytes int64
	// IndexTTL is how long a repository's index.yaml or a registry's tag list
	// is reused to resolve a version range or "latest" (default 1 minute). A
	// negative value disables reuse. Exact versions never need it once cached.
	IndexTTL time.Duration
	// Timeout bounds one Load when the caller's context has no deadline
	// (default 2 minutes).
	Timeout time.Duration
	// MaxArchiveSize bounds a downloaded chart archive, index.yaml or OCI
	// chart layer (default DefaultMaxArchiveSize, 64 MiB). An OCI pull is
	// refused from its manifest when a layer declares more, and reads at most
	// MaxArchiveSize plus 4 MiB of manifests whatever the registry sends.
	MaxArchiveSize int64
	// Transport is the base HTTP transport (default: a clone of
	// http.DefaultTransport). It is cloned, and its connections are checked
	// against Egress once made, before anything is sent on them.
	Transport *http.Transport
	// Egress decides which addresses the source may connect to, for
	// repoURL and for every redirect, blob and token server it leads to
	// (default netpolicy.Default(): link-local, metadata, unspecified and
	// multicast addresses refused). A refusal is reason EgressDenied.
	Egress *netpolicy.Policy
	// ForbidInsecureSkipTLSVerify refuses every chart whose source sets
	// InsecureSkipTLSVerify, with reason InsecureSkipTLSVerifyForbidden.
	ForbidInsecureSkipTLSVerify bool
	// MaxExtractedSize bounds what an artifact unpacks to (default
	// DefaultMaxExtractedSize, 128 MiB); MaxArtifactFiles how many files it
	// holds (default DefaultMaxArtifactFiles). The compressed artifact is
	// bounded by MaxArchiveSize.
	MaxExtractedSize int64
	MaxArtifactFiles int
	// Now is the clock, for tests (default time.Now).
	Now func() time.Time
}

// Source is a render.ChartSource for HTTP(S) chart repositories and OCI
// registries, with a shared cache. It is safe for concurrent use; make one per
// controller.
type Source struct {
	opts     Options
	secure   *http.Transport
	insecure *http.Transport

	archives *lru
	indexes  *ttlCache[*repo.IndexFile]
	tags     *ttlCache[[]string]
	fetches  flights[[]byte]
	lookups  flights[any]

	downloads atomic.Int64
}

var _ render.ChartSource = (*Source)(nil)

// New returns a Source.
func New(opts Options) *Source {
	if opts.CacheSize <= 0 {
		opts.CacheSize = 64
	}
	if opts.IndexTTL == 0 {
		opts.IndexTTL = time.Minute
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 2 * time.Minute
	}
	if opts.CacheBytes <= 0 {
		opts.CacheBytes = DefaultCacheBytes
	}
	if opts.MaxArchiveSize <= 0 {
		opts.MaxArchiveSize = DefaultMaxArchiveSize
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	secure, insecure := transports(opts)
	return &Source{
		opts:     opts,
		secure:   secure,
		insecure: insecure,
		archives: newLRU(opts.CacheSize, opts.CacheBytes),
		// Indexes are weighed by their index.yaml, tag lists by their tags:
		// each kind at most MaxArchiveSize in all, so the largest one fits.
		indexes: newTTLCache[*repo.IndexFile](opts.IndexTTL, 256, opts.MaxArchiveSize, opts.Now),
		tags:    newTTLCache[[]string](opts.IndexTTL, 1024, opts.MaxArchiveSize, opts.Now),
	}
}

// Downloads returns how many chart archives were downloaded (cache misses).
func (s *Source) Downloads() int64 { return s.downloads.Load() }

// CachedCharts returns how many chart archives are cached.
func (s *Source) CachedCharts() int {
	n, _ := s.archives.size()
	return n
}

// CachedBytes returns the total size of the cached chart archives.
func (s *Source) CachedBytes() int64 {
	_, b := s.archives.size()
	return b
}

// Load returns the chart h names, from the cache when it holds the resolved
// version.
func (s *Source) Load(ctx context.Context, h render.Helm) (*chart.Chart, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.opts.Timeout)
		defer cancel()
	}
	if h.Artifact != nil {
		return s.loadArtifactChart(ctx, h)
	}
	ref := render.ChartRef(h)
	if h.InsecureSkipTLSVerify && s.opts.ForbidInsecureSkipTLSVerify {
		return nil, insecureForbidden(ref)
	}
	if h.Chart == "" || (strings.ContainsAny(h.Chart, "/\\") && !strings.HasPrefix(h.RepoURL, "oci://")) {
		return nil, invalid(ref, fmt.Sprintf("chart name %q is not valid", h.Chart))
	}
	u, err := url.Parse(h.RepoURL)
	if err != nil {
		return nil, invalid(ref, "repoURL is not a URL")
	}
	if u.User != nil {
		return nil, invalid(ref, "repoURL contains credentials; give them as username and password instead")
	}

	var data []byte
	var version string
	switch u.Scheme {
	case "http", "https":
		data, version, err = s.loadFromRepo(ctx, h, ref)
	case "oci":
		data, version, err = s.loadFromRegistry(ctx, h, ref)
	default:
		return nil, invalid(ref, fmt.Sprintf("repoURL scheme %q is not supported; use https://, http:// or oci://", u.Scheme))
	}
	if err != nil {
		return nil, err
	}
	c, err := loader.LoadArchive(bytes.NewReader(data))
	if err != nil {
		return nil, invalid(ref, fmt.Sprintf("version %s is not a valid chart archive: %v", version, err))
	}
	return c, nil
}

// exactVersion reports whether v names one version (1.2.3, v1.2.3-rc.1)
// rather than a range or "latest".
func exactVersion(v string) bool {
	if v == "" || strings.ContainsAny(v, "^~<>=!*|, xX") {
		return false
	}
	_, err := semver.StrictNewVersion(strings.TrimPrefix(v, "v"))
	return err == nil
}

// scope identifies what a cache entry may be shared across: the repository
// and the credentials used to read it. The credentials are hashed, so a
// chart fetched with one identity is never served to a request with another.
func scope(h render.Helm) string {
	sum := sha256.Sum256([]byte(h.Username + "\x00" + h.Password))
	return fmt.Sprintf("%s\x00%s\x00%t", strings.TrimSuffix(h.RepoURL, "/"), hex.EncodeToString(sum[:8]), h.InsecureSkipTLSVerify)
}

func archiveKey(h render.Helm, version string) string {
	return scope(h) + "\x00" + h.Chart + "\x00" + version
}

// cached returns a cached archive, or runs fetch once for every concurrent
// caller wanting the same archive and caches the result.
func (s *Source) cached(ctx context.Context, key string, fetch func() ([]byte, error)) ([]byte, error) {
	if data, ok := s.archives.get(key); ok {
		return data, nil
	}
	return s.fetches.do(ctx, key, func() ([]byte, error) {
		if data, ok := s.archives.get(key); ok {
			return data, nil
		}
		data, err := fetch()
		if err != nil {
			return nil, err
		}
		s.downloads.Add(1)
		s.archives.add(key, data)
		return data, nil
	})
}

func (s *Source) transport(h render.Helm) *http.Transport {
	if h.InsecureSkipTLSVerify {
		return s.insecure
	}
	return s.secure
}

func invalid(ref, msg string) error {
	return &render.Error{Reason: render.ReasonInvalidSource, Object: ref, Message: msg}
}

func notFound(ref, msg string, cause error) error {
	return &render.Error{Reason: render.ReasonChartNotFound, Object: ref, Message: msg, Err: cause}
}

func fetchFailed(ref, msg string, cause error) error {
	return &render.Error{Reason: render.ReasonChartFetchFailed, Object: ref, Message: msg, Err: cause}
}

// listVersions formats available versions for a message, newest first.
func listVersions(vs []string) string {
	if len(vs) == 0 {
		return "no versions are published"
	}
	const max = 10
	more := ""
	if len(vs) > max {
		more = fmt.Sprintf(" and %d more", len(vs)-max)
		vs = vs[:max]
	}
	return "available versions: " + strings.Join(vs, ", ") + more
}
