package notify

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// Bounds that keep a summary to a few lines.
const (
	summaryMaxFields = 5
	summaryMaxValue  = 80
)

// truncatedMarker ends a text cut to a receiver's size limit.
const truncatedMarker = "… (truncated)"

// summary is the readable text every chat, paging and mail receiver shows: what happened where,
// to which object and by whom, the fields with old → new values, and whether the object was put
// back; an AlertRule's summary line follows the title. bold marks the title up in the receiver's dialect (plain for receivers without markup);
// escaping the rest is the receiver's business.
func summary(e Event, bold func(string) string) string {
	text := eventText(e, bold)
	if e.Summary == "" {
		return text
	}
	first, rest, _ := strings.Cut(text, "\n")
	return strings.TrimSuffix(first+"\n"+e.Summary+"\n"+rest, "\n")
}

// eventText is summary without the rule's summary line.
func eventText(e Event, bold func(string) string) string {
	if e.Rollout != nil && e.Type == RolloutHalted {
		return rolloutText(e, bold)
	}
	lines := []string{bold(title(e.Type)) + " " + whereText(e)}
	if e.Object.Kind != "" {
		lines = append(lines, objectLine(e))
	}
	if e.Drift != nil {
		for i, f := range e.Drift.Fields {
			if i == summaryMaxFields {
				lines = append(lines, fmt.Sprintf("• and %d more fields", len(e.Drift.Fields)-i))
				break
			}
			lines = append(lines, fmt.Sprintf("• %s: %s → %s", f.Path, shortValue(f.Old), shortValue(f.New)))
		}
	}
	if e.Object.Kind != "" {
		lines = append(lines, outcomeLine(e))
	}
	if e.Message != "" {
		lines = append(lines, e.Message)
	}
	return strings.Join(lines, "\n")
}

// headline is a one-line summary, for a mail's subject and an alert's title.
func headline(e Event) string {
	s := title(e.Type) + ": "
	switch {
	case e.Object.Kind != "":
		s += objectName(e.Object) + " on cluster " + e.Cluster.String()
	case e.Cluster.Name != "":
		s += "service set " + e.MultiClusterService + " on cluster " + e.Cluster.String()
	default:
		s += "service set " + e.MultiClusterService
	}
	return s
}

// whereText names the cluster, service set and service of e.
func whereText(e Event) string {
	where := fmt.Sprintf("on cluster %s, service set %s", e.Cluster, e.MultiClusterService)
	if e.Cluster.Name == "" {
		where = "service set " + e.MultiClusterService
	}
	if e.Service != "" {
		where += ", service " + e.Service
	}
	return where
}

func title(t EventType) string {
	switch t {
	case DriftDetected:
		return "Drift detected"
	case DriftCorrected:
		return "Drift corrected"
	case Contested:
		return "Drift contested"
	case Resumed:
		return "Drift correction resumed"
	case CorrectionFailed:
		return "Drift correction failed"
	case RolloutHalted:
		return "Rollout halted"
	case RolloutProgressing:
		return "Rollout in progress"
	case RolloutComplete:
		return "Rollout complete"
	case ClusterUnreachable:
		return "Cluster unreachable"
	case Unhealthy:
		return "Unhealthy"
	}
	return string(t)
}

// rolloutText says which rollout halted where, and the clusters that failed.
func rolloutText(e Event, bold func(string) string) string {
	ro := e.Rollout
	lines := []string{fmt.Sprintf("%s service set %s: revision %s halted at wave %s; the clusters not reached keep revision %s",
		bold(title(e.Type)), e.MultiClusterService, ro.Revision, ro.Wave, ro.StableRevision)}
	for i, f := range ro.Failed {
		if i == summaryMaxFields {
			lines = append(lines, fmt.Sprintf("• and %d more clusters", len(ro.Failed)-i))
			break
		}
		lines = append(lines, fmt.Sprintf("• %s: %s: %s", f.Cluster, f.Reason, f.Message))
	}
	return strings.Join(append(lines, fmt.Sprintf("`holdfast rollout resume %[1]s` goes on; `holdfast rollout abort %[1]s` goes back.", e.MultiClusterService)), "\n")
}

