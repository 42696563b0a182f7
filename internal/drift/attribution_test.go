package drift

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// edited is a ConfigMap alice edited with kubectl edit at 10:05:00, stamped by the attribution
// policy at that update.
const edited = `apiVersion: v1
kind: ConfigMap
metadata:
  name: web
  annotations: {holdfast.dev/changed-by: alice, holdfast.dev/changed-at: "2026-11-23T10:05:00Z"}
  managedFields:
  - {manager: holdfast, operation: Apply, apiVersion: v1, fieldsType: FieldsV1, time: "2026-11-23T10:00:00Z",
     fieldsV1: {"f:data": {"f:b": {}}}}
  - {manager: kubectl-edit, operation: Update, apiVersion: v1, fieldsType: FieldsV1, time: "2026-11-23T10:05:00Z",
     fieldsV1: {"f:data": {"f:a": {}}}}
data: {a: changed, b: "2"}
`

func TestStampedUser(t *testing.T) {
	at := func(s string) metav1.Time {
		tm, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return metav1.NewTime(tm)
	}
	cases := []struct {
		name        string
		by, stamped string
		changed     metav1.Time
		want        string
	}{
		{"stamp of this change", "alice", "2026-11-23T10:05:00Z", at("2026-11-23T10:05:00Z"), "alice"},
		{"stamp newer than the entry", "alice", "2026-11-23T10:05:01Z", at("2026-11-23T10:05:00Z"), "alice"},
		{"stamp of an earlier change", "alice", "2026-11-23T10:04:59Z", at("2026-11-23T10:05:00Z"), ""},
		{"stamp within the clock skew", "alice", "2026-11-23T10:05:02Z", at("2026-11-23T10:05:00Z"), "alice"},
		{"stamp dated after the change", "mallory", "2026-11-23T10:05:03Z", at("2026-11-23T10:05:00Z"), ""},
		{"stamp dated far ahead", "mallory", "2099-01-01T00:00:00Z", at("2026-11-23T10:05:00Z"), ""},
		{"no stamp", "", "", at("2026-11-23T10:05:00Z"), ""},
		{"no time", "alice", "", at("2026-11-23T10:05:00Z"), ""},
		{"bad time", "alice", "yesterday", at("2026-11-23T10:05:00Z"), ""},
		{"change time unknown", "alice", "2026-11-23T10:05:00Z", metav1.Time{}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			obj := parse(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
			ann := map[string]string{}
			if c.by != "" {
				ann[holdfastv1.ChangedByAnnotation] = c.by
			}
			if c.stamped != "" {
				ann[holdfastv1.ChangedAtAnnotation] = c.stamped
			}
			obj.SetAnnotations(ann)
			if got := StampedUser(obj, c.changed); got != c.want {
				t.Errorf("StampedUser = %q, want %q", got, c.want)
			}
		})
	}
}

func TestDecideNamesTheStampedUser(t *testing.T) {
	live := parse(t, edited)
	declared := parse(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\ndata: {a: \"1\", b: \"2\"}\n")
	v := Decide(Declaration(declared), live, nil)
	if !v.Drifted || v.Author.Manager != "kubectl-edit" || v.Author.User != "alice" {
		t.Fatalf("verdict = %+v, want drift by kubectl-edit, user alice", v)
	}
	if d := DetailOf(v, time.Now(), holdfastv1.DriftDetectedByWatch); d.User != "alice" || d.Manager != "kubectl-edit" {
		t.Errorf("detail = %+v, want user alice, manager kubectl-edit", d)
	}

	// A later scale through the subresource is not stamped: the stamp is not its user.
	scaled := parse(t, edited)
	mf := scaled.GetManagedFields()
	mf[1].Time = &metav1.Time{Time: mf[1].Time.Add(10 * time.Second)}
	scaled.SetManagedFields(mf)
	if v := Decide(Declaration(declared), scaled, nil); v.Author.User != "" {
		t.Errorf("user of a change newer than the stamp = %q, want none", v.Author.User)
	}
}

// The stamps are never drift, even when a template declares them.
func TestStampsAreNotDrift(t *testing.T) {
	live := parse(t, edited)
	declared := parse(t, `apiVersion: v1
kind: ConfigMap
metadata:
  name: web
  annotations: {holdfast.dev/changed-by: bob, holdfast.dev/changed-at: "2020-01-01T00:00:00Z"}
data: {a: changed, b: "2"}
`)
	if v := Decide(Declaration(declared), live, nil); v.Drifted {
		t.Errorf("stamps counted as drift: %+v", v.Fields)
	}
}

// A stamp is only as good as the policy that wrote it: where it is not in force, the user is
// unknown and the author is the field manager.
func TestTrustStamp(t *testing.T) {
	declared := parse(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\ndata: {a: \"1\", b: \"2\"}\n")
	v := Decide(Declaration(declared), parse(t, edited), nil)
	if got := v.TrustStamp(true); got.Author.User != "alice" || got.Author.Manager != "kubectl-edit" {
		t.Errorf("policy in force: author %+v, want alice with kubectl-edit", got.Author)
	}
	if got := v.TrustStamp(false); got.Author.User != "" || got.Author.Manager != "kubectl-edit" || !got.Drifted {
		t.Errorf("policy not in force: %+v, want the drift by kubectl-edit, no user", got)
	}
}
