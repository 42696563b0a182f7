package main

import (
	"context"
	"fmt"
	"slices"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/controller/clusterservicestatus"
	"holdfast.dev/holdfast/internal/measure"
)

// publications notes when the hub published each Pull cluster's new work during a template
// change (its status object names a work other than the one before), so that the change's time
// splits into the hub's part (until the last work is published) and the agents' (from a
// cluster's work published to its status written Ready with the new revision).
type publications struct {
	before map[string]string
	at     map[string]time.Time
}

// newPublications notes the work each status object names before the change.
func (b *bench) newPublications(ctx context.Context) (*publications, error) {
	list := &holdfastv1.ClusterServiceStatusList{}
	if err := b.Hub.List(ctx, list, client.InNamespace("")); err != nil {
		return nil, fmt.Errorf("listing status objects: %w", err)
	}
	p := &publications{before: map[string]string{}, at: map[string]time.Time{}}
	for i := range list.Items {
		p.before[list.Items[i].Name] = list.Items[i].Annotations[clusterservicestatus.WorkAnnotation]
	}
	return p, nil
}

// see is called with each version of a status object WaitStatuses reads.
func (p *publications) see(css *holdfastv1.ClusterServiceStatus) {
	if _, ok := p.at[css.Name]; ok {
		return
	}
	if w := css.Annotations[clusterservicestatus.WorkAnnotation]; w != "" && w != p.before[css.Name] {
		p.at[css.Name] = time.Now()
	}
}

// changeTimeline splits a Pull template change: the hub's part, and the agents' after it.
type changeTimeline struct {
	// published are from the change to the works published: the first, p50 and last.
	published [3]time.Duration
	// applied are, per cluster, from its work published to its status Ready with it: p50, p99
	// and max.
	applied [3]time.Duration
}

// timeline is the change's timeline from the publications seen and the times done each status
// object was Ready with the new revision.
func (p *publications) timeline(changed time.Time, done map[string]time.Time) changeTimeline {
	var t changeTimeline
	var published, applied []time.Duration
	for name, at := range p.at {
		published = append(published, at.Sub(changed))
		if d, ok := done[name]; ok {
			applied = append(applied, d.Sub(at))
		}
	}
	if len(published) > 0 {
		t.published = [3]time.Duration{slices.Min(published), measure.Percentile(published, 50), slices.Max(published)}
	}
	if len(applied) > 0 {
		t.applied = [3]time.Duration{measure.Percentile(applied, 50), measure.Percentile(applied, 99), slices.Max(applied)}
	}
	return t
}

// row adds the timeline's rows to t.
func (c changeTimeline) row(t *measure.Table) {
	t.Row("template change: works published after it, first / p50 / last",
		fmt.Sprintf("%s / %s / %s", measure.Seconds(c.published[0]), measure.Seconds(c.published[1]), measure.Seconds(c.published[2])))
	t.Row("template change: from a cluster's work published to its status Ready, p50 / p99 / max",
		fmt.Sprintf("%s / %s / %s", measure.Seconds(c.applied[0]), measure.Seconds(c.applied[1]), measure.Seconds(c.applied[2])))
}
