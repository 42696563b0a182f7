package fleetview

import (
	"fmt"
	"io"
	"strings"
	"time"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/drift"
)

// The preview of a held revision (spec.rollout.approval: Manual), as `holdfast diff` prints it:
// the service set's bounded summary (status.rollout.preview: counts by outcome, and groups of
// clusters that would see the same changes), or with --cluster one cluster's whole preview
// (status.preview of its ClusterServiceStatus); and what `holdfast rollout approve` checks
// before approving a revision.

// KindPreview is the kind of `holdfast diff -o json`.
const KindPreview = "Preview"

// PreviewList is `holdfast diff -o json`: one item, the preview of one service set.
type PreviewList struct {
	Header
	Items []PreviewView `json:"items"`
}

// PreviewView is the preview of a service set's revision: over its clusters (Summary), or on
// one of them (Cluster).
type PreviewView struct {
	ServiceSet string `json:"serviceSet"`
	// ApprovalPolicy is spec.rollout.approval: Automatic or Manual.
	ApprovalPolicy string `json:"approvalPolicy"`
	// Revision and Phase are the rollout's (status.rollout): the revision previewed, and
	// Previewing or Previewed while it waits for approval.
	Revision string `json:"revision"`
	Phase    string `json:"phase"`
	// Summary is the preview over the matching clusters; left out with --cluster.
	Summary *PreviewSummary `json:"summary,omitempty"`
	// Cluster is one cluster's whole preview (--cluster); left out otherwise.
	Cluster *ClusterPreviewView `json:"cluster,omitempty"`
	// Approval is who approved Revision and when; left out while it waits.
	Approval *ApprovalView `json:"approval,omitempty"`
}

// PreviewSummary counts the matching clusters by what their previews found, and groups those
// that would change (or refused, failed, or cannot be previewed) by identical changes.
type PreviewSummary struct {
	Revision string `json:"revision"`
	// Clusters match the service set; Previewed of them recorded a preview of Revision; the
	// others count them by outcome.
	Clusters    int32 `json:"clusters"`
	Previewed   int32 `json:"previewed"`
	NoChange    int32 `json:"noChange"`
	Changed     int32 `json:"changed"`
	Refused     int32 `json:"refused"`
	Failed      int32 `json:"failed"`
	Unsupported int32 `json:"unsupported"`
	// Joining and Leaving count the clusters the revision's cluster selector newly selects and
	// no longer selects.
	Joining int32 `json:"joining,omitempty"`
	Leaving int32 `json:"leaving,omitempty"`
	// Groups are largest first; OmittedGroups counts those the controller left out.
	Groups        []PreviewGroupView `json:"groups"`
	OmittedGroups int32              `json:"omittedGroups"`
	Digest        string             `json:"digest,omitempty"`
}

// PreviewGroupView is clusters whose previews found the same changes.
type PreviewGroupView struct {
	Outcome string `json:"outcome"`
	// Selection is Joining (newly selected by the revision's cluster selector), Leaving (no
	// longer selected), or empty.
	Selection string `json:"selection,omitempty"`
	// Clusters counts them; Examples names a few, as namespace/name.
	Clusters int32    `json:"clusters"`
	Examples []string `json:"examples"`
	// Message is the first cluster's message (why it refused, failed or cannot be previewed).
	Message string `json:"message,omitempty"`
	// Changes are shortened (a few objects, a few diff lines each); OmittedChanges counts the
	// objects left out.
	Changes        []PreviewChangeView `json:"changes"`
	OmittedChanges int32               `json:"omittedChanges"`
	Digest         string              `json:"digest,omitempty"`
}

// PreviewChangeView is one object the revision would change on a cluster.
type PreviewChangeView struct {
	Service string `json:"service,omitempty"`
	// Object is "apiVersion Kind namespace/name" (or "apiVersion Kind name").
	Object string `json:"object"`
	// Action is Create, Update, Delete or Refused.
	Action string `json:"action"`
	// Diff is "path: old -> new" per field (a creation: the object, each line prefixed "+ "),
	// Secret data redacted; for Refused, the API server's reason.
	Diff []string `json:"diff,omitempty"`
}

