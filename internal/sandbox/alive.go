package sandbox

import (
	"bytes"
	"fmt"
	"os"
)

// ProcessAlive reports whether pid is a live process on this Linux host. A zombie counts as
// dead: it runs nothing and holds no port, and in a container nobody may reap an orphan's
// zombie. Tests and tools use it to check that a sandbox left nothing behind.
func ProcessAlive(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the parenthesized command name, which may itself contain ") ".
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 || i+2 >= len(stat) {
		return false
	}
	state := stat[i+2]
	return state != 'Z' && state != 'X'
}
