package fleetview

import (
	"bytes"
	"strings"
	"testing"
	"time"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/fleetview/fleetviewtest"
)

// longStatuses are the fixtures with a message and a value longer than the tables show, and a
// message that spans lines.
func longStatuses() (statuses []holdfastv1.ClusterServiceStatus, longMessage, longValue string) {
	statuses = fleetviewtest.Statuses()
	longMessage = "Service shop/cache was deleted by someone who had a very good reason, which this message explains at length"
	longValue = `"` + strings.Repeat("0123456789", 8) + `"`
	c1 := &statuses[2]
	c1.Status.Services[1].Message = longMessage
	c1.Status.Resources[0].Message = "rotator keeps reverting it:\nsee its logs\tfor why"
	c1.Status.Resources[1].LastDrift.Fields = append(c1.Status.Resources[1].LastDrift.Fields,
		holdfastv1.FieldChange{Path: ".metadata.annotations.note", Old: longValue, New: `"short"`})
	return statuses, longMessage, longValue
}

// lineWith is the first line of out that contains s.
func lineWith(t *testing.T, out, s string) string {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, s) {
			return l
		}
	}
	t.Fatalf("no line has %q:\n%s", s, out)
	return ""
}

func TestPrintFleetStatusWide(t *testing.T) {
	statuses, longMessage, _ := longStatuses()
	fs := BuildFleetStatus(statuses, Filter{})
	var table, wide bytes.Buffer
	if err := PrintFleetStatus(&table, fs, fleetviewtest.Now); err != nil {
		t.Fatal(err)
	}
	if err := PrintFleetStatusWide(&wide, fs, fleetviewtest.Now); err != nil {
		t.Fatal(err)
	}
	out := wide.String()
	header := strings.Fields(strings.Split(out, "\n")[0])
	if got := strings.Join(header, " "); got != "CLUSTER SERVICE SET SERVICE READY REASON HEALTH MODE OBJECTS DRIFTED LAST DRIFT REVISION LAST APPLIED LAST FULL RECONCILE OBSERVED GENERATION MESSAGE" {
		t.Errorf("header = %q", got)
	}
	checks := []struct {
		row  string
		want []string
	}{
		{"web      True", []string{"fleet/c1", "60s ago", "9f86d081 ", "30m ago", "5m ago", " 3 "}},
		{"cache", []string{"0c1d2e3f", "60m ago", "5m ago", longMessage}},
		{"(paused)", []string{"fleet/c2", "9f86d081", "120m ago", " 2 "}},
		{"infra", []string{"other/c1", "ClusterNotReady", "Cluster other/c1 is not Connected"}},
	}
	for _, c := range checks {
		l := lineWith(t, out, c.row)
		for _, w := range c.want {
			if !strings.Contains(l, w) {
				t.Errorf("row %q lacks %q", l, w)
			}
		}
	}
	if l := lineWith(t, out, "infra"); strings.Count(l, " - ") < 4 {
		t.Errorf("a row without services should show - for revision, applied, full reconcile and generation: %q", l)
	}
	if strings.Contains(table.String(), longMessage) {
		t.Errorf("the table shows the long message whole; it should cut it and leave that to wide:\n%s", table.String())
	}
	tableLines, wideLines := strings.Split(table.String(), "\n"), strings.Split(out, "\n")
	if len(tableLines) != len(wideLines) || tableLines[len(tableLines)-2] != wideLines[len(wideLines)-2] {
		t.Errorf("wide should have the table's rows and summary line:\n%s\n%s", table.String(), out)
	}

	wide.Reset()
	if err := PrintFleetStatusWide(&wide, BuildFleetStatus(nil, Filter{}), fleetviewtest.Now); err != nil || !strings.Contains(wide.String(), "No service set") {
		t.Errorf("empty fleet printed %q, %v", wide.String(), err)
	}
}