// ClusterPreviewView is one cluster's whole preview.
type ClusterPreviewView struct {
	ClusterNamespace string `json:"clusterNamespace"`
	Cluster          string `json:"cluster"`
	// StatusName is the ClusterServiceStatus it was read from, in ClusterNamespace.
	StatusName string `json:"statusName"`
	Revision   string `json:"revision"`
	// Outcome is NoChange, Changes, Refused, Failed or Unsupported; Message says why for the
	// last three.
	Outcome string    `json:"outcome"`
	Message string    `json:"message,omitempty"`
	Digest  string    `json:"digest,omitempty"`
	Time    time.Time `json:"time"`
	// Changes are every object that would change, up to the controller's bound; Omitted counts
	// the objects it left out.
	Changes []PreviewChangeView `json:"changes"`
	Omitted int32               `json:"omitted"`
}

// ApprovalView is the approval of a revision.
type ApprovalView struct {
	Revision string `json:"revision"`
	// By is who approved it; Verified is false when the hub's admission policy did not stamp
	// it (By is then what the client wrote).
	By       string    `json:"by"`
	Verified bool      `json:"verified"`
	Time     time.Time `json:"time"`
	// PreviewDigest is the digest of the preview when approved; PreviewComplete whether every
	// cluster had previewed the revision then.
	PreviewDigest   string `json:"previewDigest,omitempty"`
	PreviewComplete bool   `json:"previewComplete"`
}

// Names of a PreviewList are the objects its preview was read from: the MultiClusterService,
// or with --cluster the ClusterServiceStatus.
func (l PreviewList) Names() []string {
	var names distinct
	for _, v := range l.Items {
		if c := v.Cluster; c != nil {
			names.add(hubName(kindClusterServiceStatus, c.ClusterNamespace, c.StatusName))
		} else {
			names.add(hubName(kindMultiClusterService, "", v.ServiceSet))
		}
	}
	return names.list
}

// NewPreviewList is the document `holdfast diff SERVICESET` prints: the summary of the preview
// of the rollout's revision. It fails, saying what to set or wait for, when there is none.
func NewPreviewList(mcs *holdfastv1.MultiClusterService) (PreviewList, error) {
	v, err := previewOf(mcs)
	if err != nil {
		return PreviewList{}, err
	}
	p := mcs.Status.Rollout.Preview
	if p == nil {
		return PreviewList{}, noPreview(mcs)
	}
	if p.Revision != v.Revision {
		return PreviewList{}, fmt.Errorf("service set %s: status.rollout.preview is of revision %s, not of the rollout's revision %s: "+
			"the controller has not summarised its preview yet; try again shortly", mcs.Name, p.Revision, v.Revision)
	}
	s := &PreviewSummary{Revision: p.Revision, Clusters: p.Clusters, Previewed: p.Previewed, NoChange: p.NoChange, Changed: p.Changed,
		Refused: p.Refused, Failed: p.Failed, Unsupported: p.Unsupported, Joining: p.Joining, Leaving: p.Leaving,
		Groups: []PreviewGroupView{}, OmittedGroups: p.OmittedGroups, Digest: p.Digest}
	for _, g := range p.Groups {
		s.Groups = append(s.Groups, PreviewGroupView{Outcome: string(g.Outcome), Selection: string(g.Selection), Clusters: g.Clusters, Examples: append([]string{}, g.Examples...),
			Message: g.Message, Changes: changeViews(g.Changes), OmittedChanges: g.OmittedChanges, Digest: g.Digest})
	}
	v.Summary = s
	return PreviewList{Header: Header{cliAPIVersion, KindPreview}, Items: []PreviewView{v}}, nil
}

