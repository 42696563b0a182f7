package fleetview

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"k8s.io/apimachinery/pkg/util/duration"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// maxValueWidth bounds an old or new value in a table; -o json shows them whole.
const maxValueWidth = 48

// newTable starts a table with its header row; when there are no rows it writes empty instead
// and returns nil.
func newTable(w io.Writer, rows int, empty, header string) (*tabwriter.Writer, error) {
	if rows == 0 {
		_, err := fmt.Fprintln(w, empty)
		return nil, err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	_, err := fmt.Fprintln(tw, header)
	return tw, err
}

// endTable writes the rows, then the summary line after a blank one.
func endTable(tw *tabwriter.Writer, w io.Writer, summary string) error {
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "\n%s.\n", summary)
	return err
}

// modeString is a row's sync mode, and whether the service set or the Cluster is paused.
func modeString(r ServiceState) string {
	if r.Paused {
		return OrDash(r.SyncMode) + " (paused)"
	}
	return OrDash(r.SyncMode)
}

// PrintFleetStatus writes one row per (cluster, service set, service) and a summary line.
func PrintFleetStatus(w io.Writer, fs FleetStatus, now time.Time) error {
	tw, err := newTable(w, len(fs.Items), "No service set is deployed to a matching cluster.",
		"CLUSTER\tSERVICE SET\tSERVICE\tREADY\tREASON\tHEALTH\tMODE\tOBJECTS\tDRIFTED\tLAST DRIFT\tMESSAGE")
	if tw == nil || err != nil {
		return err
	}
	for _, r := range fs.Items {
		mode := modeString(r)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%s\t%s\n", clusterString(r.Location), r.ServiceSet, OrDash(r.Service),
			r.Ready, OrDash(r.Reason), OrDash(r.Health), mode, r.Objects, r.DriftedObjects, Ago(r.LastDriftTime, now),
			OrDash(Truncate(serviceMessage(r.Message, r.HealthMessage), 60)))
	}
	return endTable(tw, w, fleetSummaryLine(fs.Summary))
}

// serviceMessage is what a service row says: its readiness message, or, for a service in place
// but not healthy, why it is not.
func serviceMessage(message, healthMessage string) string {
	if message == "" {
		return healthMessage
	}
	return message
}

// fleetSummaryLine is the line under the status tables.
func fleetSummaryLine(s FleetSummary) string {
	line := fmt.Sprintf("%s, %s, %s: %d ready, %d not ready; ", Count(s.Clusters, "cluster"), Count(s.ServiceSets, "service set"),
		Count(s.Services, "service"), s.Ready, s.NotReady)
	if s.DriftedObjects == 0 {
		return line + "no drifted objects"
	}
	return line + fmt.Sprintf("%s on %s", Count(s.DriftedObjects, "drifted object"), Count(s.ClustersWithDrift, "cluster"))
}

// PrintDriftList writes one row per drifted object, and one more row per further changed field,
// so that every changed field shows as `path: old -> new`.
func PrintDriftList(w io.Writer, dl DriftList, now time.Time) error {
	tw, err := newTable(w, len(dl.Items), "No drifted objects.",
		"CLUSTER\tSERVICE SET\tSERVICE\tOBJECT\tSTATE\tDETECTED\tAUTHOR\tDIFF")
	if tw == nil || err != nil {
		return err
	}
	for _, it := range dl.Items {
		detected, author := "-", "-"
		var lines []string
		if d := it.Drift; d != nil {
			detected, author, lines = detectedAgo(d, now), d.Author(), diffLines(d, maxValueWidth)
		}
		if it.Message != "" {
			lines = append(lines, "# "+Truncate(it.Message, 100))
		}
		writeRows(tw, []string{clusterString(it.Location), it.ServiceSet, OrDash(it.Service),
			objectString(it.Object), stateString(it), detected, author}, lines)
	}
	return endTable(tw, w, driftSummaryLine(dl))
}

// stateString is the item's state; for a drift that is over, how it ended and after how long.
func stateString(it DriftedObject) string {
	d := it.Drift
	if d == nil || it.State != stateCorrected {
		return it.State
	}
	state := it.State
	if d.Resolution == string(holdfastv1.DriftRestored) {
		state = restoredString(d)
	}
	if d.CorrectionLatencySeconds != nil {
		state += " in " + Latency(*d.CorrectionLatencySeconds)
	}
	return state
}

// restoredString says that someone other than Holdfast put the object back, and who.
func restoredString(d *Drift) string {
	if d.RestoredBy == "" {
		return "Restored by someone else"
	}
	return "Restored by " + d.RestoredBy
}

// writeRows writes the cells and the first of lines as one row, then each further line on a row
// of its own under the last column; "-" when there are no lines.
func writeRows(tw io.Writer, cells, lines []string) {
	if len(lines) == 0 {
		lines = []string{"-"}
	}
	lead := strings.Join(cells, "\t") + "\t"
	fmt.Fprintf(tw, "%s%s\n", lead, lines[0])
	indent := strings.Repeat("\t", len(cells))
	for _, l := range lines[1:] {
		fmt.Fprintf(tw, "%s%s\n", indent, l)
	}
}