// objectName is the kind and namespaced name of o.
func objectName(o holdfastv1.ResourceRef) string {
	if o.Namespace != "" {
		return o.Kind + " " + o.Namespace + "/" + o.Name
	}
	return o.Kind + " " + o.Name
}

// objectLine names the object and who changed it.
func objectLine(e Event) string {
	o := e.Object
	gv := o.Version
	if o.Group != "" {
		gv = o.Group + "/" + o.Version
	}
	s := fmt.Sprintf("%s (%s)", objectName(o), gv)
	d := e.Drift
	if d == nil {
		return s
	}
	if d.Type == holdfastv1.DriftDeleted {
		s += " was deleted"
	} else {
		s += " was changed"
	}
	if d.User != "" {
		s += " by " + d.User + " via " + firstOf(d.Manager, "unknown manager")
	} else if d.Manager != "" {
		s += " by " + d.Manager
	}
	if d.Manager != "" {
		var how []string
		if d.Operation != "" {
			how = append(how, d.Operation)
		}
		if d.Subresource != "" {
			how = append(how, "subresource "+d.Subresource)
		}
		if len(how) > 0 {
			s += " (" + strings.Join(how, ", ") + ")"
		}
	}
	if d.Detection == holdfastv1.DriftDetectedByComparison {
		s += "; found by comparison, time of change unknown"
	}
	return s
}

// outcomeLine says whether the object was put back.
func outcomeLine(e Event) string {
	switch e.Type {
	case Contested:
		return "Contested: another field manager keeps reverting Holdfast's corrections. Holdfast corrects this object with a backoff from now on, or, with fight action Stop, not until a reconcile is requested (the message says which)."
	case Resumed:
		return "Holdfast corrects this object again."
	case CorrectionFailed:
		return "Not corrected: the API server refused the correction. Holdfast retries with backoff."
	}
	if e.CorrectedTime == nil {
		return "Not corrected yet."
	}
	s := "Corrected at " + formatTime(*e.CorrectedTime)
	if e.Drift != nil && !e.Drift.DetectedTime.IsZero() {
		if d := e.CorrectedTime.Sub(e.Drift.DetectedTime.Time); d >= 0 {
			s += fmt.Sprintf(", %s after detection", d.Round(time.Millisecond))
		}
	}
	return s + "."
}

func formatTime(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05.000 UTC") }

// shortValue shows a field's JSON value, shortened; an absent field shows as (absent).
func shortValue(v string) string {
	if v == "" {
		return "(absent)"
	}
	if r := []rune(v); len(r) > summaryMaxValue {
		return string(r[:summaryMaxValue]) + "…"
	}
	return v
}

// firstOf is a, or b when a is empty.
func firstOf(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// plain leaves a title as it is, for receivers that show text without markup.
func plain(s string) string { return s }

// markdownBold marks a title up as Markdown (Discord, Mattermost, Teams).
func markdownBold(s string) string { return "**" + s + "**" }

// Units in which receivers measure their limits.
var (
	// bytesOf counts UTF-8 bytes, for limits on the size of a request or field.
	bytesOf = utf8.RuneLen
	// charactersOf counts UTF-16 code units, which is how JavaScript and Telegram count
	// characters: never fewer than runes, so a text within it is within a limit in runes too.
	charactersOf = utf16.RuneLen
)

// truncate cuts s to at most max units of size, ending it with truncatedMarker when cut. It cuts
// between runes, never inside a multi-byte character. Invalid UTF-8 counts as U+FFFD.
func truncate(s string, max int, size func(rune) int) string {
	total := 0
	for _, r := range s {
		total += max1(size(r))
	}
	if total <= max {
		return s
	}
	budget := max
	for _, r := range truncatedMarker {
		budget -= size(r)
	}
	used := 0
	for i, r := range s {
		if used+max1(size(r)) > budget {
			return s[:i] + truncatedMarker
		}
		used += max1(size(r))
	}
	return s
}

// max1 is n, at least 1: utf8.RuneLen and utf16.RuneLen return -1 for an invalid rune.
func max1(n int) int { return max(n, 1) }