// NewClusterPreviewList is the document `holdfast diff SERVICESET --cluster NS/NAME` prints:
// css's whole preview of the rollout's revision. It fails when css has none, or one of another
// revision.
func NewClusterPreviewList(mcs *holdfastv1.MultiClusterService, css *holdfastv1.ClusterServiceStatus) (PreviewList, error) {
	v, err := previewOf(mcs)
	if err != nil {
		return PreviewList{}, err
	}
	cluster := css.Namespace + "/" + css.Spec.Cluster
	p := css.Status.Preview
	switch {
	case p == nil && !holdfastv1.RolloutPhase(v.Phase).AwaitsApproval():
		return PreviewList{}, fmt.Errorf("cluster %s has no preview of service set %s: the rollout is %s, and clusters preview a revision only "+
			"while it waits for approval", cluster, mcs.Name, v.Phase)
	case p == nil:
		return PreviewList{}, fmt.Errorf("cluster %s has not previewed revision %s of service set %s yet; try again shortly", cluster, v.Revision, mcs.Name)
	case p.Revision != v.Revision:
		return PreviewList{}, fmt.Errorf("the preview on cluster %s is of revision %s, not of the rollout's revision %s of service set %s: "+
			"it has not previewed %s yet", cluster, p.Revision, v.Revision, mcs.Name, v.Revision)
	}
	v.Cluster = &ClusterPreviewView{ClusterNamespace: css.Namespace, Cluster: css.Spec.Cluster, StatusName: css.Name, Revision: p.Revision,
		Outcome: string(p.Outcome), Message: p.Message, Digest: p.Digest, Time: p.Time.UTC(), Changes: changeViews(p.Changes), Omitted: p.Omitted}
	return PreviewList{Header: Header{cliAPIVersion, KindPreview}, Items: []PreviewView{v}}, nil
}

// previewOf is the part of a PreviewView the service set alone gives, or why it has no preview.
func previewOf(mcs *holdfastv1.MultiClusterService) (PreviewView, error) {
	if mcs.Spec.Rollout == nil {
		return PreviewView{}, fmt.Errorf("service set %s has no rollout (spec.rollout): set spec.rollout.approval: Manual "+
			"to have each new revision previewed on its clusters before it rolls out", mcs.Name)
	}
	v := PreviewView{ServiceSet: mcs.Name, ApprovalPolicy: string(approvalPolicy(mcs))}
	ro := mcs.Status.Rollout
	if ro == nil {
		return PreviewView{}, fmt.Errorf("service set %s has no rollout status yet (status.rollout): no revision was previewed", mcs.Name)
	}
	v.Revision, v.Phase = ro.Revision, string(ro.Phase)
	if a := ro.Approval; a != nil {
		v.Approval = &ApprovalView{Revision: a.Revision, By: a.By, Verified: a.Verified, Time: a.Time.UTC(),
			PreviewDigest: a.PreviewDigest, PreviewComplete: a.PreviewComplete}
	}
	return v, nil
}

// noPreview says why a service set with a rollout has no preview summary.
func noPreview(mcs *holdfastv1.MultiClusterService) error {
	ro := mcs.Status.Rollout
	switch {
	case approvalPolicy(mcs) != holdfastv1.ApprovalManual:
		return fmt.Errorf("service set %s has no preview: its rollout approval is %s; set spec.rollout.approval: Manual "+
			"to have each new revision previewed on its clusters before it rolls out", mcs.Name, approvalPolicy(mcs))
	case ro.Phase.AwaitsApproval():
		return fmt.Errorf("service set %s: revision %s is being previewed, and no summary is recorded yet; try again shortly", mcs.Name, ro.Revision)
	default:
		return fmt.Errorf("service set %s: revision %s was not previewed (approval Manual previews each new revision after the first, "+
			"and this one is %s)", mcs.Name, ro.Revision, ro.Phase)
	}
}

// approvalPolicy is spec.rollout.approval, Automatic when unset.
func approvalPolicy(mcs *holdfastv1.MultiClusterService) holdfastv1.ApprovalPolicy {
	if mcs.Spec.Rollout == nil || mcs.Spec.Rollout.Approval == "" {
		return holdfastv1.ApprovalAutomatic
	}
	return mcs.Spec.Rollout.Approval
}

func changeViews(changes []holdfastv1.PreviewChange) []PreviewChangeView {
	out := make([]PreviewChangeView, 0, len(changes))
	for _, c := range changes {
		out = append(out, PreviewChangeView{Service: c.Service, Object: c.Object, Action: string(c.Action), Diff: redactPreviewDiff(c.Object, c.Diff)})
	}
	return out
}

