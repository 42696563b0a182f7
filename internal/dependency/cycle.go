package dependency

import (
	"errors"
	"strings"
)

// MaxWalk bounds how many services Cycle visits: the specs it follows are user input, and a
// dependency graph this large is a mistake, not a deployment.
const MaxWalk = 1024

// ErrTooLarge is returned by Cycle when more than MaxWalk services are reachable.
var ErrTooLarge = errors.New("more than 1024 services are reachable through dependsOn")

// Cycle walks from start along next, which returns the services a service depends on (none for
// one that does not exist), breadth first, and returns a shortest cycle through start, as the
// path start, …, start, or nil when start cannot be reached again. It visits each service once
// and at most MaxWalk of them.
func Cycle(start Ref, next func(Ref) []Ref) ([]Ref, error) {
	parent := map[Ref]Ref{}
	queue := []Ref{start}
	visited := 1
	for len(queue) > 0 {
		at := queue[0]
		queue = queue[1:]
		for _, to := range next(at) {
			if to == start {
				path := []Ref{start}
				for r := at; r != start; r = parent[r] {
					path = append(path, r)
				}
				path = append(path, start)
				// Built backwards from the end.
				for i, j := 0, len(path)-1; i < j; i, j = i+1, j-1 {
					path[i], path[j] = path[j], path[i]
				}
				return path, nil
			}
			if _, seen := parent[to]; seen {
				continue
			}
			if visited++; visited > MaxWalk {
				return nil, ErrTooLarge
			}
			parent[to] = at
			queue = append(queue, to)
		}
	}
	return nil, nil
}

// FormatCycle writes a cycle as "a/x -> b/y -> a/x".
func FormatCycle(path []Ref) string {
	parts := make([]string, len(path))
	for i, r := range path {
		parts[i] = r.String()
	}
	return strings.Join(parts, " -> ")
}
