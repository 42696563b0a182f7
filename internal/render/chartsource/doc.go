// Package chartsource fetches Helm charts for package render from HTTP chart
// repositories and OCI registries, and artifacts — tar.gz archives pinned by
// digest, a Flux source's (http) or an OCI artifact (`flux push artifact`) —
// for ServiceTemplates' spec.artifact. Artifacts share everything below:
// transports, egress policy, download limit and cache (keyed by digest and
// credentials); a download whose sha256 (Flux) or manifest digest (OCI) is not
// the pinned one is refused with ArtifactDigestMismatch, and an archive is
// unpacked in memory within Options.MaxExtractedSize and MaxArtifactFiles,
// regular files only (archive.go).
//
// A fleet renders the same chart for many clusters: a hundred clusters running
// the same service must not download it a hundred times. Source keeps chart
// archives in an in-memory LRU cache keyed by repository, chart, resolved
// version and credentials, reuses a repository's index (or a registry's tag
// list) for a short while to resolve version ranges, and collapses concurrent
// downloads of the same chart into one. Each Load returns a freshly loaded
// chart, so callers may modify it.
//
// Every download is bounded, because a repository or registry is not trusted
// to be small or honest. A chart archive, index.yaml or OCI chart layer may be
// at most Options.MaxArchiveSize (64 MiB). An OCI pull is refused from its
// manifest when a layer declares more (oras-go would allocate the declared
// size before reading), and a transport counts every response byte of one
// registry operation, so a registry that sends more than it declared, or a
// tag list that pages forever, is cut off at the same limit plus 4 MiB of
// manifests. The archive cache is bounded in bytes (Options.CacheBytes, 256
// MiB) as well as in entries, evicting the least recently used; the index
// and tag-list caches hold at most MaxArchiveSize each.
//
// Errors are *render.Error: ChartNotFound when the repository answered and
// the chart or version is not there (the message lists the versions that
// exist), ChartFetchFailed when it could not be reached or failed (retry), and
// InvalidSource for requests that cannot work (a URL with credentials in it, an
// unsupported scheme, an archive that is not a chart). Credentials are never
// put in errors, logs or cache keys.
//
// Every connection goes through the controller's egress policy
// (Options.Egress, package netpolicy), checked on the address dialled, so
// repoURL, archive URLs, redirect hops and OCI blob and token servers cannot
// reach cloud metadata or, if the operator says so, internal addresses. An
// index.yaml is not followed to another host; archives and OCI blobs follow
// redirects (release downloads and blobs live on CDNs). Refusals by the
// controller's policy are EgressDenied and InsecureSkipTLSVerifyForbidden
// (Options.ForbidInsecureSkipTLSVerify), not transient.
package chartsource
