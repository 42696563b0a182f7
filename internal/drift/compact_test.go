package drift

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"holdfast.dev/holdfast/internal/fieldset"
)

// configMap is a ConfigMap Holdfast applied (data.value and its labels and annotation), with
// other managers' entries as given. value is data.value; extra adds lines to metadata. When
// another manager's entry holds data.value, Holdfast's does not: the API server moves a field to
// the manager that changed it.
func configMap(t *testing.T, uid, rv, value string, extraMeta string, entries ...string) *unstructured.Unstructured {
	t.Helper()
	holdfastValue := `, "f:data": {"f:value": {}}`
	if strings.Contains(strings.Join(entries, ""), `"f:value"`) {
		holdfastValue = ""
	}
	return parse(t, `apiVersion: v1
kind: ConfigMap
metadata:
  name: web
  namespace: demo
  uid: `+uid+`
  resourceVersion: "`+rv+`"
  labels: {holdfast.dev/managed-by: holdfast, holdfast.dev/service: web, app: web}
  annotations: {holdfast.dev/multiclusterservice: shop}
`+extraMeta+`  managedFields:
  - {manager: holdfast, operation: Apply, apiVersion: v1, fieldsType: FieldsV1, time: "2026-11-23T10:00:00Z",
     fieldsV1: {"f:metadata": {"f:labels": {"f:holdfast.dev/managed-by": {}, "f:holdfast.dev/service": {}, "f:app": {}},
                "f:annotations": {"f:holdfast.dev/multiclusterservice": {}}}`+holdfastValue+`}}
`+strings.Join(entries, "")+`data: {value: "`+value+`", theirs: "x"}
`)
}

const (
	kubectlOwnsValue = `  - {manager: kubectl-edit, operation: Update, apiVersion: v1, fieldsType: FieldsV1, time: "2026-11-23T10:05:00Z",
     fieldsV1: {"f:data": {"f:value": {}}}}
`
	otherOwnsTheirs = `  - {manager: other, operation: Update, apiVersion: v1, fieldsType: FieldsV1, time: "2026-11-23T10:06:00Z",
     fieldsV1: {"f:data": {"f:theirs": {}}, "f:metadata": {"f:labels": {"f:team": {}}}}}
`
)

// compactPair compacts before, then after, and returns after's snapshot.
func compactPair(t *testing.T, before, after *unstructured.Unstructured) *Snapshot {
	t.Helper()
	c := NewCompactor()
	if _, err := c.Transform(before); err != nil {
		t.Fatal(err)
	}
	s, err := c.Transform(after)
	if err != nil {
		t.Fatal(err)
	}
	return s.(*Snapshot)
}

func TestCompactorChanges(t *testing.T) {
	base := configMap(t, "u1", "1", "declared", "")
	cases := []struct {
		name   string
		after  *unstructured.Unstructured
		fields []FieldChange
		author string
	}{
		{name: "an owned value edited by another manager",
			after:  configMap(t, "u1", "2", "edited", "", kubectlOwnsValue),
			fields: []FieldChange{{Path: ".data.value", Old: `"declared"`, New: `"edited"`}}, author: "kubectl-edit"},
		{name: "resourceVersion and managedFields churn", after: configMap(t, "u1", "2", "declared", "", otherOwnsTheirs)},
		{name: "a label and a value another manager added",
			after: func() *unstructured.Unstructured {
				u := configMap(t, "u1", "2", "declared", "", otherOwnsTheirs)
				l := u.GetLabels()
				l["team"] = "theirs"
				u.SetLabels(l)
				return u
			}()},
		{name: "status and an annotation of another manager",
			after: func() *unstructured.Unstructured {
				u := configMap(t, "u1", "2", "declared", "")
				a := u.GetAnnotations()
				a["controller"] = "was-here"
				u.SetAnnotations(a)
				u.Object["status"] = map[string]any{"phase": "Ready"}
				return u
			}()},
		{name: "Holdfast's own correction", after: configMap(t, "u1", "3", "declared", "")},
		{name: "a recreation (another uid) is no change", after: configMap(t, "u2", "5", "edited", "", kubectlOwnsValue)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := compactPair(t, base, c.after)
			p := s.pending.Load()
			if len(c.fields) == 0 {
				if p != nil {
					t.Fatalf("change %+v, want none", *p)
				}
				return
			}
			if p == nil {
				t.Fatal("no change")
			}
			if fmt.Sprint(p.fields) != fmt.Sprint(c.fields) || p.author.Manager != c.author {
				t.Fatalf("change %+v by %q, want %+v by %q", p.fields, p.author.Manager, c.fields, c.author)
			}
		})
	}
}

