package rollout

import (
	"fmt"
	"sort"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// restWave names the last wave: the clusters no wave selects, or without the wave label.
const restWave = "rest"

// Wave is a wave's name and its clusters, as indices into the clusters Waves was given, in
// the order of their keys.
type Wave struct {
	Name     string
	Clusters []int
}

// Waves orders clusters into the strategy's waves: each in the first wave whose selector
// matches, or by the value of the wave label (numerically when every value is a number, else
// as text); those left over form a last wave, "rest". No waves and no label: one wave, "all".
func Waves(strategy holdfastv1.RolloutStrategy, clusters []Cluster) ([]Wave, error) {
	order := make([]int, len(clusters))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return clusters[order[a]].Key < clusters[order[b]].Key })
	switch {
	case len(strategy.Waves) > 0:
		return selectorWaves(strategy.Waves, clusters, order)
	case strategy.WaveLabel != "":
		return labelWaves(strategy.WaveLabel, clusters, order), nil
	}
	return []Wave{{Name: "all", Clusters: order}}, nil
}

func selectorWaves(specs []holdfastv1.RolloutWave, clusters []Cluster, order []int) ([]Wave, error) {
	selectors := make([]labels.Selector, len(specs))
	for i := range specs {
		sel, err := metav1.LabelSelectorAsSelector(&specs[i].ClusterSelector)
		if err != nil {
			return nil, fmt.Errorf("spec.rollout.waves[%s].clusterSelector: %w", specs[i].Name, err)
		}
		selectors[i] = sel
	}
	waves := make([]Wave, len(specs)+1)
	for i := range specs {
		waves[i].Name = specs[i].Name
	}
	waves[len(specs)].Name = restWave
	for _, c := range order {
		w := len(specs)
		for i, sel := range selectors {
			if sel.Matches(labels.Set(clusters[c].Labels)) {
				w = i
				break
			}
		}
		waves[w].Clusters = append(waves[w].Clusters, c)
	}
	if len(waves[len(specs)].Clusters) == 0 {
		waves = waves[:len(specs)]
	}
	return waves, nil
}

func labelWaves(key string, clusters []Cluster, order []int) []Wave {
	byValue := map[string][]int{}
	var rest []int
	var names []string
	for _, c := range order {
		v, ok := clusters[c].Labels[key]
		if !ok {
			rest = append(rest, c)
			continue
		}
		if _, seen := byValue[v]; !seen {
			names = append(names, v)
		}
		byValue[v] = append(byValue[v], c)
	}
	numeric := true
	for _, n := range names {
		if _, err := strconv.ParseFloat(n, 64); err != nil {
			numeric = false
			break
		}
	}
	sort.Slice(names, func(a, b int) bool {
		if numeric {
			x, _ := strconv.ParseFloat(names[a], 64)
			y, _ := strconv.ParseFloat(names[b], 64)
			return x < y
		}
		return names[a] < names[b]
	})
	waves := make([]Wave, 0, len(names)+1)
	for _, n := range names {
		waves = append(waves, Wave{Name: key + "=" + n, Clusters: byValue[n]})
	}
	if len(rest) > 0 {
		waves = append(waves, Wave{Name: restWave, Clusters: rest})
	}
	return waves
}
