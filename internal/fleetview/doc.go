// Package fleetview is the CLI's read model of the fleet: what the verbs status, drift, history,
// correct, pause and resume show, computed from the hub's status objects and kept apart from the
// commands that print it.
//
// The JSON documents (FleetStatus, DriftList, DriftHistory, CorrectionRequestList,
// PauseRequestList) are the CLI's own types, not the API objects: scripts depend on them, so they
// stay stable while the API evolves (docs/cli.md shows an example of each). BuildFleetStatus,
// BuildDriftList and BuildDriftHistory make them from ClusterServiceStatuses that ListStatuses
// reads from the hub page by page, narrowed by a Filter; the Print functions render them as the
// tables the verbs print (PrintXWide as -o wide: more columns, nothing cut), WriteJSON and
// WriteYAML as their -o json and -o yaml, and WriteNames as -o name (one object a line, in the
// scheme names.go describes). Values of a Secret's data never leave this package: they are
// redacted in every document, whatever the records hold.
//
// It also renders the Clusters, status objects and service sets themselves as tables
// (PrintClusters, PrintServiceStatuses, PrintServiceSets), for `holdfast demo`.
//
// The package exists so that the read model is one plain, testable library: cmd/holdfast keeps
// only the cobra wiring (flags, then a call into this package), and the demo renders the fleet
// the same way the CLI does.
package fleetview
