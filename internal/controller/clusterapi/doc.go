// Package clusterapi makes Cluster API clusters on the hub Holdfast targets. When it is turned
// on (holdfast controller --cluster-api-discovery), each cluster.x-k8s.io Cluster whose control
// plane is initialized gets a Holdfast Cluster of the same namespace and name: its kubeconfig is
// the Secret Cluster API writes (<name>-kubeconfig, key value), its labels are the Cluster API
// cluster's (so service sets select it as any other), and it carries the label
// holdfast.dev/discovered-from=cluster-api. When the Cluster API cluster goes, so does the
// Holdfast Cluster it made (the hub may run no garbage collector); a Holdfast Cluster someone
// made by hand under that name is never touched.
//
// Cluster API's types are read as unstructured objects, at the version the hub serves, so
// Holdfast does not depend on Cluster API's Go module.
package clusterapi