func TestCompactorCorrectionAfterDrift(t *testing.T) {
	c := NewCompactor()
	for _, u := range []*unstructured.Unstructured{
		configMap(t, "u1", "1", "declared", ""),
		configMap(t, "u1", "2", "edited", "", kubectlOwnsValue),
	} {
		_, _ = c.Transform(u)
	}
	// Holdfast applies again with force: it owns data.value again, at the declared value.
	s, _ := c.Transform(configMap(t, "u1", "3", "declared", ""))
	if p := s.(*Snapshot).pending.Load(); p != nil {
		t.Fatalf("Holdfast's correction reported as %+v", *p)
	}
}

func TestCompactorScaleThroughSubresource(t *testing.T) {
	version := func(text, rv string) *unstructured.Unstructured {
		u := parse(t, text)
		u.SetResourceVersion(rv)
		return u
	}
	s := compactPair(t, version(scaledBefore, "1"), version(scaledAfter, "2"))
	p := s.pending.Load()
	if p == nil || len(p.fields) != 1 || p.fields[0] != (FieldChange{Path: ".spec.replicas", Old: "2", New: "5"}) {
		t.Fatalf("change %+v, want .spec.replicas 2 -> 5", p)
	}
	if p.author.Manager != "kubectl" || p.author.Subresource != "scale" {
		t.Fatalf("author %+v, want kubectl through scale", p.author)
	}
	if got := compactPair(t, version(scaledAfter, "2"), version(scaledBefore, "3")).pending.Load(); got != nil {
		t.Fatalf("Holdfast's correction of the scale reported as %+v", *got)
	}
}

func TestCompactorIsIdempotent(t *testing.T) {
	c := NewCompactor()
	first, _ := c.Transform(configMap(t, "u1", "1", "declared", ""))
	again, _ := c.Transform(first)
	if again != first {
		t.Fatal("a snapshot was compacted again")
	}
	relisted, _ := c.Transform(configMap(t, "u1", "1", "declared", ""))
	if relisted != first {
		t.Fatal("the same version, listed again, made a new snapshot")
	}
	typed := &struct{ name string }{"not unstructured"}
	if other, _ := c.Transform(typed); other != any(typed) {
		t.Fatal("an object that is not unstructured was changed")
	}
}

func TestSnapshotKeepsWhatDriftNeeds(t *testing.T) {
	u := configMap(t, "u1", "7", "declared", "")
	u.Object["status"] = map[string]any{"big": strings.Repeat("x", 10000)}
	s, _ := NewCompactor().Transform(u)
	snap := s.(*Snapshot)
	o := snap.Object()
	if o.GetAPIVersion() != "v1" || o.GetKind() != "ConfigMap" || o.GetNamespace() != "demo" || o.GetName() != "web" ||
		o.GetUID() != "u1" || o.GetResourceVersion() != "7" {
		t.Fatalf("identity lost: %v", o.Object)
	}
	if fmt.Sprint(o.GetLabels()) != "map[holdfast.dev/managed-by:holdfast holdfast.dev/service:web]" ||
		fmt.Sprint(o.GetAnnotations()) != "map[holdfast.dev/multiclusterservice:shop]" {
		t.Fatalf("labels %v, annotations %v: want only Holdfast's", o.GetLabels(), o.GetAnnotations())
	}
	want, err := fieldset.OwnedDigest(u, fieldset.FieldManager)
	if err != nil {
		t.Fatal(err)
	}
	if snap.OwnedDigest() != want || want == "" {
		t.Fatalf("digest %q, want fieldset.OwnedDigest %q", snap.OwnedDigest(), want)
	}
	if len(snap.values()) > 200 {
		t.Fatalf("owned values take %d bytes: %q", len(snap.values()), snap.values())
	}
}

