package metrics

import "github.com/prometheus/client_golang/prometheus"

// Reads of an inventory kept in shards, the values of holdfast_inventory_reads_total's read
// label.
const (
	// InventoryWhole: every shard was read (a deploy, a withdrawal, a recording that could not
	// do with a part).
	InventoryWhole = "whole"
	// InventoryPart: only the shards holding the entries a drift correction changed were read,
	// to record it.
	InventoryPart = "part"
)

var inventoryReads = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "holdfast_inventory_reads_total",
	Help: "Reads of inventories kept in ClusterServiceInventory shards, by read: whole (every shard) or part (the shards holding the entries a drift correction changed).",
}, []string{"read"})

// InventoryRead counts one read of a sharded inventory; read is InventoryWhole or InventoryPart.
func InventoryRead(read string) {
	inventoryReads.WithLabelValues(read).Inc()
}
