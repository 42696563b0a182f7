// Package work is the form in which the hub publishes to a Pull cluster's agent what the agent
// applies there (docs/design/pull-mode.md): for one ClusterServiceStatus, the parts of the
// service set's spec the per-cluster reconcile reads and each service's rendered objects, with
// their digests. The hub renders (templates, values and referenced Secrets stay on the hub) and
// writes it as Secrets in the Cluster's namespace — the only place the agent may read — since
// rendered objects can hold Secret values; the agent reads it back.
//
// Encoding is gzip-compressed JSON, split into parts under the API server's request limit
// (Parts), named for the status object and the digest of the whole, so that a new work never
// overwrites the one the agent is reading. Decoding is bounded and checks every digest: what
// the agent reads is what the hub wrote, or an error that quotes nothing of it.
package work

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/render"
)

// Work is what the agent of one cluster applies for one status object.
type Work struct {
	// ServiceSet is the service set's name and the parts of its spec the per-cluster reconcile
	// reads (ServiceSetSpec), at Generation.
	ServiceSet string                             `json:"serviceSet"`
	Generation int64                              `json:"generation"`
	Spec       holdfastv1.MultiClusterServiceSpec `json:"spec"`
	// Revision is the rollout revision the services were rendered from (the status object's
	// spec.revision then), which the agent reports as deployed.
	Revision string `json:"revision,omitempty"`
	// Requested is the service set's holdfast.dev/reconcile-requested-at: a request for a full
	// reconcile of every cluster (holdfast correct SERVICESET), which the agent handles as the
	// hub would (a request on the status object itself reaches the agent directly).
	Requested string `json:"requested,omitempty"`
	// Services are the rendered services, in the service set's order.
	Services []Service `json:"services"`
	// Digest names the work: Decode sets it; it is not part of the encoding.
	Digest string `json:"-"`
}

// Service is one service's rendered objects and their digest (render.Digest), or why it could
// not be rendered: the agent reports that as the hub would, and keeps what it deployed before.
type Service struct {
	Name    string                       `json:"name"`
	Digest  string                       `json:"digest,omitempty"`
	Objects []*unstructured.Unstructured `json:"objects,omitempty"`
	Problem *Problem                     `json:"problem,omitempty"`
	// Overrides name the service's overrides the hub applied for the cluster, which its status
	// reports; the overrides themselves are not given (ServiceSetSpec).
	Overrides []string `json:"overrides,omitempty"`
}

// Problem is why a service could not be rendered: a condition reason and message (which never
// hold a Secret's value), and whether rendering is retried as is.
type Problem struct {
	Reason    string `json:"reason"`
	Message   string `json:"message"`
	Transient bool   `json:"transient,omitempty"`
}

// ServiceSetSpec is the part of a service set's spec a Pull cluster's agent is given: what the
// reconcile of one cluster reads. Which clusters it selects, how a rollout goes across them, and
// where notifications go are the hub's business and stay there, and so do the services'
// overrides: the hub applied those that select the cluster, and those of other clusters are
// none of its business.
func ServiceSetSpec(spec holdfastv1.MultiClusterServiceSpec) holdfastv1.MultiClusterServiceSpec {
	out := *spec.DeepCopy()
	out.ClusterSelector = holdfastv1.ClusterSelector{}
	out.Rollout = nil
	out.Notifications = nil
	for i := range out.Services {
		out.Services[i].Overrides = nil
	}
	return out
}

// maxDecoded bounds what decoding a work may produce: a service set of many large charts fits,
// a compressed bomb does not.
const maxDecoded = 256 << 20

// Encode returns w compressed and its digest, which names it.
func Encode(w Work) (data []byte, digest string, _ error) {
	raw, err := json.Marshal(w)
	if err != nil {
		return nil, "", fmt.Errorf("encoding the work of service set %s: %w", w.ServiceSet, err)
	}
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err == nil {
		_, err = zw.Write(raw)
	}
	if err == nil {
		err = zw.Close()
	}
	if err != nil {
		return nil, "", fmt.Errorf("compressing the work of service set %s: %w", w.ServiceSet, err)
	}
	sum := sha256.Sum256(raw)
	return buf.Bytes(), hex.EncodeToString(sum[:]), nil
}

// Decode returns the work data holds, if it is exactly what Encode made with digest: corrupt,
// oversized or altered data, or a service whose objects do not match its digest, is an error
// that quotes none of it.
func Decode(data []byte, digest string) (Work, error) {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return Work{}, errors.New("decoding the work: not gzip data")
	}
	raw, err := io.ReadAll(io.LimitReader(zr, maxDecoded+1))
	if err != nil {
		return Work{}, errors.New("decoding the work: corrupt data")
	}
	if len(raw) > maxDecoded {
		return Work{}, fmt.Errorf("decoding the work: over %d bytes", maxDecoded)
	}
	if sum := sha256.Sum256(raw); hex.EncodeToString(sum[:]) != digest {
		return Work{}, errors.New("decoding the work: it does not match its digest")
	}
	var w Work
	if err := json.Unmarshal(raw, &w); err != nil {
		return Work{}, errors.New("decoding the work: not valid JSON")
	}
	for _, s := range w.Services {
		if s.Problem != nil {
			continue
		}
		if got, err := render.Digest(s.Objects); err != nil || got != s.Digest {
			return Work{}, fmt.Errorf("decoding the work: the objects of service %q do not match their digest", s.Name)
		}
	}
	w.Digest = digest
	return w, nil
}
