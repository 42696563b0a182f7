// Package dependency reads and checks spec.services[].dependsOn of a service set.
//
// An entry names a service of the same service set ("db"), or a service of another service set
// deployed to the same cluster ("<multiclusterservice>/<service>"); a service is applied on a
// cluster only once every service it names is ready there. The package parses entries (Parse),
// lists the other service sets a set depends on (OtherSets, what the hub cache indexes service
// sets by), walks the services reachable from one to find a cycle back to it (Cycle: the walk
// reads other sets' specs, which are user input, so it is bounded) along the edges of the graph
// across service sets (Graph: what the set's services as rendered and the other sets' specs
// name, without the edges the tenancy rule refuses), and judges whether another set's service,
// as its ClusterServiceStatus records it, is ready for the services that depend on it (Ready).
// The controllers read the objects; the rules are here.
package dependency
