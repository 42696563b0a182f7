package rollout

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/textlimit"
)

// Bounds of a preview, so that its status stays small whatever the templates and the fleet:
// a cluster's preview is cut at clusterPreviewBytes (its digest is of every change, cut or
// not), a change at maxDiffLines lines of at most maxLineBytes; the service set's summary keeps
// groupChanges changes of groupDiffLines lines per group, and at most summaryBytes in all.
const (
	clusterPreviewBytes = 32 << 10
	maxDiffLines        = 64
	maxLineBytes        = 512
	groupChanges        = 16
	groupDiffLines      = 4
	groupLineBytes      = 160
	groupExamples       = 5
	summaryBytes        = 48 << 10
	maxMessageBytes     = 1024
)

// NewClusterPreview is the preview request asks for (holdfastv1.PreviewRequest) on a cluster,
// from the changes applying its revision would make there, in the order given: outcome Refused
// when one of them is, Changes when there are any, else NoChange. Its digest is of every change;
// its status is cut to the bounds above.
func NewClusterPreview(request string, changes []holdfastv1.PreviewChange, now time.Time) *holdfastv1.ClusterPreview {
	p := &holdfastv1.ClusterPreview{Revision: holdfastv1.RevisionOf(request), Request: request, Outcome: holdfastv1.PreviewNoChange, Time: metav1.NewTime(now)}
	if len(changes) > 0 {
		p.Digest = digestOf(changes)
	}
	for i := range changes {
		changes[i].Diff = cutLines(changes[i].Diff, maxDiffLines, maxLineBytes)
		if changes[i].Action == holdfastv1.PreviewRefuse && p.Outcome != holdfastv1.PreviewRefused {
			p.Outcome, p.Message = holdfastv1.PreviewRefused, textlimit.Cut(changes[i].Object+": "+strings.Join(changes[i].Diff, "; "), maxMessageBytes, "…")
		} else if p.Outcome == holdfastv1.PreviewNoChange {
			p.Outcome = holdfastv1.PreviewChanges
		}
	}
	size := 0
	for i, c := range changes {
		if size += changeSize(c); size > clusterPreviewBytes || i >= holdfastv1.MaxPreviewChanges {
			p.Omitted = int32(len(changes) - i)
			changes = changes[:i]
			break
		}
	}
	p.Changes = changes
	return p
}

// NotPreviewed is the preview request asks for on a cluster that could not make it: Failed
// (tried again) or Unsupported, saying why.
func NotPreviewed(request string, outcome holdfastv1.PreviewOutcome, why string, now time.Time) *holdfastv1.ClusterPreview {
	return &holdfastv1.ClusterPreview{Revision: holdfastv1.RevisionOf(request), Request: request, Outcome: outcome, Message: textlimit.Cut(why, maxMessageBytes, "…"), Time: metav1.NewTime(now),
		Digest: digestOf(string(outcome) + why)}
}

// Summarize groups the previews the clusters recorded for request by their digests: the counts
// by outcome, and the groups of clusters that would change (or refused, or failed), largest
// first, with a few examples and their changes shortened, within summaryBytes.
func Summarize(request string, clusters []Cluster) *holdfastv1.RolloutPreview {
	sum := &holdfastv1.RolloutPreview{Revision: holdfastv1.RevisionOf(request), Clusters: int32(len(clusters))}
	groups := map[string]*holdfastv1.PreviewGroup{}
	var digests []string
	for _, c := range clusters {
		if !Previewed(c.Status, request) {
			continue
		}
		p := c.Status.Status.Preview
		sum.Previewed++
		selection := selectionOf(c.Membership)
		switch selection {
		case holdfastv1.PreviewJoining:
			sum.Joining++
		case holdfastv1.PreviewLeaving:
			sum.Leaving++
		}
		digests = append(digests, c.Key+"="+string(selection)+"/"+string(p.Outcome)+"/"+p.Digest)
		switch p.Outcome {
		case holdfastv1.PreviewNoChange:
			sum.NoChange++
			if selection == "" {
				continue
			}
		case holdfastv1.PreviewChanges:
			sum.Changed++
		case holdfastv1.PreviewRefused:
			sum.Refused++
		case holdfastv1.PreviewFailed:
			sum.Failed++
		case holdfastv1.PreviewUnsupported:
			sum.Unsupported++
		}
		id := string(selection) + "/" + string(p.Outcome) + "/" + p.Digest
		g := groups[id]
		if g == nil {
			g = &holdfastv1.PreviewGroup{Digest: p.Digest, Selection: selection, Outcome: p.Outcome, Message: p.Message, OmittedChanges: p.Omitted}
			for i, ch := range p.Changes {
				if i >= groupChanges {
					g.OmittedChanges += int32(len(p.Changes) - i)
					break
				}
				ch.Diff = cutLines(ch.Diff, groupDiffLines, groupLineBytes)
				g.Changes = append(g.Changes, ch)
			}
			groups[id] = g
		}
		g.Clusters++
		g.Examples = append(g.Examples, c.Key)
	}
	sort.Strings(digests)
	sum.Digest = digestOf(digests)
	list := make([]holdfastv1.PreviewGroup, 0, len(groups))
	for _, g := range groups {
		slices.Sort(g.Examples)
		g.Examples = g.Examples[:min(len(g.Examples), groupExamples)]
		list = append(list, *g)
	}
	sort.Slice(list, func(i, j int) bool {
		return cmp.Or(cmp.Compare(list[j].Clusters, list[i].Clusters), strings.Compare(list[i].Examples[0], list[j].Examples[0])) < 0
	})
	if len(list) > holdfastv1.MaxPreviewGroups {
		sum.OmittedGroups, list = int32(len(list)-holdfastv1.MaxPreviewGroups), list[:holdfastv1.MaxPreviewGroups]
	}
	sum.Groups = list
	for len(sum.Groups) > 0 && size(sum) > summaryBytes {
		sum.Groups, sum.OmittedGroups = sum.Groups[:len(sum.Groups)-1], sum.OmittedGroups+1
	}
	if len(sum.Groups) == 0 {
		sum.Groups = nil
	}
	return sum
}

// digestOf is a short SHA-256 of v as JSON.
func digestOf(v any) string {
	b, _ := json.Marshal(v) // plain strings and structs of strings: never fails
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16])
}

func size(v any) int {
	b, _ := json.Marshal(v)
	return len(b)
}

func changeSize(c holdfastv1.PreviewChange) int {
	n := len(c.Service) + len(c.Object) + len(c.Action) + 64
	for _, l := range c.Diff {
		n += len(l) + 4
	}
	return n
}

// cutLines keeps at most n lines of at most width bytes, saying how many were left out.
func cutLines(lines []string, n, width int) []string {
	out := make([]string, 0, min(len(lines), n+1))
	for i, l := range lines {
		if i == n {
			out = append(out, fmt.Sprintf("... %d more lines", len(lines)-n))
			break
		}
		out = append(out, textlimit.Cut(l, width, "…"))
	}
	return out
}

// selectionOf is how a changed cluster selector moves a cluster of membership m, as a preview
// group says it.
func selectionOf(m Membership) holdfastv1.PreviewSelection {
	switch m {
	case Joining:
		return holdfastv1.PreviewJoining
	case Leaving:
		return holdfastv1.PreviewLeaving
	}
	return ""
}
