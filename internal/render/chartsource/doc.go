// Package chartsource fetches Helm charts for package render from HTTP chart
// repositories and OCI registries.
//
// A fleet renders the same chart for many clusters: a hundred clusters running
// the same service must not download it a hundred times. Source keeps chart
// archives in an in-memory LRU cache keyed by repository, chart, resolved
// version and credentials, reuses a repository's index (or a registry's tag
// list) for a short while to resolve version ranges, and collapses concurrent
// downloads of the same chart into one. Each Load returns a freshly loaded
// chart, so callers may modify it.
//
// Errors are *render.Error: ChartNotFound when the repository answered and
// the chart or version is not there (the message lists the versions that
// exist), ChartFetchFailed when it could not be reached or failed (retry), and
// InvalidSource for requests that cannot work (a URL with credentials in it, an
// unsupported scheme, an archive that is not a chart). Credentials are never
// put in errors, logs or cache keys.
package chartsource
