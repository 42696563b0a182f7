package fleetview

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// The -o wide tables follow kubectl's: the columns of the table, nothing cut, plus columns
// that are useful when digging into one problem but too wide for an overview. Like the tables,
// they are for people and may change; -o json is the contract.

// PrintFleetStatusWide is PrintFleetStatus with the whole message, and per row the service's
// revision and when it was last applied, and the pair's last full reconcile and the service
// set generation it reconciled.
func PrintFleetStatusWide(w io.Writer, fs FleetStatus, now time.Time) error {
	tw, err := newTable(w, len(fs.Items), "No service set is deployed to a matching cluster.",
		"CLUSTER\tSERVICE SET\tSERVICE\tREADY\tREASON\tHEALTH\tMODE\tOBJECTS\tDRIFTED\tLAST DRIFT\tREVISION\tLAST APPLIED\tLAST FULL RECONCILE\tOBSERVED GENERATION\tMESSAGE")
	if tw == nil || err != nil {
		return err
	}
	for _, r := range fs.Items {
		mode := modeString(r)
		generation := "-"
		if r.ObservedServiceSetGeneration > 0 {
			generation = strconv.FormatInt(r.ObservedServiceSetGeneration, 10)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n", clusterString(r.Location), r.ServiceSet, OrDash(r.Service),
			r.Ready, OrDash(r.Reason), OrDash(r.Health), mode, r.Objects, r.DriftedObjects, Ago(r.LastDriftTime, now),
			ShortDigest(r.Revision), Ago(r.LastAppliedTime, now), Ago(r.LastFullReconcileTime, now), generation,
			OrDash(oneLine(serviceMessage(r.Message, r.HealthMessage))))
	}
	return endTable(tw, w, fleetSummaryLine(fs.Summary))
}

// PrintDriftListWide is PrintDriftList with whole values and messages, and the author and the
// detection split into columns: how the drift was found (Watch or Comparison), the field
// manager, and the operation with its subresource.
func PrintDriftListWide(w io.Writer, dl DriftList, now time.Time) error {
	tw, err := newTable(w, len(dl.Items), "No drifted objects.",
		"CLUSTER\tSERVICE SET\tSERVICE\tOBJECT\tSTATE\tDETECTED\tDETECTION\tMANAGER\tOPERATION\tDIFF")
	if tw == nil || err != nil {
		return err
	}
	for _, it := range dl.Items {
		detected, detection, manager, operation := "-", "-", "-", "-"
		var lines []string
		if d := it.Drift; d != nil {
			detected, detection, lines = Ago(&d.DetectedTime, now), d.Detection, diffLines(d, 0)
			manager, operation = managerString(d), operationString(d)
		}
		if it.Message != "" {
			lines = append(lines, "# "+oneLine(it.Message))
		}
		writeRows(tw, []string{clusterString(it.Location), it.ServiceSet, OrDash(it.Service), objectString(it.Object),
			stateString(it), detected, detection, manager, operation}, lines)
	}
	return endTable(tw, w, driftSummaryLine(dl))
}

// PrintDriftHistoryWide is PrintDriftHistory with every changed field, whole, one row each, and
// the author and the detection split into columns.
func PrintDriftHistoryWide(w io.Writer, h DriftHistory) error {
	tw, err := newTable(w, len(h.Items), "No drift records.",
		"DETECTED\tDETECTION\tCLUSTER\tSERVICE SET\tSERVICE\tOBJECT\tMANAGER\tOPERATION\tCORRECTED\tLATENCY\tCHANGE")
	if tw == nil || err != nil {
		return err
	}
	for _, it := range h.Items {
		d := &it.Drift
		corrected, latency := correctedStrings(d)
		writeRows(tw, []string{d.DetectedTime.Format(time.RFC3339), d.Detection, clusterString(it.Location), it.ServiceSet,
			OrDash(it.Service), objectString(it.Object), managerString(d), operationString(d), corrected, latency}, diffLines(d, 0))
	}
	return endTable(tw, w, historySummaryLine(h))
}

// managerString is the field manager that made the change, "user via manager" when the user is
// known (drift attribution), or "unknown".
func managerString(d *Drift) string {
	who := d.Manager
	if who == "" {
		who = "unknown"
	}
	if d.User != "" {
		who = d.User + " via " + who
	}
	return who
}

// operationString is "Operation/subresource", "Operation", or "-".
func operationString(d *Drift) string {
	how := d.Operation
	if d.Subresource != "" {
		how += "/" + d.Subresource
	}
	return OrDash(how)
}

// oneLine keeps a whole value on its table row: line breaks and tabs become spaces.
func oneLine(s string) string {
	return strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ", "\t", " ").Replace(s)
}
