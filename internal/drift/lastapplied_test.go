package drift

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// kubectl's client-side apply keeps the whole Secret it applied, data included, in the
// kubectl.kubernetes.io/last-applied-configuration annotation: a change to that annotation is a
// change of Secret data, and shows as little.

const lastApplied = LastAppliedAnnotation

const (
	appliedSecretOld = "old-applied-s3cr3t"
	appliedSecretNew = "new-applied-s3cr3t"
)

// lastAppliedOf is the annotation kubectl writes for a Secret with password in its data.
func lastAppliedOf(password string) string {
	return `{"apiVersion":"v1","data":{"password":"` + base64.StdEncoding.EncodeToString([]byte(password)) +
		`"},"kind":"Secret","metadata":{"name":"creds"},"stringData":{"plain":"` + password + `"}}`
}

// assertNoAppliedSecret fails when a change shows a value of either annotation, plain or
// base64, or does not say Redacted for it.
func assertNoAppliedSecret(t *testing.T, changes []FieldChange) {
	t.Helper()
	shown, _ := json.Marshal(changes)
	for _, s := range []string{appliedSecretOld, appliedSecretNew} {
		for _, spelling := range []string{s, base64.StdEncoding.EncodeToString([]byte(s))} {
			if strings.Contains(string(shown), spelling) {
				t.Fatalf("the drift shows the Secret value %q: %s", spelling, shown)
			}
		}
	}
	for _, c := range changes {
		if strings.HasPrefix(c.Path, ".metadata.annotations") {
			for _, v := range []string{c.Old, c.New} {
				if v != "" && v != Redacted {
					t.Fatalf("%s shows %q, want %q", c.Path, v, Redacted)
				}
			}
		}
	}
}

func secretWithAnnotations(annotations map[string]any) *unstructured.Unstructured {
	md := map[string]any{"name": "creds", "namespace": "shop"}
	if annotations != nil {
		md["annotations"] = annotations
	}
	return newObject(map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": md,
		"data": map[string]any{"password": "c2FtZQ=="}})
}

func TestCompareRedactsLastAppliedOfSecret(t *testing.T) {
	declared := secretWithAnnotations(map[string]any{
		lastApplied: lastAppliedOf(appliedSecretOld), "team": "payments"})
	cases := []struct {
		name      string
		live      *unstructured.Unstructured
		wantPaths []string
	}{
		{"the annotation changed",
			secretWithAnnotations(map[string]any{lastApplied: lastAppliedOf(appliedSecretNew), "team": "payments"}),
			[]string{".metadata.annotations." + lastApplied}},
		{"the annotation removed",
			secretWithAnnotations(map[string]any{"team": "payments"}),
			[]string{".metadata.annotations." + lastApplied}},
		{"every annotation removed: the whole map, which holds it",
			secretWithAnnotations(nil),
			[]string{".metadata.annotations"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Compare(declared, c.live)
			var paths []string
			for _, f := range got {
				paths = append(paths, f.Path)
			}
			if fmt.Sprint(paths) != fmt.Sprint(c.wantPaths) {
				t.Fatalf("Compare paths = %v, want %v", paths, c.wantPaths)
			}
			assertNoAppliedSecret(t, got)
			if v := Decide(Declaration(declared), c.live, nil); !v.Drifted {
				t.Fatalf("Decide: not drifted: %+v", v)
			} else {
				assertNoAppliedSecret(t, v.Fields)
			}
		})
	}

	// The same annotation on a ConfigMap is no Secret: it is shown.
	cm := func(u *unstructured.Unstructured) *unstructured.Unstructured {
		u = u.DeepCopy()
		u.SetKind("ConfigMap")
		return u
	}
	got := Compare(cm(declared), cm(cases[0].live))
	if len(got) != 1 || !strings.Contains(got[0].Old, "password") {
		t.Fatalf("Compare of a ConfigMap = %+v, want the annotation shown", got)
	}
}

func TestWatchRedactsLastAppliedOfSecret(t *testing.T) {
	secret := func(rv, password, holdfastFields string, entries ...string) *unstructured.Unstructured {
		u := parse(t, `apiVersion: v1
kind: Secret
metadata:
  name: creds
  namespace: shop
  uid: s1
  resourceVersion: "`+rv+`"
  labels: {tier: gold}
  managedFields:
  - {manager: holdfast, operation: Apply, apiVersion: v1, fieldsType: FieldsV1, fieldsV1: `+holdfastFields+`}
`+strings.Join(entries, "")+`data: {password: c2FtZQ==}
`)
		u.SetAnnotations(map[string]string{lastApplied: lastAppliedOf(password)})
		return u
	}
	owned := `{"f:metadata": {"f:labels": {"f:tier": {}}, "f:annotations": {"f:` + lastApplied + `": {}}}}`
	// kubectl apply by hand: its Update takes the annotation from Holdfast, as the API server does.
	c := NewCompactor()
	first, err := c.Transform(secret("1", appliedSecretOld, owned))
	if err != nil {
		t.Fatal(err)
	}
	second, err := c.Transform(secret("2", appliedSecretNew, `{"f:metadata": {"f:labels": {"f:tier": {}}}}`,
		`  - {manager: kubectl-client-side-apply, operation: Update, apiVersion: v1, fieldsType: FieldsV1, fieldsV1: {"f:metadata": {"f:annotations": {"f:`+lastApplied+`": {}}}}}
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []any{first, second} {
		snap := s.(*Snapshot)
		text := fmt.Sprintf("%#v %s", snap.Object().Object, snap.values())
		for _, plain := range []string{appliedSecretOld, appliedSecretNew} {
			if strings.Contains(text, plain) {
				t.Fatalf("the snapshot holds %q: %s", plain, text)
			}
		}
	}
	p := second.(*Snapshot).pending.Load()
	if p == nil || len(p.fields) != 1 || p.fields[0].Path != ".metadata.annotations."+lastApplied {
		t.Fatalf("change %+v, want the last-applied annotation", p)
	}
	assertNoAppliedSecret(t, p.fields)
}

func TestSecretValuePath(t *testing.T) {
	for path, want := range map[string]bool{
		".data.password":                       true,
		".data":                                true,
		`.data[key="x"]`:                       true,
		".stringData.token":                    true,
		"/data/password":                       true,
		"data.password":                        true,
		"":                                     true, // the object holds the data
		".metadata":                            true,
		".metadata.annotations":                true,
		"/metadata/annotations":                true,
		".metadata.annotations." + lastApplied: true,
		"/metadata/annotations/kubectl.kubernetes.io~1last-applied-configuration": true,
		"/metadata/annotations/kubectl.kubernetes.io/last-applied-configuration":  true, // "/" unescaped
		".metadata.annotations.team":                              false,
		".metadata.annotations.kubectl.kubernetes.io/restartedAt": false,
		".metadata.annotations." + lastApplied + "-not":           false,
		".metadata.labels.tier":                                   false,
		".metadata.name":                                          false,
		".database":                                               false,
		".stringDataX":                                            false,
		".type":                                                   false,
		".immutable":                                              false,
	} {
		if got := SecretValuePath(path); got != want {
			t.Errorf("SecretValuePath(%q) = %v, want %v", path, got, want)
		}
	}
}
