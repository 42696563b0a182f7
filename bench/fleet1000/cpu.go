package main

import (
	"os"
	"time"

	"holdfast.dev/holdfast/bench/internal/measure"
)

// cpuTimes is CPU time (user+sys) used so far by this process (the controller, with this
// program's own watches and correctors), the hub's control plane and the targets' control planes.
type cpuTimes struct {
	self, hub, targets time.Duration
}

func (b *bench) cpu() cpuTimes {
	var c cpuTimes
	c.self, _ = measure.CPUTime(os.Getpid())
	for _, pid := range b.Fleet.Hub.PIDs() {
		if d, err := measure.CPUTime(pid); err == nil {
			c.hub += d
		}
	}
	c.targets = b.TargetsCPU()
	return c
}

func (c cpuTimes) minus(o cpuTimes) cpuTimes {
	return cpuTimes{self: c.self - o.self, hub: c.hub - o.hub, targets: c.targets - o.targets}
}

// String is the three CPU times, for one cell of a table.
func (c cpuTimes) String() string {
	return measure.Seconds(c.self) + " / " + measure.Seconds(c.hub) + " / " + measure.Seconds(c.targets)
}