func TestSnapshotHoldsNoSecretValue(t *testing.T) {
	// kubectl-edit's Update takes the field it changes from Holdfast, as the API server does.
	secret := func(rv, password, holdfastFields string, entries ...string) *unstructured.Unstructured {
		return parse(t, `apiVersion: v1
kind: Secret
metadata:
  name: creds
  namespace: demo
  uid: s1
  resourceVersion: "`+rv+`"
  managedFields:
  - {manager: holdfast, operation: Apply, apiVersion: v1, fieldsType: FieldsV1, fieldsV1: `+holdfastFields+`}
`+strings.Join(entries, "")+`data: {password: `+base64.StdEncoding.EncodeToString([]byte(password))+`}
`)
	}
	c := NewCompactor()
	first, _ := c.Transform(secret("1", "declared-secret-value", `{"f:data": {"f:password": {}}}`))
	second, _ := c.Transform(secret("2", "hand-typed-secret-value", `{"f:metadata": {"f:labels": {}}}`, `  - {manager: kubectl-edit, operation: Update, apiVersion: v1, fieldsType: FieldsV1, fieldsV1: {"f:data": {"f:password": {}}}}
`))
	for _, s := range []any{first, second} {
		snap := s.(*Snapshot)
		text := fmt.Sprintf("%#v %s %s %s", snap.Object().Object, snap.values(), snap.fieldSet.Value(), snap.OwnedDigest())
		for _, plain := range []string{"declared-secret-value", "hand-typed-secret-value"} {
			if strings.Contains(text, plain) || strings.Contains(text, base64.StdEncoding.EncodeToString([]byte(plain))) {
				t.Fatalf("the snapshot holds %q: %s", plain, text)
			}
		}
	}
	p := second.(*Snapshot).pending.Load()
	if p == nil || len(p.fields) != 1 || p.fields[0] != (FieldChange{Path: ".data.password", Old: Redacted, New: Redacted}) {
		t.Fatalf("change %+v, want .data.password, redacted", p)
	}
}

func TestLongValuesAreHashedAndShownTruncated(t *testing.T) {
	long := strings.Repeat("a", 600)
	s := compactPair(t, configMap(t, "u1", "1", long, ""), configMap(t, "u1", "2", long+"b", "", kubectlOwnsValue))
	if len(s.values()) > maxValue+100 {
		t.Fatalf("a long value takes %d bytes", len(s.values()))
	}
	p := s.pending.Load()
	if p == nil || len(p.fields) != 1 {
		t.Fatalf("change %+v, want one field: the values differ only after the shown part", p)
	}
	if f := p.fields[0]; f.Old != `"`+long[:maxValue-1]+"…" || f.New != f.Old {
		t.Fatalf("shown %q -> %q, want the first %d bytes of the JSON", f.Old, f.New, maxValue)
	}
}

