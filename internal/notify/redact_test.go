package notify

import (
	"testing"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

func TestRedact(t *testing.T) {
	const plain = "hunter2-s3cret"
	cases := []struct {
		name        string
		event       Event
		wantFields  []holdfastv1.FieldChange
		wantMessage string
	}{
		{
			name:  "Secret values and their spellings in the message",
			event: secretDrift(plain),
			wantFields: []holdfastv1.FieldChange{
				{Path: ".data.password", Old: Redacted, New: Redacted},
				{Path: ".data.token", New: Redacted},
			},
			wantMessage: "password set to " + Redacted + " (" + Redacted + ")",
		},
		{
			name: "values already redacted stay so",
			event: func() Event {
				e := secretDrift(plain)
				e.Drift.Fields = []holdfastv1.FieldChange{{Path: ".data.password", Old: Redacted, New: Redacted}}
				e.Message = ""
				return e
			}(),
			wantFields: []holdfastv1.FieldChange{{Path: ".data.password", Old: Redacted, New: Redacted}},
		},
		{
			name:        "other kinds are not touched",
			event:       deploymentDrift(),
			wantFields:  []holdfastv1.FieldChange{{Path: ".spec.replicas", Old: "3", New: "5"}},
			wantMessage: "",
		},
		{
			name: "a Secret of another group is not a core Secret",
			event: func() Event {
				e := deploymentDrift()
				e.Object.Group, e.Object.Kind = "example.com", "Secret"
				return e
			}(),
			wantFields: []holdfastv1.FieldChange{{Path: ".spec.replicas", Old: "3", New: "5"}},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := c.event.deepCopy()
			got := redact(c.event)
			if len(got.Drift.Fields) != len(c.wantFields) {
				t.Fatalf("fields = %v, want %v", got.Drift.Fields, c.wantFields)
			}
			for i, f := range got.Drift.Fields {
				if f != c.wantFields[i] {
					t.Errorf("field %d = %+v, want %+v", i, f, c.wantFields[i])
				}
			}
			if got.Message != c.wantMessage {
				t.Errorf("message = %q, want %q", got.Message, c.wantMessage)
			}
			if c.event.Drift.Fields[0] != in.Drift.Fields[0] {
				t.Errorf("redact changed the caller's event")
			}
		})
	}
}