// driftSummaryLine is the line under the drift tables.
func driftSummaryLine(dl DriftList) string {
	current, corrected, contested := 0, 0, 0
	for _, it := range dl.Items {
		switch {
		case it.State == stateCorrected:
			corrected++
		case it.State == string(holdfastv1.ResourceContested):
			contested++
			fallthrough
		default:
			current++
		}
	}
	line := Count(current, "drifted object")
	if contested > 0 {
		line += fmt.Sprintf(" (%d Contested)", contested)
	}
	if corrected > 0 {
		line += fmt.Sprintf(", %s", Count(corrected, "corrected drift"))
	}
	return line
}

// PrintDriftHistory writes one row per drift record, newest first.
func PrintDriftHistory(w io.Writer, h DriftHistory) error {
	tw, err := newTable(w, len(h.Items), "No drift records.",
		"DETECTED\tCLUSTER\tSERVICE SET\tSERVICE\tOBJECT\tCHANGE\tAUTHOR\tCORRECTED\tLATENCY")
	if tw == nil || err != nil {
		return err
	}
	for _, it := range h.Items {
		d := &it.Drift
		detected := d.DetectedTime.Format(time.RFC3339)
		if d.Detection == string(holdfastv1.DriftDetectedByComparison) {
			detected += " (comparison)"
		}
		change := diffLines(d, maxValueWidth)[0]
		if n := len(d.Fields); n > 1 {
			change += fmt.Sprintf(" (+%d more)", n-1)
		}
		corrected, latency := correctedStrings(d)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", detected, clusterString(it.Location), it.ServiceSet, OrDash(it.Service),
			objectString(it.Object), change, d.Author(), corrected, latency)
	}
	return endTable(tw, w, historySummaryLine(h))
}

// correctedStrings are the corrected time and the correction latency of d, or "-".
func correctedStrings(d *Drift) (corrected, latency string) {
	corrected, latency = "-", "-"
	if d.CorrectedTime != nil {
		corrected = d.CorrectedTime.Format(time.RFC3339)
		if d.Resolution == string(holdfastv1.DriftRestored) {
			corrected += " (" + restoredString(d) + ")"
		}
	}
	if d.CorrectionLatencySeconds != nil {
		latency = Latency(*d.CorrectionLatencySeconds)
	}
	return corrected, latency
}

// historySummaryLine is the line under the history tables.
func historySummaryLine(h DriftHistory) string {
	line := Count(len(h.Items), "drift record")
	if h.Total > len(h.Items) {
		line += fmt.Sprintf(" of %d (--limit 0 shows all)", h.Total)
	}
	return fmt.Sprintf("%s; each cluster keeps the last %d per service set", line, holdfastv1.MaxDriftRecords)
}

func clusterString(l Location) string { return l.ClusterNamespace + "/" + l.Cluster }

// objectString is kubectl's `Kind.group namespace/name`.
func objectString(o ObjectRef) string {
	kind := o.Kind
	if o.Group != "" {
		kind += "." + o.Group
	}
	if o.Namespace == "" {
		return kind + " " + o.Name
	}
	return kind + " " + o.Namespace + "/" + o.Name
}

// Author is who made the change: "manager (Operation/subresource)", "user via manager
// (Operation)" when the user is known (drift attribution), or "unknown" when the API server did
// not record who made it. The tables and the web view say it so.
func (d *Drift) Author() string {
	who := managerString(d)
	how := d.Operation
	if d.Subresource != "" {
		how += "/" + d.Subresource
	}
	if how != "" {
		who += " (" + how + ")"
	}
	return who
}

// diffLines is one `path: old -> new` per changed field, values cut to width bytes (0: whole);
// never empty.
func diffLines(d *Drift, width int) []string {
	if d.Type == string(holdfastv1.DriftDeleted) {
		return []string{"(object deleted)"}
	}
	if len(d.Fields) == 0 {
		return []string{"-"}
	}
	out := make([]string, 0, len(d.Fields))
	for _, f := range d.Fields {
		out = append(out, fmt.Sprintf("%s: %s -> %s", f.Path, valueString(f.Old, width), valueString(f.New, width)))
	}
	return out
}

func valueString(v string, width int) string {
	if v == "" {
		return "(absent)"
	}
	if width == 0 {
		return oneLine(v)
	}
	return Truncate(v, width)
}

func detectedAgo(d *Drift, now time.Time) string {
	s := Ago(&d.DetectedTime, now)
	if d.Detection == string(holdfastv1.DriftDetectedByComparison) {
		s += " (comparison)"
	}
	return s
}

// Ago is kubectl's age of t ("3m12s ago"), or "-": the CLI's and the web view's.
func Ago(t *time.Time, now time.Time) string {
	if t == nil {
		return "-"
	}
	return duration.HumanDuration(now.Sub(*t)) + " ago"
}

// Latency prints a latency in seconds the way people read latencies, to the millisecond (a
// tenth of one below 10ms): 2.5ms, 25ms, 1.202s. The CLI's and the web view's.
func Latency(seconds float64) string {
	if seconds < 0.01 {
		return strconv.FormatFloat(math.Round(seconds*10000)/10, 'f', -1, 64) + "ms"
	}
	ms := math.Round(seconds * 1000)
	if ms < 1000 {
		return strconv.FormatFloat(ms, 'f', -1, 64) + "ms"
	}
	return strconv.FormatFloat(ms/1000, 'f', -1, 64) + "s"
}

// Count is "1 noun" or "N nouns".
func Count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// RoundDuration keeps milliseconds below a second and tenths of a second above.
func RoundDuration(d time.Duration) time.Duration {
	if d < time.Second {
		return d.Round(time.Millisecond)
	}
	return d.Round(100 * time.Millisecond)
}