// TestOwnNewDeclarationIsNoDrift: Holdfast applying a new declared value changes a field it
// keeps owning; another manager's Update takes the field with it. Only the latter is drift.
func TestOwnNewDeclarationIsNoDrift(t *testing.T) {
	cm := func(rv, value string, entries string) *unstructured.Unstructured {
		return parse(t, `apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: demo
  uid: c1
  resourceVersion: "`+rv+`"
  managedFields:
`+entries+`data: {level: `+value+`}
`)
	}
	const mine = "  - {manager: holdfast, operation: Apply, apiVersion: v1, fieldsType: FieldsV1, fieldsV1: {\"f:data\": {\"f:level\": {}}}}\n"
	const lost = "  - {manager: holdfast, operation: Apply, apiVersion: v1, fieldsType: FieldsV1, fieldsV1: {\"f:data\": {}}}\n" +
		"  - {manager: kubectl-edit, operation: Update, apiVersion: v1, fieldsType: FieldsV1, fieldsV1: {\"f:data\": {\"f:level\": {}}}}\n"
	c := NewCompactor()
	_, _ = c.Transform(cm("1", "info", mine))
	redeclared, _ := c.Transform(cm("2", "debug", mine))
	// Holdfast's field manager holds the new value: claimed, which is no drift once the
	// handler knows Holdfast wrote it (OwnWrites).
	if p := redeclared.(*Snapshot).pending.Load(); p != nil && !p.claimed {
		t.Fatalf("Holdfast's own new declaration reported as drift: %+v", p.fields)
	}
	if v := Decide(Declaration(cm("1", "info", "")), cm("2", "debug", mine), nil); v.Drifted || v.ResolveClaim(true).Drifted {
		t.Fatalf("Decide on Holdfast's own new declaration = %+v; want no drift", v)
	}
	if v := Decide(Declaration(cm("2", "debug", "")), cm("3", "trace", lost), nil); !v.Drifted || len(v.Fields) != 1 || v.Fields[0].Path != ".data.level" {
		t.Fatalf("Decide on an edit by another manager = %+v; want .data.level", v)
	}
	edited, _ := c.Transform(cm("3", "trace", lost))
	p := edited.(*Snapshot).pending.Load()
	if p == nil || len(p.fields) != 1 || p.fields[0] != (FieldChange{Path: ".data.level", Old: `"debug"`, New: `"trace"`}) || p.author.Manager != "kubectl-edit" {
		t.Fatalf("edit by another manager: %+v, want .data.level debug -> trace by kubectl-edit", p)
	}
}

// A write under Holdfast's field manager name keeps the field in Holdfast's set: the watch
// reports it claimed, with Holdfast's apply entry as its author, and it is drift unless
// Holdfast made it.
func TestWriteUnderHoldfastsNameIsClaimed(t *testing.T) {
	cm := func(rv, value, at string) *unstructured.Unstructured {
		return parse(t, `apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: demo
  uid: c1
  resourceVersion: "`+rv+`"
  managedFields:
  - {manager: holdfast, operation: Apply, apiVersion: v1, fieldsType: FieldsV1, time: "`+at+`", fieldsV1: {"f:data": {"f:level": {}}}}
data: {level: `+value+`}
`)
	}
	c := NewCompactor()
	_, _ = c.Transform(cm("1", "info", "2026-11-23T10:00:00Z"))
	claimed, _ := c.Transform(cm("2", "trace", "2026-11-23T10:05:00Z"))
	p := claimed.(*Snapshot).pending.Load()
	want := FieldChange{Path: ".data.level", Old: `"info"`, New: `"trace"`}
	if p == nil || !p.claimed || len(p.fields) != 1 || p.fields[0] != want || p.author.Manager != fieldset.FieldManager || p.author.Operation != "Apply" {
		t.Fatalf("write under Holdfast's name: %+v, want .data.level claimed by holdfast's Apply entry", p)
	}
	v := Decide(Declaration(cm("1", "info", "")), cm("2", "trace", "2026-11-23T10:05:00Z"), nil)
	if v.Drifted || len(v.Claimed) != 1 {
		t.Fatalf("Decide = %+v, want .data.level claimed", v)
	}
	if got := v.ResolveClaim(false); !got.Drifted || len(got.Fields) != 1 || got.Fields[0].Path != ".data.level" ||
		got.Author.Manager != fieldset.FieldManager || got.Author.Time.IsZero() {
		t.Fatalf("not Holdfast's own write: %+v, want drift on .data.level by holdfast", got)
	}
	if got := v.ResolveClaim(true); got.Drifted || len(got.Claimed) != 0 {
		t.Fatalf("Holdfast's own write: %+v, want no drift", got)
	}
}