// Verdict is what the preview says of the revision, by what is known: Refused when a cluster
// refused it, else Changes when one would change, else NoChange. Clusters whose preview failed,
// cannot be made, or is not made yet count for nothing (Unknown counts them).
func (v PreviewView) Verdict() holdfastv1.PreviewOutcome {
	switch {
	case v.Cluster != nil && v.Cluster.Outcome == string(holdfastv1.PreviewRefused), v.Summary != nil && v.Summary.Refused > 0:
		return holdfastv1.PreviewRefused
	case v.Cluster != nil && v.Cluster.Outcome == string(holdfastv1.PreviewChanges), v.Summary != nil && v.Summary.Changed > 0:
		return holdfastv1.PreviewChanges
	}
	return holdfastv1.PreviewNoChange
}

// Unknown counts the clusters of the preview whose outcome is not known: not previewed yet,
// failed, or that cannot be previewed.
func (v PreviewView) Unknown() int {
	switch {
	case v.Summary != nil:
		s := v.Summary
		return int(max(s.Clusters-s.NoChange-s.Changed-s.Refused, 0))
	case v.Cluster != nil && (v.Cluster.Outcome == string(holdfastv1.PreviewFailed) || v.Cluster.Outcome == string(holdfastv1.PreviewUnsupported)):
		return 1
	}
	return 0
}

// PrintPreview prints a preview for people: the summary's groups, or one cluster's changes
// whole, then where the approval stands.
func PrintPreview(w io.Writer, v PreviewView) error {
	var err error
	if v.Cluster != nil {
		err = printClusterPreview(w, v)
	} else if v.Summary != nil {
		err = printPreviewSummary(w, v)
	}
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(w, approvalLine(v))
	return err
}

// printPreviewSummary writes a line of counts, then each group of clusters with their changes.
func printPreviewSummary(w io.Writer, v PreviewView) error {
	s := v.Summary
	fmt.Fprintf(w, "Revision %s of service set %s %s\n", s.Revision, v.ServiceSet, summaryCounts(s))
	for _, g := range s.Groups {
		clusters := Count(int(g.Clusters), "cluster")
		if sel := SelectionText(g.Selection); sel != "" {
			clusters += " " + sel
		}
		fmt.Fprintf(w, "\n%s (%s): %s\n", clusters, groupExamples(g), outcomeText(g.Outcome, g.Message, len(g.Changes)+int(g.OmittedChanges)))
		printChanges(w, "  ", g.Changes)
		if g.OmittedChanges > 0 {
			fmt.Fprintf(w, "  ... and %s\n", Count(int(g.OmittedChanges), "more object"))
		}
	}
	how := fmt.Sprintf("holdfast diff %s --cluster NAMESPACE/NAME shows one cluster's whole preview", v.ServiceSet)
	switch {
	case s.OmittedGroups > 0:
		fmt.Fprintf(w, "\n%s not shown: %s\n", Count(int(s.OmittedGroups), "more group"), how)
	case len(s.Groups) > 0:
		fmt.Fprintf(w, "\n%s (the groups' changes are shortened).\n", how)
	}
	_, err := fmt.Fprintln(w)
	return err
}

// summaryCounts is "previewed on 5 of 5 clusters: 3 would change, 1 unchanged, 1 refused".
func summaryCounts(s *PreviewSummary) string {
	if s.Previewed == 0 {
		return fmt.Sprintf("is not previewed on any of its %s yet.", Count(int(s.Clusters), "cluster"))
	}
	out := fmt.Sprintf("previewed on %d of %s", s.Previewed, Count(int(s.Clusters), "cluster"))
	if pending := s.Clusters - s.Previewed; pending > 0 {
		out += fmt.Sprintf(" (%d not yet)", pending)
	}
	var parts []string
	for _, c := range []struct {
		n    int32
		what string
	}{{s.Changed, "would change"}, {s.NoChange, "unchanged"}, {s.Refused, "refused"}, {s.Failed, "failed"}, {s.Unsupported, "cannot be previewed"},
		{s.Joining, "newly selected"}, {s.Leaving, "no longer selected"}} {
		if c.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", c.n, c.what))
		}
	}
	return out + ": " + strings.Join(parts, ", ") + "."
}

// SelectionText words how a changed cluster selector moves a group of clusters (a
// PreviewGroup's selection), "" when it keeps them.
func SelectionText(selection string) string {
	switch holdfastv1.PreviewSelection(selection) {
	case holdfastv1.PreviewJoining:
		return "newly selected"
	case holdfastv1.PreviewLeaving:
		return "no longer selected"
	}
	return ""
}

