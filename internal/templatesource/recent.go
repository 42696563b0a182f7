package templatesource

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"holdfast.dev/holdfast/internal/sizedlru"
)

// DefaultRecentConfigMapBytes bounds what RecentConfigMaps keeps: 16 MiB, sixteen ConfigMaps
// at the API server's limit of 1 MiB of data each, thousands of ordinary ones.
const DefaultRecentConfigMapBytes = 16 << 20

// maxRecentConfigMaps bounds the number of ConfigMaps kept, whatever their size.
const maxRecentConfigMaps = 4096

// RecentConfigMaps keeps the data of the ConfigMaps last read from the API server, each at the
// version read, so that a template rendered for a thousand clusters reads each ConfigMap it
// references once per version rather than once per cluster. It is bounded in bytes of data
// (and in entries): the least recently used go first, and a ConfigMap larger than the bound is
// not kept. A nil *RecentConfigMaps keeps nothing. It is safe for concurrent use.
type RecentConfigMaps struct {
	kept *sizedlru.Cache[types.NamespacedName, *recentConfigMap]
}

// recentConfigMap is a ConfigMap's data at one version.
type recentConfigMap struct {
	uid             types.UID
	resourceVersion string
	data            map[string]string // strings: no reader can change what is kept
}

// NewRecentConfigMaps keeps at most maxBytes of ConfigMap data (DefaultRecentConfigMapBytes
// when not positive).
func NewRecentConfigMaps(maxBytes int64) *RecentConfigMaps {
	if maxBytes <= 0 {
		maxBytes = DefaultRecentConfigMapBytes
	}
	return &RecentConfigMaps{kept: sizedlru.New[types.NamespacedName, *recentConfigMap](maxRecentConfigMaps, maxBytes)}
}

// get returns a copy of the data kept of the ConfigMap named key at the version uid and
// resourceVersion name, if any.
func (r *RecentConfigMaps) get(key types.NamespacedName, uid types.UID, resourceVersion string) (map[string][]byte, bool) {
	if r == nil {
		return nil, false
	}
	e, ok := r.kept.Get(key)
	if !ok || e.uid != uid || e.resourceVersion != resourceVersion {
		return nil, false
	}
	data := make(map[string][]byte, len(e.data))
	for k, v := range e.data {
		data[k] = []byte(v)
	}
	return data, true
}

// keep keeps data, what cm holds, replacing any older version of cm.
func (r *RecentConfigMaps) keep(cm *corev1.ConfigMap, data map[string][]byte) {
	if r == nil {
		return
	}
	var size int64
	kept := make(map[string]string, len(data))
	for k, v := range data {
		size += int64(len(k) + len(v))
		kept[k] = string(v)
	}
	r.kept.Add(types.NamespacedName{Namespace: cm.Namespace, Name: cm.Name},
		&recentConfigMap{uid: cm.UID, resourceVersion: cm.ResourceVersion, data: kept}, size)
}

// size returns how many ConfigMaps are kept and their bytes of data.
func (r *RecentConfigMaps) size() (int, int64) { return r.kept.Size() }
