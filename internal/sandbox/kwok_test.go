package sandbox

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	. "github.com/onsi/gomega"
)

// stagesByName parses every embedded stage file, as kwok reads them: several YAML documents a file.
func stagesByName(t *testing.T) map[string]*unstructured.Unstructured {
	t.Helper()
	g := NewWithT(t)
	entries, err := stageFiles.ReadDir("stages")
	g.Expect(err).NotTo(HaveOccurred())
	stages := map[string]*unstructured.Unstructured{}
	for _, e := range entries {
		data, err := stageFiles.ReadFile("stages/" + e.Name())
		g.Expect(err).NotTo(HaveOccurred())
		decoder := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
		for {
			obj := &unstructured.Unstructured{}
			err := decoder.Decode(&obj.Object)
			if errors.Is(err, io.EOF) {
				break
			}
			g.Expect(err).NotTo(HaveOccurred(), "decoding %s", e.Name())
			g.Expect(obj.GetAPIVersion()).To(Equal("kwok.x-k8s.io/v1alpha1"), "%s", e.Name())
			g.Expect(obj.GetKind()).To(Equal("Stage"), "%s", e.Name())
			g.Expect(stages).NotTo(HaveKey(obj.GetName()), "stage names are unique")
			stages[obj.GetName()] = obj
		}
	}
	return stages
}

// TestStages checks the stages kwok gets: the default node and pod lifecycle kwokctl would
// configure, and the failure stage keyed on SimulateFailureAnnotation, winning over pod-ready.
func TestStages(t *testing.T) {
	g := NewWithT(t)
	stages := stagesByName(t)
	g.Expect(stages).To(HaveKey("node-initialize"))
	g.Expect(stages).To(HaveKey("node-heartbeat-with-lease"))
	g.Expect(stages).To(HaveKey("pod-ready"))
	g.Expect(stages).To(HaveKey("pod-complete"))
	g.Expect(stages).To(HaveKey("pod-delete"))

	failure, ok := stages["holdfast-simulate-failure"]
	g.Expect(ok).To(BeTrue())
	expressions, _, err := unstructured.NestedSlice(failure.Object, "spec", "selector", "matchExpressions")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(expressions).To(ContainElement(And(
		HaveKeyWithValue("key", `.metadata.annotations["`+SimulateFailureAnnotation+`"]`),
		HaveKeyWithValue("operator", "In"),
		HaveKeyWithValue("values", ConsistOf("true")),
	)))
	weight, _, err := unstructured.NestedFieldNoCopy(failure.Object, "spec", "weight")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(weight).To(BeNumerically(">", 0), "a positive weight beats pod-ready's none")
	_, found, err := unstructured.NestedFieldNoCopy(stages["pod-ready"].Object, "spec", "weight")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(found).To(BeFalse(), "pod-ready has no weight")
	template, _, err := unstructured.NestedString(failure.Object, "spec", "next", "statusTemplate")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(strings.Contains(template, "CrashLoopBackOff")).To(BeTrue())
}
