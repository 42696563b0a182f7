package apply

import (
	"strings"
	"testing"
)

func TestDiffRedactsSecrets(t *testing.T) {
	live := &unstructuredObj{`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s","annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{\"data\":{\"p\":\"b2xk\"}}"}},"data":{"p":"b2xk","same":"c2FtZQ=="}}`}
	dry := &unstructuredObj{`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s","annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{\"data\":{\"p\":\"bmV3\"}}"}},"data":{"p":"bmV3","same":"c2FtZQ==","added":"YWRk"}}`}
	lines, err := updateDiff(live.get(t), dry.get(t))
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(lines, "\n")
	for _, secret := range []string{"b2xk", "bmV3", "YWRk", "c2FtZQ"} {
		if strings.Contains(got, secret) {
			t.Errorf("diff shows a secret value %q:\n%s", secret, got)
		}
	}
	for _, want := range []string{`/data/p: "*** (before)" -> "*** (after)"`, `/data/added: <none> -> "***"`} {
		if !strings.Contains(got, want) {
			t.Errorf("diff lacks %q:\n%s", want, got)
		}
	}
	created := createDiff(dry.get(t))
	if strings.Contains(created, "bmV3") || strings.Contains(created, "YWRk") || !strings.Contains(created, "+ data:") {
		t.Errorf("create diff:\n%s", created)
	}
}

func TestDiffIgnoresOthersMetadataRemovals(t *testing.T) {
	live := &unstructuredObj{`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","labels":{"a":"1","theirs":"x"}},"data":{"k":"v"}}`}
	dry := &unstructuredObj{`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","labels":{"a":"2"}},"data":{"k":"v","n":"1"}}`}
	lines, err := updateDiff(live.get(t), dry.get(t))
	if err != nil {
		t.Fatal(err)
	}
	want := `/metadata/labels/a: "1" -> "2"` + "\n" + `/data/n: <none> -> "1"`
	if got := strings.Join(lines, "\n"); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestCapLines(t *testing.T) {
	lines := make([]string, maxDiffLines+5)
	got := capLines(lines)
	if !strings.HasSuffix(got, "... 5 more lines") {
		t.Errorf("got %q", got[len(got)-30:])
	}
}
