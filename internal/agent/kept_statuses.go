package agent

import (
	"encoding/json"
	"strconv"
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
	k.forgetOtherWorks(css.Name, partNames(css))
}

// ForgetStatus implements clusterservicestatus.StatusStore.
func (k *Kept) ForgetStatus(key types.NamespacedName) {
	if key.Namespace == k.Namespace {
		k.forgetStatus(key.Name)
	}
}

// partNames are the names of the parts of the work css names, nil when it does not say how many
// there are (its agent lists them: a kept list is replaced by the next one).
func partNames(css *holdfastv1.ClusterServiceStatus) map[string]bool {
	digest := css.Annotations[clusterservicestatus.WorkAnnotation]
	n, err := strconv.Atoi(css.Annotations[clusterservicestatus.WorkPartsAnnotation])
	if digest == "" || err != nil || n <= 0 || n > maxParts {
		return nil
	}
	names := make(map[string]bool, n)
	for i := range n {
		names[work.PartName(css.Name, digest, n, i)] = true
	}
	return names
}

// forgetOtherWorks forgets the parts of works of the status object status kept by name, except
// those named keep. While a part of keep is not kept yet, the parts kept stay: the kept status
// object may name a work its agent has yet to read, and the kept one is better than none.
func (k *Kept) forgetOtherWorks(status string, keep map[string]bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.forgetOtherWorksLocked(status, keep)
}

func (k *Kept) forgetOtherWorksLocked(status string, keep map[string]bool) {
	prefix := k.secretPrefix()
	for name := range keep {
		if _, ok := k.entries[prefix+name]; !ok {
			return
		}
	}
	label := naming.LabelValue(status)
	for key, e := range k.entries {
		name, ok := strings.CutPrefix(key, prefix)
		if !ok || strings.ContainsAny(name, "/?") || keep[name] || workOf(e) != label {
			continue
		}
		delete(k.entries, key)
		k.dirty[key] = true
	}
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
