package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"holdfast.dev/holdfast/internal/measure"
)

const (
	// inventoryLabel marks every ConfigMap of this benchmark with its corrector: byHoldfast or
	// byIdeal. This program's watch selects the key, the ideal corrector's the value byIdeal.
	inventoryLabel = "bench.holdfast.dev/inventory"
	byHoldfast     = "holdfast"
	byIdeal        = "ideal"
)

// otherData is what both correctors declare in each ConfigMap besides measure.ValueKey.
var otherData = map[string]string{"LOG_LEVEL": "info"}

// declaredData is a ConfigMap's data as both correctors declare it.
func declaredData(name string) map[string]string {
	data := map[string]string{measure.ValueKey: measure.DeclaredValue(name)}
	maps.Copy(data, otherData)
	return data
}

// manifests renders one of Holdfast's templates: the ConfigMaps from to to-1 with small data,
// and the Namespace ns in the first (from 0). Namespaced objects carry no namespace: the
// service's applies.
func manifests(from, to int, ns string) string {
	d := measure.NewDocs("")
	if from == 0 {
		d = measure.NewDocs(ns)
	}
	for i := from; i < to; i++ {
		name := configMapName(i)
		data := declaredData(name)
		var lines strings.Builder
		for _, k := range slices.Sorted(maps.Keys(data)) {
			fmt.Fprintf(&lines, "  %s: %s\n", k, data[k])
		}
		d.Add(`apiVersion: v1
kind: ConfigMap
metadata:
  name: %s
  labels:
    %s: %s
data:
%s`, name, inventoryLabel, byHoldfast, lines.String())
	}
	return d.String()
}
