// The health of applied objects, as kstatus computes it from the object the cluster returned.

package apply

import (
	"strings"

	"github.com/fluxcd/cli-utils/pkg/kstatus/status"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilstrings "k8s.io/utils/strings"
)

// maxHealthMessage bounds the message kept of an object's health: it comes from the cluster
// (conditions written by its controllers) and ends up in status and events.
const maxHealthMessage = 256

// Health is an object's health: kstatus's status of it and, when not Current, why.
type Health struct {
	Status  status.Status `json:"status,omitempty"`
	Message string        `json:"message,omitempty"`
}

// HealthOf computes the health of a live object with kstatus: the generic rules (observed
// generation, Ready/Reconciling/Stalled conditions, deletion) and the built-in kinds' own
// (Deployment, StatefulSet, DaemonSet, Job, Pod, PVC, Service, CRD...). An object kstatus cannot
// judge is Unknown, with the reason.
func HealthOf(u *unstructured.Unstructured) Health {
	if u == nil {
		return Health{Status: status.NotFoundStatus}
	}
	res, err := status.Compute(u)
	if err != nil {
		return Health{Status: status.UnknownStatus, Message: healthMessage(err.Error())}
	}
	h := Health{Status: res.Status}
	if res.Status != status.CurrentStatus {
		h.Message = healthMessage(res.Message)
	}
	return h
}

// healthMessage is msg cut to maxHealthMessage bytes, never inside a UTF-8 sequence.
func healthMessage(msg string) string {
	return strings.ToValidUTF8(utilstrings.ShortenString(msg, maxHealthMessage), "")
}

// health is the health of u: by Options.Health when it knows u's kind, else by kstatus.
func (r *run) health(u *unstructured.Unstructured) Health {
	if r.opts.Health != nil && u != nil {
		if h, ok := r.opts.Health(u); ok {
			h.Message = healthMessage(h.Message)
			return h
		}
	}
	return HealthOf(u)
}
