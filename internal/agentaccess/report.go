package agentaccess

import (
	"fmt"
	"strconv"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// The agent reports what the hub learns of a Push cluster by probing it through the annotations
// of its Lease: the agent cannot write the Cluster. The hub reads them as untrusted input
// (ReportOf).
const (
	agentVersionAnnotation      = "holdfast.dev/agent-version"
	kubernetesVersionAnnotation = "holdfast.dev/kubernetes-version"
	userAnnotation              = "holdfast.dev/user"
	clusterIDAnnotation         = "holdfast.dev/cluster-id"
	mutatingAnnotation          = "holdfast.dev/mutating-admission-policies"
	validatingAnnotation        = "holdfast.dev/validating-admission-policies"
)

// maxReportValue bounds each reported value: a version, a user name, a UID.
const maxReportValue = 253

// Report is what an agent says about itself and its cluster.
type Report struct {
	// AgentVersion is the agent's own version (package version).
	AgentVersion string
	// KubernetesVersion and User are what the cluster's API server told the agent, as a probe
	// tells the hub of a Push cluster.
	KubernetesVersion, User string
	// ClusterID is the UID of the cluster's kube-system namespace.
	ClusterID string
	// MutatingAdmissionPolicies and ValidatingAdmissionPolicies: the admission policy APIs the
	// cluster serves.
	MutatingAdmissionPolicies, ValidatingAdmissionPolicies bool
}

// Annotations are the Lease annotations that carry r.
func (r Report) Annotations() map[string]string {
	return map[string]string{
		agentVersionAnnotation: r.AgentVersion, kubernetesVersionAnnotation: r.KubernetesVersion,
		userAnnotation: r.User, clusterIDAnnotation: r.ClusterID,
		mutatingAnnotation: strconv.FormatBool(r.MutatingAdmissionPolicies), validatingAnnotation: strconv.FormatBool(r.ValidatingAdmissionPolicies),
	}
}

// Heartbeat is a Lease as an agent last renewed it.
type Heartbeat struct {
	Report
	// Renewed is when the agent last renewed the Lease; zero when it never did.
	Renewed time.Time
	// Duration is how long the agent says the Lease holds (three of its heartbeats), at most
	// MaxLeaseDuration; zero when it says none.
	Duration time.Duration
}

// MaxLeaseDuration bounds the duration an agent's Lease may claim: the Lease comes from the
// cluster, and a longer one would keep a silent cluster Connected that long.
const MaxLeaseDuration = 10 * time.Minute

// HeartbeatOf reads an agent's Lease. Whatever is in it came from the cluster: values too long
// or malformed are refused with an error naming the annotation, never passed on.
func HeartbeatOf(lease *coordinationv1.Lease) (Heartbeat, error) {
	var h Heartbeat
	if t := lease.Spec.RenewTime; t != nil {
		h.Renewed = t.Time
	}
	if d := lease.Spec.LeaseDurationSeconds; d != nil && *d > 0 {
		h.Duration = min(time.Duration(*d)*time.Second, MaxLeaseDuration)
	}
	a := lease.Annotations
	for _, k := range []string{agentVersionAnnotation, kubernetesVersionAnnotation, userAnnotation, clusterIDAnnotation} {
		if len(a[k]) > maxReportValue {
			return h, fmt.Errorf("the agent's Lease %s/%s: annotation %s is %d bytes long, over %d", lease.Namespace, lease.Name, k, len(a[k]), maxReportValue)
		}
	}
	if id := a[clusterIDAnnotation]; id != "" && len(validation.IsDNS1123Subdomain(id)) > 0 {
		return h, fmt.Errorf("the agent's Lease %s/%s: annotation %s is not a UID", lease.Namespace, lease.Name, clusterIDAnnotation)
	}
	h.AgentVersion, h.KubernetesVersion, h.User, h.ClusterID = a[agentVersionAnnotation], a[kubernetesVersionAnnotation], a[userAnnotation], a[clusterIDAnnotation]
	h.MutatingAdmissionPolicies, h.ValidatingAdmissionPolicies = a[mutatingAnnotation] == "true", a[validatingAnnotation] == "true"
	return h, nil
}
