package main

import (
	"bufio"
	"errors"
	"io"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// TestManifestsChunks checks that a size's templates together declare its Namespace once and
// each of its n ConfigMaps once, by the names the edits use, with no template beyond chunkSize
// ConfigMaps or near etcd's 1.5 MiB.
func TestManifestsChunks(t *testing.T) {
	for _, n := range []int{2, 10, chunkSize, chunkSize + 1, 20000} {
		ns := holdfastNS(n)
		seen := map[string]bool{}
		namespaces := 0
		for k := range chunks(n) {
			from, to := chunkBounds(n, k)
			yaml := manifests(from, to, ns)
			if len(yaml) > 1<<20 {
				t.Errorf("n %d: template %d is %d bytes", n, k, len(yaml))
			}
			configMaps := 0
			r := utilyaml.NewYAMLReader(bufio.NewReader(strings.NewReader(yaml)))
			for {
				doc, err := r.Read()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatalf("n %d, template %d: %v", n, k, err)
				}
				u := &unstructured.Unstructured{}
				if err := utilyaml.Unmarshal(doc, &u.Object); err != nil {
					t.Fatalf("n %d, template %d: %v", n, k, err)
				}
				switch u.GetKind() {
				case "Namespace":
					namespaces++
					if k != 0 || u.GetName() != ns {
						t.Errorf("n %d: Namespace %s in template %d", n, u.GetName(), k)
					}
				case "ConfigMap":
					configMaps++
					if seen[u.GetName()] {
						t.Errorf("n %d: ConfigMap %s declared twice", n, u.GetName())
					}
					seen[u.GetName()] = true
				default:
					t.Errorf("n %d: unexpected %s in template %d", n, u.GetKind(), k)
				}
			}
			if configMaps > chunkSize {
				t.Errorf("n %d: template %d declares %d ConfigMaps", n, k, configMaps)
			}
		}
		if namespaces != 1 {
			t.Errorf("n %d: %d Namespaces declared", n, namespaces)
		}
		for i := range n {
			if !seen[configMapName(i)] {
				t.Errorf("n %d: %s not declared", n, configMapName(i))
			}
		}
		if len(seen) != n {
			t.Errorf("n %d: %d ConfigMaps declared", n, len(seen))
		}
	}
}
