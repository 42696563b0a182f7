package rollout

import (
	"encoding/json"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/runtime"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/naming"
)

// TestVerify: a revision is used only when it is the service set's (label, controller with its
// UID) and its data is what its name stands for, decoded and encoded again; a revision named
// before the digest grew to 128 bits is checked against its 40.
func TestVerify(t *testing.T) {
	mcs := &holdfastv1.MultiClusterService{}
	mcs.Name, mcs.UID = "platform", "uid-1"
	svc := []holdfastv1.Service{{Name: "web", Template: holdfastv1.TemplateReference{Namespace: "t", Name: "web"}}}
	tpl := &holdfastv1.ServiceTemplate{Spec: holdfastv1.ServiceTemplateSpec{Inline: "kind: ConfigMap # <&>"}}
	tpl.Namespace, tpl.Name = "t", "web"
	snap, err := NewSnapshot(svc, holdfastv1.ClusterSelector{}, map[string]*holdfastv1.ServiceTemplate{"t/web": tpl})
	if err != nil {
		t.Fatal(err)
	}
	data, name, err := snap.Encode(mcs.Name)
	if err != nil {
		t.Fatal(err)
	}
	made := func() *appsv1.ControllerRevision { return NewControllerRevision(mcs, "team", name, data, 1) }
	tampered := snap.Templates[0].DeepCopy()
	tampered.Spec.Inline = "kind: Secret"
	forgedData, err := json.Marshal(&Snapshot{Services: svc, Templates: []holdfastv1.ServiceTemplate{*tampered}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		what   string
		change func(cr *appsv1.ControllerRevision)
		refuse string
	}{
		{what: "as made", change: func(*appsv1.ControllerRevision) {}},
		{what: "indented the same data", change: func(cr *appsv1.ControllerRevision) {
			var v any
			_ = json.Unmarshal(cr.Data.Raw, &v)
			cr.Data.Raw, _ = json.MarshalIndent(v, "", "  ")
		}},
		{what: "named with the 40-bit digest of before", change: func(cr *appsv1.ControllerRevision) {
			cr.Name = naming.RevisionName(mcs.Name, digest(data)[:legacyDigestChars])
		}},
		{what: "other data under its name", change: func(cr *appsv1.ControllerRevision) { cr.Data = runtime.RawExtension{Raw: forgedData} },
			refuse: "its data does not match its name"},
		{what: "not a snapshot", change: func(cr *appsv1.ControllerRevision) { cr.Data = runtime.RawExtension{Raw: []byte(`[1]`)} },
			refuse: "does not hold a revision of services"},
		{what: "a digest shorter than 40 bits of other data", change: func(cr *appsv1.ControllerRevision) {
			cr.Name = naming.RevisionName(mcs.Name, digest(forgedData)[:legacyDigestChars-1])
			cr.Data = runtime.RawExtension{Raw: forgedData}
		}, refuse: "its data does not match its name"},
		{what: "another set's label", change: func(cr *appsv1.ControllerRevision) { cr.Labels[holdfastv1.RevisionLabel] = "other" },
			refuse: `its label holdfast.dev/revision-of is "other", not "platform"`},
		{what: "an owner of the same name with another UID", change: func(cr *appsv1.ControllerRevision) { cr.OwnerReferences[0].UID = "uid-0" },
			refuse: "it is not controlled by MultiClusterService platform (UID uid-1)"},
		{what: "no controller", change: func(cr *appsv1.ControllerRevision) { cr.OwnerReferences = nil },
			refuse: "it is not controlled by MultiClusterService platform"},
	} {
		t.Run(tc.what, func(t *testing.T) {
			cr := made()
			tc.change(cr)
			if holds := Holds(cr, mcs, data); holds != (tc.refuse == "" && string(cr.Data.Raw) == string(data)) {
				t.Errorf("Holds = %v", holds)
			}
			got, err := Verify(cr, mcs)
			if tc.refuse == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if got.Templates[0].Spec.Inline != tpl.Spec.Inline {
					t.Fatalf("snapshot template %q, want %q", got.Templates[0].Spec.Inline, tpl.Spec.Inline)
				}
				return
			}
			if err == nil || got != nil {
				t.Fatalf("used: %+v", got)
			}
			if want := "ControllerRevision team/" + cr.Name + " is not a revision Holdfast made for MultiClusterService platform: "; !strings.HasPrefix(err.Error(), want) ||
				!strings.Contains(err.Error(), tc.refuse) {
				t.Fatalf("error %q, want %q ... %q", err, want, tc.refuse)
			}
		})
	}
}
