// Package sandbox runs real, throwaway Kubernetes control planes on loopback: etcd,
// kube-apiserver and, on request, kube-controller-manager and simulated nodes, each as a child
// process.
//
// It exists because Holdfast's behaviour depends on what a real API server does (admission,
// RBAC, garbage collection, namespace finalization, server-side apply), which fakes do not
// reproduce, and because one machine has to host several member clusters at once for the
// multi-cluster tests, the demo and the `sandbox up` CLI verb.
//
// Every control plane gets its own certificate authority, so a kubeconfig from one cluster is
// rejected by every other, as it would be between real clusters. Child processes are put in
// their own process group and are sent SIGKILL by the kernel if the Go process dies, so a
// crashed test run does not leave API servers behind. The binaries are built by
// hack/build-control-plane.sh (`make control-plane`); see BinaryDir.
//
// There is no kubelet. With Options.Nodes, kube-scheduler binds pods to Node objects that kwok
// (sigs.k8s.io/kwok) keeps Ready and whose pods it walks through their lifecycle by its stages
// (stages/): pods become Running and Ready, so workloads become healthy as on a real cluster,
// and a pod annotated SimulateFailureAnnotation crash-loops, so health can also
// be seen to fail.
//
// With Options.DisableAdmissionPolicies, kube-apiserver serves neither MutatingAdmissionPolicy
// nor ValidatingAdmissionPolicy, as an older cluster would not: the resources are switched off
// with --runtime-config and their admission plugins with --disable-admission-plugins (the
// plugins would otherwise wait forever for their informers, and the API server never becomes
// ready).
package sandbox
