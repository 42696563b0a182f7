package sandbox

import (
	"bytes"
	"testing"

	. "github.com/onsi/gomega"
)

func TestPrefixWriter(t *testing.T) {
	tests := []struct {
		name   string
		writes []string
		want   string
	}{
		{name: "whole lines", writes: []string{"a\nb\n"}, want: "[c/p] a\n[c/p] b\n"},
		{name: "line split across writes", writes: []string{"hel", "lo\nwor", "ld\n"}, want: "[c/p] hello\n[c/p] world\n"},
		{name: "unterminated line flushed on close", writes: []string{"last"}, want: "[c/p] last\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			var out bytes.Buffer
			w := &prefixWriter{w: &out, prefix: "[c/p] "}
			for _, s := range tt.writes {
				n, err := w.Write([]byte(s))
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(n).To(Equal(len(s)))
			}
			g.Expect(w.Close()).To(Succeed())
			g.Expect(out.String()).To(Equal(tt.want))
		})
	}
}

func TestTailBufferKeepsTheEnd(t *testing.T) {
	g := NewWithT(t)
	tail := newTailBuffer(16)
	_, _ = tail.Write([]byte("first line\nsecond\nthird\n"))
	g.Expect(tail.lastLines(2)).To(Equal("second\nthird"))
	g.Expect(tail.contains("first")).To(BeFalse(), "older bytes beyond the limit are dropped")
}
