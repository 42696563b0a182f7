package notify

import (
	"fmt"
	"strings"
	"time"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// Bounds that keep a Slack message to a few lines.
const (
	slackMaxFields = 5
	slackMaxValue  = 80
)

// slackBody is a Slack incoming-webhook message: {"text": ...}.
func slackBody(e Event) ([]byte, error) {
	return encodeJSON(struct {
		Text string `json:"text"`
	}{slackText(e)})
}

// slackText summarises e in a few lines of Slack mrkdwn: what happened where, to which object and
// by whom, the fields with old → new values, and whether the object was put back.
func slackText(e Event) string {
	if e.Rollout != nil {
		return slackEscape(rolloutText(e))
	}
	var lines []string
	where := fmt.Sprintf("on cluster %s, service set %s", e.Cluster, e.MultiClusterService)
	if e.Service != "" {
		where += ", service " + e.Service
	}
	lines = append(lines, fmt.Sprintf("*%s* %s", slackTitle(e.Type), where))
	lines = append(lines, objectLine(e))
	if e.Drift != nil {
		for i, f := range e.Drift.Fields {
			if i == slackMaxFields {
				lines = append(lines, fmt.Sprintf("• and %d more fields", len(e.Drift.Fields)-i))
				break
			}
			lines = append(lines, fmt.Sprintf("• %s: %s → %s", f.Path, slackValue(f.Old), slackValue(f.New)))
		}
	}
	lines = append(lines, outcomeLine(e))
	if e.Message != "" {
		lines = append(lines, e.Message)
	}
	return slackEscape(strings.Join(lines, "\n"))
}

func slackTitle(t EventType) string {
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
func rolloutText(e Event) string {
	ro := e.Rollout
	lines := []string{fmt.Sprintf("*%s* service set %s: revision %s halted at wave %s; the clusters not reached keep revision %s",
		slackTitle(e.Type), e.MultiClusterService, ro.Revision, ro.Wave, ro.StableRevision)}
	for i, f := range ro.Failed {
		if i == slackMaxFields {
			lines = append(lines, fmt.Sprintf("• and %d more clusters", len(ro.Failed)-i))
			break
		}
		lines = append(lines, fmt.Sprintf("• %s: %s: %s", f.Cluster, f.Reason, f.Message))
	}
	return strings.Join(append(lines, fmt.Sprintf("`holdfast rollout resume %[1]s` goes on; `holdfast rollout abort %[1]s` goes back.", e.MultiClusterService)), "\n")
}

// objectLine names the object and who changed it.
func objectLine(e Event) string {
	o := e.Object
	name := o.Name
	if o.Namespace != "" {
		name = o.Namespace + "/" + o.Name
	}
	gv := o.Version
	if o.Group != "" {
		gv = o.Group + "/" + o.Version
	}
	s := fmt.Sprintf("%s %s (%s)", o.Kind, name, gv)
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
	s := "Corrected at " + slackTime(*e.CorrectedTime)
	if e.Drift != nil && !e.Drift.DetectedTime.IsZero() {
		if d := e.CorrectedTime.Sub(e.Drift.DetectedTime.Time); d >= 0 {
			s += fmt.Sprintf(", %s after detection", d.Round(time.Millisecond))
		}
	}
	return s + "."
}

func slackTime(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05.000 UTC") }

// slackValue shows a field's JSON value, shortened; an absent field shows as (absent).
func slackValue(v string) string {
	if v == "" {
		return "(absent)"
	}
	if r := []rune(v); len(r) > slackMaxValue {
		return string(r[:slackMaxValue]) + "…"
	}
	return v
}

// slackEscape escapes the three characters Slack reads as markup (links, mentions).
func slackEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// firstOf is a, or b when a is empty.
func firstOf(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
