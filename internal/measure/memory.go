package measure

import (
	"os"
	"runtime"
)

// Memory is this process's memory at one point: the Go heap allocated and in use after forced
// collections, and the resident set.
type Memory struct{ Alloc, Inuse, RSS int64 }

// MemoryNow collects twice (the second collection frees what the first one's finalizers
// released) and reads the heap and the resident set.
func MemoryNow() (Memory, error) {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	rss, err := RSS(os.Getpid())
	return Memory{Alloc: int64(ms.HeapAlloc), Inuse: int64(ms.HeapInuse), RSS: rss}, err
}

// Minus returns m − o, field by field.
func (m Memory) Minus(o Memory) Memory {
	return Memory{Alloc: m.Alloc - o.Alloc, Inuse: m.Inuse - o.Inuse, RSS: m.RSS - o.RSS}
}

// Plus returns m + o, field by field.
func (m Memory) Plus(o Memory) Memory {
	return Memory{Alloc: m.Alloc + o.Alloc, Inuse: m.Inuse + o.Inuse, RSS: m.RSS + o.RSS}
}
