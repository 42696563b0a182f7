package main

import (
	"math/rand/v2"
	"testing"
)

func TestPicker(t *testing.T) {
	for _, n := range []int{2, 3, 10} {
		for seed := range uint64(20) {
			p := &picker{rng: rand.New(rand.NewPCG(seed, uint64(n))), n: n, prev: -1}
			edits := 4*n + 1
			seen := map[int]int{}
			prev := -1
			for range edits {
				i := p.next()
				if i == prev {
					t.Fatalf("n %d seed %d: %d twice in a row", n, seed, i)
				}
				prev = i
				seen[i]++
			}
			for i, k := range seen {
				if k > (edits+n-1)/n {
					t.Errorf("n %d seed %d: %d picked %d times in %d edits", n, seed, i, k, edits)
				}
			}
		}
	}
}
