package controller

import (
	"strings"
	"testing"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
)

type notes struct {
	events.EventRecorder
	got []string
}

func (n *notes) Eventf(_, _ runtime.Object, _, _, _, note string, args ...any) {
	if note != "%s" || len(args) != 1 {
		panic("the note must be passed through %s")
	}
	n.got = append(n.got, args[0].(string))
}

func TestEventNotesAreCutToWhatTheAPIServerAccepts(t *testing.T) {
	long := strings.Repeat("é", 700) // 1,400 bytes, two per rune
	for _, tc := range []struct {
		name, format string
		args         []any
		want         func(string) bool
	}{
		{"short notes are kept", "%d objects applied", []any{3}, func(s string) bool { return s == "3 objects applied" }},
		{"exactly the limit is kept", "%s", []any{strings.Repeat("a", MaxEventNote)}, func(s string) bool { return s == strings.Repeat("a", MaxEventNote) }},
		{"long notes are cut on a rune boundary", "failed: %s", []any{long}, func(s string) bool {
			return len(s) <= MaxEventNote && utf8.ValidString(s) && strings.HasSuffix(s, "…") && strings.HasPrefix(s, "failed: éé")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := &notes{}
			truncatingRecorder{n}.Eventf(&corev1.ConfigMap{}, nil, corev1.EventTypeWarning, "Reason", "Action", tc.format, tc.args...)
			if len(n.got) != 1 || !tc.want(n.got[0]) {
				t.Fatalf("recorded %q (%d bytes)", n.got, len(n.got[0]))
			}
		})
	}
}
