package agent

import (
	"encoding/json"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/controller/clusterservicestatus"
	"holdfast.dev/holdfast/internal/naming"
	"holdfast.dev/holdfast/internal/work"
)

// Kept keeps the status objects as the reconcile read them whole
// (clusterservicestatus.StatusStore): the agent's cache holds them whole, so a status patch reads
// nothing from the hub first and the transport sees no read of them to keep. Each is kept as the
// hub would answer a read of it, and with it the kept parts of the works it no longer names are
// let go: the agent reads a work's parts by name, one kept answer each.

var _ clusterservicestatus.StatusStore = (*Kept)(nil)

// KeepStatus implements clusterservicestatus.StatusStore.
func (k *Kept) KeepStatus(css *holdfastv1.ClusterServiceStatus) {
	if css.Namespace != k.Namespace {
		return
	}
	kept := css.DeepCopy()
	kept.APIVersion, kept.Kind = holdfastv1.GroupVersion.String(), "ClusterServiceStatus"
	kept.ManagedFields = nil
	body, err := json.Marshal(kept)
	if err != nil {
		k.log.Error(err, "Keeping a status object read whole failed", "statusObject", css.Name)
		return
	}
	if len(body) > maxKeptAnswer {
		return
	}
	k.keep(k.statusPrefix()+css.Name, keptEntry{ContentType: "application/json", Body: body})
	k.forgetOtherWorks(css.Name, css.Annotations[clusterservicestatus.WorkAnnotation], partNames(css, published))
}

// ForgetStatus implements clusterservicestatus.StatusStore.
func (k *Kept) ForgetStatus(key types.NamespacedName) {
	if key.Namespace == k.Namespace {
		k.forgetStatus(key.Name)
	}
}

// forgetOtherWorks forgets the parts of works of the status object status kept by name, except
// keep, those of the work with digest it names now: once per digest (Kept.pruned). While a part
// of keep is not kept yet, the parts kept stay: the kept status object may name a work its agent
// has yet to read, and the kept one is better than none.
func (k *Kept) forgetOtherWorks(status, digest string, keep []string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if done, ok := k.pruned[status]; ok && done == digest {
		return
	}
	if k.forgetOtherWorksLocked(status, keep) {
		if k.pruned == nil {
			k.pruned = map[string]string{}
		}
		k.pruned[status] = digest
	}
}

// forgetOtherWorksLocked forgets them, and reports whether it could (every part of keep kept).
func (k *Kept) forgetOtherWorksLocked(status string, keep []string) bool {
	prefix := k.secretPrefix()
	for _, name := range keep {
		if _, ok := k.entries[prefix+name]; !ok {
			return false
		}
	}
	label := naming.LabelValue(status)
	for key, e := range k.entries {
		name, ok := strings.CutPrefix(key, prefix)
		if !ok || strings.ContainsAny(name, "/?") || slices.Contains(keep, name) || workOf(e) != label {
			continue
		}
		delete(k.entries, key)
		k.dirty[key] = true
	}
	return true
}

// secretPrefix is the key prefix of the Secrets kept by name.
func (k *Kept) secretPrefix() string {
	return "/api/v1/namespaces/" + k.Namespace + "/" + keptSecrets + "/"
}

// workOf is the status object label of the work part a kept Secret is, "" if it is none (or
// cannot be read: in JSON or protobuf, as the hub answered).
func workOf(e keptEntry) string {
	obj, _, err := clientgoscheme.Codecs.UniversalDeserializer().Decode(e.Body, nil, nil)
	if err != nil {
		return ""
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return ""
	}
	return m.GetLabels()[work.StatusLabel]
}
