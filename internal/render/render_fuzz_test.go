package render_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"holdfast.dev/holdfast/internal/render"
)

// FuzzRenderDocuments renders arbitrary manifest text, as a Go template or not, read from a
// Secret or not, and checks what holds whatever the input: Render returns (no panic, no hang
// past the test's deadline); a failure is a one-line *render.Error with a reason; and an error
// about content read from a Secret quotes nothing of it.
func FuzzRenderDocuments(f *testing.F) {
	for _, s := range []string{
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {k: v}\n",
		"---\napiVersion: v1\nkind: Secret\nmetadata: {name: s}\nstringData: {p: x}\n---\n",
		"apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: b}}\n",
		"{{ range until 3 }}---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c{{ . }}}\n{{ end }}",
		"key: &a [*a]\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: 1}\n",
		"{{ repeat 100000000 \"x\" }}",
	} {
		f.Add(s, true, false)
		f.Add(s, false, true)
	}
	f.Fuzz(func(t *testing.T, text string, goTemplate, sensitive bool) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		req := render.Request{Service: "svc", Limits: render.Limits{MaxSteps: 10000, Timeout: 5 * time.Second},
			Source: render.Source{GoTemplate: goTemplate, Documents: []render.Document{{Origin: "Secret fleet/src key \"m.yaml\"", Content: []byte(text), Sensitive: sensitive}}}}
		_, err := render.Render(ctx, req, nil)
		if err == nil {
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("Render ran into the test's deadline: %v", err)
		}
		if render.ReasonOf(err) == "" {
			t.Fatalf("an error without a reason: %v", err)
		}
		msg := err.Error()
		if strings.Contains(msg, "\n") {
			t.Fatalf("a multi-line error: %q", msg)
		}
		if !sensitive {
			return
		}
		for _, line := range strings.Split(text, "\n") {
			if s := strings.TrimSpace(line); len(s) >= 12 && strings.Contains(msg, s) {
				t.Fatalf("an error about content read from a Secret quotes it: %q in %q", s, msg)
			}
		}
	})
}
