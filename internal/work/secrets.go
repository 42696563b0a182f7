package work

import (
	"fmt"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"holdfast.dev/holdfast/internal/naming"
)

// Labels and annotations of the Secrets a work is published in.
const (
	// StatusLabel names the status object the work is for (naming.LabelValue of its name).
	StatusLabel = "holdfast.dev/work-for"
	// DigestAnnotation is the digest of the whole work, PartAnnotation the part's index and
	// PartsAnnotation their number.
	DigestAnnotation = "holdfast.dev/work-digest"
	PartAnnotation   = "holdfast.dev/work-part"
	PartsAnnotation  = "holdfast.dev/work-parts"
	dataKey          = "work"
)

// SecretType marks the Secrets a work is published in.
const SecretType corev1.SecretType = "holdfast.dev/work"

// MaxPart is the most bytes of a work one Secret holds: under the API server's 1 MiB limit of a
// Secret's data, with room for its metadata.
const MaxPart = 900 << 10

// Parts are the Secrets that publish data, the work of the status object status with digest
// digest, in maxPart bytes each (MaxPart when 0).
func Parts(status types.NamespacedName, data []byte, digest string, maxPart int) []*corev1.Secret {
	if maxPart <= 0 {
		maxPart = MaxPart
	}
	chunks := slices.Collect(slices.Chunk(data, maxPart))
	if len(chunks) == 0 {
		chunks = [][]byte{{}}
	}
	out := make([]*corev1.Secret, 0, len(chunks))
	for i, c := range chunks {
		out = append(out, &corev1.Secret{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
			ObjectMeta: metav1.ObjectMeta{Namespace: status.Namespace, Name: PartName(status.Name, digest, len(chunks), i),
				Labels:      map[string]string{StatusLabel: naming.LabelValue(status.Name)},
				Annotations: map[string]string{DigestAnnotation: digest, PartAnnotation: strconv.Itoa(i), PartsAnnotation: strconv.Itoa(len(chunks))}},
			Type: SecretType,
			Data: map[string][]byte{dataKey: c},
		})
	}
	return out
}

// PartName names part i of parts of the work with digest digest of the status object named
// status: "<status>-work-<first 12 of digest>-<parts>-<i>", shortened with a hash when too long.
func PartName(status, digest string, parts, i int) string {
	return naming.Shorten(fmt.Sprintf("%s-work-%s-%d-%d", status, digest[:min(12, len(digest))], parts, i))
}

// Join returns the data of a work from its parts, in any order, checking that they are all the
// parts of the work with digest and nothing else.
func Join(parts []corev1.Secret, digest string) ([]byte, error) {
	var n int
	byIndex := map[int][]byte{}
	for _, p := range parts {
		if p.Annotations[DigestAnnotation] != digest {
			continue
		}
		i, err1 := strconv.Atoi(p.Annotations[PartAnnotation])
		total, err2 := strconv.Atoi(p.Annotations[PartsAnnotation])
		if err1 != nil || err2 != nil || i < 0 || total <= 0 || i >= total || (n != 0 && total != n) {
			return nil, fmt.Errorf("the work's part %s: its part annotations are not consistent", p.Name)
		}
		n = total
		byIndex[i] = p.Data[dataKey]
	}
	if n == 0 || len(byIndex) != n {
		return nil, fmt.Errorf("the work %s has %d of its %d parts", digest, len(byIndex), n)
	}
	var data []byte
	for i := range n {
		data = append(data, byIndex[i]...)
	}
	return data, nil
}