// A binary value (a ConfigMap's binaryData) that changed is shown as its decoded size and
// SHA-256, on both paths that find drift (a watch's snapshots and a comparison), never as its
// base64 text; a change only past the first bytes is still seen.
func TestBinaryValuesAreShownAsDigests(t *testing.T) {
	declared := make([]byte, 3000)
	edited := append([]byte{}, declared...)
	edited[2999] = 1
	binary := func(rv string, b []byte, holdfastFields string, entries ...string) *unstructured.Unstructured {
		return parse(t, `apiVersion: v1
kind: ConfigMap
metadata:
  name: blob
  namespace: demo
  uid: b1
  resourceVersion: "`+rv+`"
  managedFields:
  - {manager: holdfast, operation: Apply, apiVersion: v1, fieldsType: FieldsV1, fieldsV1: `+holdfastFields+`}
`+strings.Join(entries, "")+`binaryData: {firmware: `+base64.StdEncoding.EncodeToString(b)+`}
`)
	}
	s := compactPair(t, binary("1", declared, `{"f:binaryData": {"f:firmware": {}}}`),
		binary("2", edited, `{"f:metadata": {"f:labels": {}}}`, `  - {manager: kubectl-edit, operation: Update, apiVersion: v1, fieldsType: FieldsV1, fieldsV1: {"f:binaryData": {"f:firmware": {}}}}
`))
	p := s.pending.Load()
	if p == nil || len(p.fields) != 1 {
		t.Fatalf("change %+v, want .binaryData.firmware", p)
	}
	want := FieldChange{Path: ".binaryData.firmware", Old: ShowBinary(base64.StdEncoding.EncodeToString(declared)),
		New: ShowBinary(base64.StdEncoding.EncodeToString(edited))}
	if p.fields[0] != want {
		t.Fatalf("change %+v, want %+v", p.fields[0], want)
	}
	if !strings.HasPrefix(want.New, "<binary: 3000 bytes, sha256:") || want.Old == want.New {
		t.Fatalf("shown %q and %q", want.Old, want.New)
	}
	for _, f := range []string{want.Old, want.New, s.values()} {
		if strings.Contains(f, "AAAA") {
			t.Fatalf("base64 text shown: %.80s", f)
		}
	}

	compared := Compare(binary("1", declared, `{}`), binary("2", edited, `{}`))
	if len(compared) != 1 || compared[0] != want {
		t.Fatalf("comparison %+v, want %+v", compared, want)
	}
}

func TestShowBinaryText(t *testing.T) {
	hello := base64.StdEncoding.EncodeToString([]byte("hello"))
	for shown, want := range map[string]string{
		"":                      "",
		`"` + hello + `"`:       "<binary: 5 bytes, sha256:2cf24dba5fb0a30e…>", // sha256sum of "hello"
		`"` + hello[:3] + "…":   "<binary>",
		"<binary: 5 bytes, x…>": "<binary: 5 bytes, x…>",
		`{"a":"` + hello + `"}`: "<binary: 5 bytes, sha256:2cf24dba5fb0a30e…>",
	} {
		if got := ShowBinaryText(shown); got != want {
			t.Errorf("ShowBinaryText(%q) = %q, want %q", shown, got, want)
		}
	}
	for path, want := range map[string]bool{".binaryData.x": true, "/binaryData/x": true, ".binaryData": true, ".binaryDataX": false,
		".webhooks[name=\"a\"].clientConfig.caBundle": true, ".spec.caBundle": true, ".data.caBundleX": false, ".data.x": false} {
		if got := BinaryValuePath(path); got != want {
			t.Errorf("BinaryValuePath(%q) = %v, want %v", path, got, want)
		}
	}
}