// groupExamples is "ns/a, ns/b, ns/c", with "and N more" when the group has more clusters.
func groupExamples(g PreviewGroupView) string {
	out := strings.Join(g.Examples, ", ")
	if more := int(g.Clusters) - len(g.Examples); more > 0 {
		if out == "" {
			return fmt.Sprintf("%d not named", more)
		}
		out += fmt.Sprintf(" and %d more", more)
	}
	return out
}

// outcomeText says what a preview found, with its message.
func outcomeText(outcome, message string, changes int) string {
	switch holdfastv1.PreviewOutcome(outcome) {
	case holdfastv1.PreviewNoChange:
		return "nothing would change"
	case holdfastv1.PreviewChanges:
		return Count(changes, "object") + " would change"
	case holdfastv1.PreviewRefused:
		return "refused — " + oneLine(message)
	case holdfastv1.PreviewFailed:
		return "preview failed (it is tried again) — " + oneLine(message)
	case holdfastv1.PreviewUnsupported:
		return "cannot be previewed — " + oneLine(message)
	}
	return outcome + " " + oneLine(message)
}

// printChanges writes each change, "Action Object [service S]", and its diff lines below it.
func printChanges(w io.Writer, indent string, changes []PreviewChangeView) {
	for _, c := range changes {
		fmt.Fprintf(w, "%s%s %s", indent, c.Action, c.Object)
		if c.Service != "" {
			fmt.Fprintf(w, " [service %s]", c.Service)
		}
		fmt.Fprintln(w)
		for _, l := range c.Diff {
			fmt.Fprintf(w, "%s  %s\n", indent, strings.TrimRight(l, "\r\n"))
		}
	}
}

// printClusterPreview writes one cluster's preview: what it found, every change and every diff
// line, and how many objects the controller left out.
func printClusterPreview(w io.Writer, v PreviewView) error {
	c := v.Cluster
	fmt.Fprintf(w, "Revision %s of service set %s on cluster %s/%s, previewed %s: %s\n", c.Revision, v.ServiceSet, c.ClusterNamespace, c.Cluster,
		c.Time.Format(time.RFC3339), outcomeText(c.Outcome, c.Message, len(c.Changes)+int(c.Omitted)))
	if len(c.Changes) > 0 {
		fmt.Fprintln(w)
	}
	printChanges(w, "", c.Changes)
	if c.Omitted > 0 {
		fmt.Fprintf(w, "%s left out\n", Count(int(c.Omitted), "more object"))
	}
	_, err := fmt.Fprintln(w)
	return err
}

// approvalLine says who approved the revision, or how to approve it while it waits.
func approvalLine(v PreviewView) string {
	if a := v.Approval; a != nil && a.Revision == v.Revision {
		by := a.By
		if by == "" {
			by = "(unknown)"
		}
		line := fmt.Sprintf("Approved by %s at %s", by, a.Time.Format(time.RFC3339))
		if !a.Verified {
			line += fmt.Sprintf(" (not verified: the hub's admission policy %s did not stamp the approver)", holdfastv1.ApprovalPolicyName)
		}
		if !a.PreviewComplete {
			line += ", before every cluster had previewed it"
		}
		return line + "; the rollout is " + v.Phase + "."
	}
	if holdfastv1.RolloutPhase(v.Phase).AwaitsApproval() {
		approve := fmt.Sprintf("holdfast rollout approve %s --revision %s", v.ServiceSet, v.Revision)
		if v.Phase == string(holdfastv1.RolloutPreviewing) {
			return "Waiting for approval while the clusters preview it: " + approve
		}
		return "Waiting for approval: " + approve
	}
	return fmt.Sprintf("Not approved; the rollout is %s.", v.Phase)
}

// ApprovalCheck is what `holdfast rollout approve` found it may approve.
type ApprovalCheck struct {
	// Revision is the revision waiting for approval.
	Revision string
	// Warnings say what the preview did not show: clusters not previewed, that refused, that
	// failed or cannot be previewed. They do not prevent the approval.
	Warnings []string
}

