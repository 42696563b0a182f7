package rollout

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/naming"
)

// Snapshot is what a revision holds: the services, the cluster selector (a change of which is a
// revision too, previewed and approved like any other), and each ServiceTemplate the services
// use (its spec, and the status that pins what it resolved to, an artifact's digest; not its
// conditions).
type Snapshot struct {
	Services        []holdfastv1.Service         `json:"services"`
	ClusterSelector *holdfastv1.ClusterSelector  `json:"clusterSelector,omitempty"`
	Templates       []holdfastv1.ServiceTemplate `json:"templates,omitempty"`
}

// Template returns the snapshot's copy of the template namespace/name, nil if it has none.
func (s *Snapshot) Template(namespace, name string) *holdfastv1.ServiceTemplate {
	for i := range s.Templates {
		if s.Templates[i].Namespace == namespace && s.Templates[i].Name == name {
			return &s.Templates[i]
		}
	}
	return nil
}

// NewSnapshot snapshots services, the cluster selector and the templates the services use,
// which templates holds by namespace/name; a template missing from it is an error naming the
// service.
func NewSnapshot(services []holdfastv1.Service, selector holdfastv1.ClusterSelector, templates map[string]*holdfastv1.ServiceTemplate) (*Snapshot, error) {
	s := &Snapshot{Services: services, ClusterSelector: &selector}
	seen := map[string]bool{}
	for _, svc := range services {
		key := svc.Template.Namespace + "/" + svc.Template.Name
		if seen[key] {
			continue
		}
		seen[key] = true
		tpl, ok := templates[key]
		if !ok || tpl == nil {
			return nil, fmt.Errorf("service %q: ServiceTemplate %s not found: create it or fix spec.services[%s].template", svc.Name, key, svc.Name)
		}
		kept := holdfastv1.ServiceTemplate{Spec: tpl.Spec, Status: tpl.Status}
		kept.Namespace, kept.Name = tpl.Namespace, tpl.Name
		kept.Status.Conditions, kept.Status.ObservedGeneration = nil, 0
		s.Templates = append(s.Templates, kept)
	}
	return s, nil
}

// digestChars is how many hex digits of the snapshot's SHA-256 name a revision: 128 bits, so
// that no one can make other data that a revision's name stands for (see Verify).
const digestChars = 32

// Encode returns the snapshot's bytes and the name of its revision for the service set mcs:
// the name and a digest of the bytes, so that equal snapshots are one revision.
func (s *Snapshot) Encode(mcs string) ([]byte, string, error) {
	data, err := json.Marshal(s)
	if err != nil {
		return nil, "", fmt.Errorf("encoding the revision of %s: %w", mcs, err)
	}
	return data, naming.RevisionName(mcs, digest(data)[:digestChars]), nil
}

// digest is the hex SHA-256 of a snapshot's bytes.
func digest(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// decode reads the snapshot a ControllerRevision holds.
func decode(cr *appsv1.ControllerRevision) (*Snapshot, error) {
	s := &Snapshot{}
	if err := json.Unmarshal(cr.Data.Raw, s); err != nil {
		return nil, fmt.Errorf("it does not hold a revision of services: %w", err)
	}
	return s, nil
}

// NewControllerRevision is the ControllerRevision of a snapshot, owned by mcs, in namespace.
func NewControllerRevision(mcs *holdfastv1.MultiClusterService, namespace, name string, data []byte, number int64) *appsv1.ControllerRevision {
	return &appsv1.ControllerRevision{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: namespace,
			Labels: map[string]string{holdfastv1.RevisionLabel: naming.LabelValue(mcs.Name)},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: holdfastv1.GroupVersion.String(), Kind: "MultiClusterService",
				Name: mcs.Name, UID: mcs.UID, Controller: ptr.To(true),
			}},
		},
		Data:     runtime.RawExtension{Raw: data},
		Revision: number,
	}
}
