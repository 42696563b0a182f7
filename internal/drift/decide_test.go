package drift

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// declared is a Deployment as Holdfast declares it.
const declaredDeployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: demo
  labels: {app: web}
spec:
  replicas: 2
  template:
    spec:
      containers:
      - {name: app, image: "nginx:1", resources: {limits: {cpu: 1000m}}}
`

// Field sets of the live Deployment.
const (
	replicasField = `"f:replicas": {}, `
	imageField    = `"f:image": {}, `
)

// liveDeployment is the Deployment on the cluster: defaulted, with a status and a field of
// another manager, and the given replicas, image and cpu. manager holds the field taken
// (replicasField or imageField), as the API server moves a field to whoever changed it;
// Holdfast holds the rest.
func liveDeployment(t *testing.T, replicas, image, cpu, manager, taken string) *unstructured.Unstructured {
	t.Helper()
	holdfast := `{"f:metadata": {"f:labels": {"f:app": {}}}, "f:spec": {` + replicasField + `"f:template": {"f:spec": {"f:containers": {"k:{\"name\":\"app\"}": {".": {}, "f:name": {}, ` + imageField + `"f:resources": {"f:limits": {"f:cpu": {}}}}}}}}}`
	takenFields := ""
	switch taken {
	case replicasField:
		takenFields = `{"f:spec": {"f:replicas": {}}}`
	case imageField:
		takenFields = `{"f:spec": {"f:template": {"f:spec": {"f:containers": {"k:{\"name\":\"app\"}": {"f:image": {}}}}}}}`
	}
	if taken != "" {
		holdfast = strings.Replace(holdfast, taken, "", 1)
	}
	entries := `  - {manager: holdfast, operation: Apply, apiVersion: apps/v1, fieldsType: FieldsV1, fieldsV1: ` + holdfast + `}
`
	if manager != "" {
		entries += `  - {manager: ` + manager + `, operation: Update, apiVersion: apps/v1, fieldsType: FieldsV1, time: "2026-11-23T10:05:00Z", fieldsV1: ` + takenFields + `}
`
	}
	return parse(t, `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: demo
  uid: u1
  labels: {app: web, team: extra}
  managedFields:
`+entries+`spec:
  replicas: `+replicas+`
  progressDeadlineSeconds: 600
  template:
    spec:
      containers:
      - {name: app, image: "`+image+`", imagePullPolicy: Always, resources: {limits: {cpu: "`+cpu+`"}}}
status: {replicas: 2}
`)
}

func TestDecideOnTheDeclaration(t *testing.T) {
	const replicasTaken, imageTaken = replicasField, imageField
	cases := []struct {
		name    string
		live    *unstructured.Unstructured
		ignored []string
		drifted bool
		paths   []string
		author  string
	}{
		{name: "deleted", live: nil, drifted: true},
		{name: "as declared, defaulted, with others' fields and status",
			live: liveDeployment(t, "2", "nginx:1", "1000m", "", "")},
		{name: "scaled by another manager", live: liveDeployment(t, "5", "nginx:1", "1000m", "kubectl", replicasTaken),
			drifted: true, paths: []string{".spec.replicas"}, author: "kubectl"},
		{name: "image edited", live: liveDeployment(t, "2", "nginx:2", "1000m", "kubectl-edit", imageTaken),
			drifted: true, paths: []string{`.spec.template.spec.containers[name="app"].image`}, author: "kubectl-edit"},
		{name: "scaled, replicas ignored", live: liveDeployment(t, "5", "nginx:1", "1000m", "hpa", replicasTaken),
			ignored: []string{"/spec/replicas"}},
		{name: "scaled, another field ignored", live: liveDeployment(t, "5", "nginx:1", "1000m", "hpa", replicasTaken),
			ignored: []string{"/spec/paused"}, drifted: true, paths: []string{".spec.replicas"}, author: "hpa"},
		// The API server normalised the quantity Holdfast applied; Holdfast still holds the field.
		{name: "normalised by the server, still Holdfast's", live: liveDeployment(t, "2", "nginx:1", "1", "", "")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := Decide(Declaration(parse(t, declaredDeployment)), c.live, c.ignored)
			if v.Drifted != c.drifted || v.Deleted != (c.live == nil) {
				t.Fatalf("Decide = %+v, want drifted %v", v, c.drifted)
			}
			var paths []string
			for _, f := range v.Fields {
				paths = append(paths, f.Path)
			}
			if len(paths) != len(c.paths) || (len(paths) > 0 && paths[0] != c.paths[0]) {
				t.Fatalf("fields %v, want %v", paths, c.paths)
			}
			if author := map[bool]string{true: v.Author.Manager}[v.Drifted]; author != c.author {
				t.Fatalf("author %q, want %q", author, c.author)
			}
			// What Holdfast's field manager holds is Holdfast's own write here.
			if v.ResolveClaim(true).Drifted != c.drifted {
				t.Fatalf("Holdfast's own write taken for drift: %+v", v)
			}
		})
	}
}

// TestDecideIsOneRule: the watch path (a Snapshot of the version before) and the apply path (the
// declaration) reach the same verdict on the same live object.
func TestDecideIsOneRule(t *testing.T) {
	const imageTaken = imageField
	before := liveDeployment(t, "2", "nginx:1", "1000m", "", "")
	before.SetResourceVersion("1")
	after := liveDeployment(t, "2", "nginx:2", "1000m", "kubectl-edit", imageTaken)
	after.SetResourceVersion("2")
	c := NewCompactor()
	prev, _ := c.Transform(before)
	byWatch := Decide(prev.(*Snapshot), after, nil)
	byDeclaration := Decide(Declaration(parse(t, declaredDeployment)), after, nil)
	for _, v := range []Verdict{byWatch, byDeclaration} {
		if !v.Drifted || len(v.Fields) != 1 || v.Fields[0] != (FieldChange{Path: `.spec.template.spec.containers[name="app"].image`, Old: `"nginx:1"`, New: `"nginx:2"`}) || v.Author.Manager != "kubectl-edit" {
			t.Fatalf("verdicts differ or are wrong: watch %+v, declaration %+v", byWatch, byDeclaration)
		}
	}
	if v := Decide(prev.(*Snapshot), after, []string{"/spec/template/spec/containers/0/image"}); v.Drifted {
		t.Fatalf("ignored field reported by the watch path: %+v", v)
	}
}

func TestExempt(t *testing.T) {
	u := &unstructured.Unstructured{}
	if Exempt(u) {
		t.Fatal("an object without the annotation is exempt")
	}
	u.SetAnnotations(map[string]string{"holdfast.dev/drift-ignore": "true"})
	if !Exempt(u) {
		t.Fatal("an annotated object is not exempt")
	}
	u.SetAnnotations(map[string]string{"holdfast.dev/drift-ignore": "false"})
	if Exempt(u) {
		t.Fatal(`"false" exempts`)
	}
}