// CheckApproval checks that mcs waits for the approval of a revision (phase Previewing or
// Previewed) and, when revision is set, that it is that one, so that one approves what one saw.
func CheckApproval(mcs *holdfastv1.MultiClusterService, revision string) (ApprovalCheck, error) {
	if mcs.Spec.Rollout == nil {
		return ApprovalCheck{}, fmt.Errorf("service set %s has no rollout (spec.rollout): there is nothing to approve", mcs.Name)
	}
	ro := mcs.Status.Rollout
	if ro == nil {
		return ApprovalCheck{}, fmt.Errorf("service set %s has no rollout status yet (status.rollout): there is nothing to approve", mcs.Name)
	}
	if !ro.Phase.AwaitsApproval() {
		err := fmt.Errorf("the rollout of service set %s is %s, not waiting for approval (Previewing or Previewed): there is nothing to approve",
			mcs.Name, ro.Phase)
		if approvalPolicy(mcs) != holdfastv1.ApprovalManual {
			err = fmt.Errorf("%w; set spec.rollout.approval: Manual to hold each new revision for approval", err)
		}
		return ApprovalCheck{}, err
	}
	if revision != "" && revision != ro.Revision {
		return ApprovalCheck{}, fmt.Errorf("service set %s waits for the approval of revision %s, not %s: see holdfast diff %s",
			mcs.Name, ro.Revision, revision, mcs.Name)
	}
	check := ApprovalCheck{Revision: ro.Revision}
	warn := func(format string, args ...any) {
		check.Warnings = append(check.Warnings, fmt.Sprintf(format, args...))
	}
	p := ro.Preview
	if p == nil || p.Revision != ro.Revision {
		warn("no preview of revision %s is recorded yet: you approve it unseen", ro.Revision)
		return check, nil
	}
	if p.Previewed < p.Clusters {
		warn("revision %s is previewed on only %d of %s", ro.Revision, p.Previewed, Count(int(p.Clusters), "cluster"))
	}
	if p.Refused > 0 {
		warn("%s refused revision %s in the preview: it will fail to apply there (holdfast diff %s)", Count(int(p.Refused), "cluster"), ro.Revision, mcs.Name)
	}
	if n := p.Failed + p.Unsupported; n > 0 {
		warn("the preview of revision %s failed or cannot be made on %s: what it changes there is not known", ro.Revision, Count(int(n), "cluster"))
	}
	return check, nil
}

// redactPreviewDiff redacts, in the diff of a core/v1 Secret, what the controller should already
// have masked: the values of its data, stringData and kubectl's last-applied annotation, in
// update lines ("path: old -> new") and in the YAML of a creation ("+ " lines). Other objects'
// diffs are returned as they are.
func redactPreviewDiff(object string, lines []string) []string {
	if !strings.HasPrefix(object, "v1 Secret ") || len(lines) == 0 {
		return lines
	}
	out := make([]string, 0, len(lines))
	// section is the top-level field of the creation YAML being read; masked the indent of
	// the key whose value is masked, -1 when none: deeper lines continue that value.
	section, masked := "", -1
	for _, l := range lines {
		body, created := strings.CutPrefix(l, "+ ")
		if !created {
			out = append(out, redactUpdateLine(l))
			continue
		}
		indent := len(body) - len(strings.TrimLeft(body, " "))
		if masked >= 0 && indent > masked {
			continue // the rest of a masked value
		}
		masked = -1
		key, _, hasKey := strings.Cut(strings.TrimSpace(body), ":")
		if indent == 0 {
			section = key
		}
		secret := indent > 0 && (section == "data" || section == "stringData") ||
			section == "metadata" && strings.Trim(key, `"'`) == drift.LastAppliedAnnotation
		if secret {
			if hasKey { // else a stray line of a value: left out
				out = append(out, "+ "+body[:indent]+key+": "+redactedValue)
			}
			masked = indent
			continue
		}
		out = append(out, l)
	}
	return out
}

// redactUpdateLine redacts both values of "path: old -> new" when path holds Secret data,
// keeping "<none>" (absent) visible.
func redactUpdateLine(l string) string {
	path, change, ok := strings.Cut(l, ": ")
	if !ok || !drift.SecretValuePath(path) {
		return l
	}
	old, new, _ := strings.Cut(change, " -> ")
	side := func(v string) string {
		if v == "<none>" {
			return v
		}
		return redactedValue
	}
	return path + ": " + side(old) + " -> " + side(new)
}
