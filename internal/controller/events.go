package controller

import (
	"fmt"

	"holdfast.dev/holdfast/internal/textlimit"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
)

// MaxEventNote is the longest note the API server accepts in an Event (events.k8s.io/v1 refuses
// longer ones, and the Event is lost: "Server rejected event (will not retry!)").
const MaxEventNote = 1024

// eventRecorder is the manager's recorder named name, with every note cut to MaxEventNote, so
// that an Event whose message is a long condition message (say, twenty objects that failed to
// apply) is still recorded, shortened, rather than refused.
func eventRecorder(mgr ctrl.Manager, name string) events.EventRecorder {
	return truncatingRecorder{mgr.GetEventRecorder(name)}
}

type truncatingRecorder struct{ events.EventRecorder }

func (r truncatingRecorder) Eventf(regarding, related runtime.Object, eventtype, reason, action, note string, args ...any) {
	r.EventRecorder.Eventf(regarding, related, eventtype, reason, action, "%s", truncateNote(fmt.Sprintf(note, args...)))
}

// truncateNote cuts s to at most MaxEventNote bytes, ending with "…" when cut.
func truncateNote(s string) string {
	return textlimit.Cut(s, MaxEventNote, "…")
}