func TestPrintDriftListWide(t *testing.T) {
	statuses, _, longValue := longStatuses()
	dl := BuildDriftList(statuses, Filter{}, true)
	var table, wide bytes.Buffer
	if err := PrintDriftList(&table, dl, fleetviewtest.Now); err != nil {
		t.Fatal(err)
	}
	if err := PrintDriftListWide(&wide, dl, fleetviewtest.Now); err != nil {
		t.Fatal(err)
	}
	out := wide.String()
	if h := strings.Join(strings.Fields(strings.Split(out, "\n")[0]), " "); h != "CLUSTER SERVICE SET SERVICE OBJECT STATE DETECTED DETECTION MANAGER OPERATION DIFF" {
		t.Errorf("header = %q", h)
	}
	checks := []struct {
		row  string
		want []string
	}{
		{"Deployment.apps shop/web", []string{"Drifted", "3m ago", "Watch", "kubectl-scale", "Update/scale", ".spec.replicas: 2 -> 5"}},
		{"Service shop/cache", []string{"Missing", "2m ago", "Comparison", "unknown", " - ", "(object deleted)"}},
		{"Contested", []string{"rotator", "Apply", ".data.password: (redacted) -> (redacted)"}},
		{"ConfigMap", []string{"Corrected in 350ms", "kubectl-edit", "Update", `.data.logLevel: "info" -> "trace"`}},
		{".metadata.annotations.note", []string{longValue + ` -> "short"`}},
		{"# rotator", []string{"# rotator keeps reverting it: see its logs for why"}},
	}
	for _, c := range checks {
		l := lineWith(t, out, c.row)
		for _, w := range c.want {
			if !strings.Contains(l, w) {
				t.Errorf("row %q lacks %q", l, w)
			}
		}
	}
	if strings.Contains(out, "(comparison)") {
		t.Errorf("wide has a DETECTION column; DETECTED should not repeat it:\n%s", out)
	}
	if strings.Contains(table.String(), longValue) {
		t.Errorf("the table shows the long value whole:\n%s", table.String())
	}
	// Further fields and the message go under the DIFF column.
	diff := strings.Index(lineWith(t, out, ".spec.replicas"), ".spec.replicas")
	for _, cont := range []string{".metadata.annotations.note", ".metadata.labels.tier", "# rotator"} {
		l := lineWith(t, out, cont)
		if strings.Index(l, cont) != diff || strings.TrimSpace(l[:diff]) != "" {
			t.Errorf("continuation row %q is not alone under DIFF (column %d)", l, diff)
		}
	}
	if last := strings.Split(strings.TrimSpace(out), "\n"); last[len(last)-1] != "3 drifted objects (1 Contested), 2 corrected drifts." {
		t.Errorf("summary = %q", last[len(last)-1])
	}
}

func TestPrintDriftHistoryWide(t *testing.T) {
	statuses, _, _ := longStatuses()
	h := BuildDriftHistory(statuses, Filter{}, fleetviewtest.Now.Add(-5*time.Minute), 2)
	var wide bytes.Buffer
	if err := PrintDriftHistoryWide(&wide, h); err != nil {
		t.Fatal(err)
	}
	out := wide.String()
	if hd := strings.Join(strings.Fields(strings.Split(out, "\n")[0]), " "); hd != "DETECTED DETECTION CLUSTER SERVICE SET SERVICE OBJECT MANAGER OPERATION CORRECTED LATENCY CHANGE" {
		t.Errorf("header = %q", hd)
	}
	secret := lineWith(t, out, "2026-07-01T11:59:00Z")
	for _, w := range []string{"Watch", "Secret shop/creds", "rotator", "Apply", ".data.password: (redacted) -> (redacted)"} {
		if !strings.Contains(secret, w) {
			t.Errorf("row %q lacks %q", secret, w)
		}
	}
	// Every changed field, not the first and a count.
	tier := lineWith(t, out, ".metadata.labels.tier")
	if strings.Index(tier, ".metadata.labels.tier") != strings.Index(secret, ".data.password") || strings.Contains(out, "more)") {
		t.Errorf("second field not on its own row under CHANGE:\n%s", out)
	}
	if l := lineWith(t, out, "Service shop/cache"); !strings.Contains(l, "Comparison") || !strings.Contains(l, "unknown") {
		t.Errorf("deleted Service row %q", l)
	}
	if !strings.Contains(out, "2 drift records of 3 (--limit 0 shows all)") {
		t.Errorf("summary missing:\n%s", out)
	}

	wide.Reset()
	if err := PrintDriftHistoryWide(&wide, BuildDriftHistory(statuses, Filter{}, time.Time{}, 0)); err != nil {
		t.Fatal(err)
	}
	l := lineWith(t, wide.String(), ".stringData.token")
	for _, w := range []string{"2026-07-01T11:40:00Z", "2026-07-01T11:40:02Z", "2s", "kubectl-edit", "(absent) -> (redacted)"} {
		if !strings.Contains(l, w) {
			t.Errorf("corrected record %q lacks %q", l, w)
		}
	}
	for _, s := range []string{fleetviewtest.SecretOld, fleetviewtest.SecretNew, fleetviewtest.SecretToken} {
		if strings.Contains(wide.String(), s) {
			t.Errorf("history wide shows the Secret value %q", s)
		}
	}
}
