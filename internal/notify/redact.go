package notify

import (
	"encoding/base64"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Redacted replaces every value of a Secret's fields in a notification. It is the marker the
// drift package writes in status, so a value already redacted there reads the same.
const Redacted = "<redacted>"

// isSecret reports whether ref names a core/v1 Secret.
func (e Event) isSecret() bool {
	return e.Object.Group == "" && e.Object.Kind == "Secret"
}

// redact returns a copy of e in which, for a Secret, every old and new value is Redacted, and
// any of those values quoted in the message too. Callers are expected to have redacted already;
// this is the last line of defence before the event leaves the cluster.
func redact(e Event) Event {
	e = e.deepCopy()
	if !e.isSecret() || e.Drift == nil {
		return e
	}
	var values []string
	for i := range e.Drift.Fields {
		f := &e.Drift.Fields[i]
		for _, v := range []*string{&f.Old, &f.New} {
			if *v == "" || *v == Redacted {
				continue
			}
			values = append(values, spellings(*v)...)
			*v = Redacted
		}
	}
	for _, v := range values {
		e.Message = strings.ReplaceAll(e.Message, v, Redacted)
	}
	return e
}

// spellings returns the ways a field value (JSON) may have been written into a message: as it
// is, unquoted, and base64-decoded as Secret data is. Longest first, so that a longer spelling is
// replaced before a shorter one inside it.
func spellings(v string) []string {
	out := []string{v}
	s, err := strconv.Unquote(v)
	if err != nil || s == "" {
		return out
	}
	out = append(out, s)
	if b, err := base64.StdEncoding.DecodeString(s); err == nil && len(b) > 0 && utf8.Valid(b) {
		if d := string(b); len(d) < len(s) {
			out = append(out, d)
		}
	}
	return out
}

// Redact returns a copy of e with the values of a Secret's fields replaced by Redacted, as Send
// does: for callers that look at an event's text before sending it.
func Redact(e Event) Event { return redact(e) }
