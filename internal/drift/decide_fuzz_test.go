package drift

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// FuzzDecide feeds Decide declared and live objects from arbitrary JSON (as a target cluster or
// a template author could shape them) and checks what must hold whatever the input: no panic;
// an object compared with itself never drifted; a deletion is always drift; no change reported
// at a path an ignore pointer covers; and no value of a Secret's data or stringData, plain or
// base64, nor of its kubectl last-applied annotation (which holds the data), in what a drift
// shows.
func FuzzDecide(f *testing.F) {
	seeds := []struct{ declared, live, ignore string }{
		{`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","labels":{"x":"1"}},"data":{"k":"v"}}`,
			`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","labels":{"x":"2"}},"data":{"k":"w"}}`, "/data"},
		{`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"},"data":{"password":"c2VjcmV0LXZhbHVl"},"stringData":{"token":"plain-token-value"}}`,
			`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"},"data":{"password":"b3RoZXItc2VjcmV0"},"stringData":{"token":"another-token"}}`, ""},
		{`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s","annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"data\":{\"password\":\"c2VjcmV0LXZhbHVl\"}}","team":"a"}}}`,
			`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s","annotations":{"kubectl.kubernetes.io/last-applied-configuration":"another-applied-value","team":"b"}}}`, ""},
		{`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s","annotations":{"kubectl.kubernetes.io/last-applied-configuration":"applied-plain-value"}}}`,
			`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"}}`, ""},
		{`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{"replicas":2,"template":{"spec":{"containers":[{"name":"c","image":"i:1","env":[{"name":"A","value":"1"}]}]}}}}`,
			`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d","managedFields":[{"manager":"kubectl-edit","operation":"Update","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:replicas":{}}}}]},"spec":{"replicas":5,"template":{"spec":{"containers":[{"name":"c2","image":"i:2"}]}}}}`, "/spec/replicas"},
		{`{"apiVersion":"v1","kind":"Service","spec":{"ports":[{"port":80,"protocol":"TCP","name":"http"}]}}`,
			`{"apiVersion":"v1","kind":"Service","spec":{"ports":[{"port":8081,"protocol":"TCP","name":"http"}]}}`, "/spec/ports/0"},
		{`{"kind":"X","a":[1,[2,{"b":null}]],"metadata":{"annotations":{"k":"v"}}}`, `{"kind":"X","a":"str","metadata":[]}`, "/a/~1b~0"},
	}
	for _, s := range seeds {
		f.Add(s.declared, s.live, s.ignore)
	}
	f.Fuzz(func(t *testing.T, declaredJSON, liveJSON, ignore string) {
		declared, ok := object(declaredJSON)
		if !ok {
			return
		}
		live, ok := object(liveJSON)
		if !ok {
			return
		}
		// The live object is of the declared kind: it is read back by that kind.
		live.SetAPIVersion(declared.GetAPIVersion())
		live.SetKind(declared.GetKind())
		var ignored []string
		if ignore != "" {
			ignored = []string{ignore}
		}

		if v := Decide(Declaration(declared), declared.DeepCopy(), nil); v.Drifted {
			t.Fatalf("an object compared with itself drifted: %+v", v)
		}
		if v := Decide(Declaration(declared), nil, ignored); !v.Drifted || !v.Deleted {
			t.Fatalf("a deletion is not drift: %+v", v)
		}
		v := Decide(Declaration(declared), live, ignored)
		if !v.Drifted && len(v.Fields) > 0 {
			t.Fatalf("fields without drift: %+v", v)
		}
		for _, fc := range v.Fields {
			if ignore != "" && Covered(fc.Path, ignored) {
				t.Fatalf("a change at %s, which %q ignores, was reported", fc.Path, ignore)
			}
		}
		if !isSecret(declared) {
			return
		}
		shown, _ := json.Marshal(v.Fields)
		for _, secret := range secretValues(declared, live) {
			if strings.Contains(string(shown), secret) {
				t.Fatalf("Secret value %q shown in a drift: %s", secret, shown)
			}
		}
	})
}

// object parses JSON into an object the API server could hold: a JSON object with a kind.
func object(s string) (*unstructured.Unstructured, bool) {
	m := map[string]any{}
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		return nil, false
	}
	u := &unstructured.Unstructured{Object: m}
	if kind, _ := m["kind"].(string); kind == "" {
		return nil, false
	}
	if _, ok := m["apiVersion"].(string); !ok {
		m["apiVersion"] = "v1"
	}
	return u, true
}

// secretValues lists the string values under data and stringData of the objects, with their
// base64 decodings, and their kubectl last-applied annotations, long enough that finding one in
// a diff by chance is implausible. Each is spelled as it would appear in the JSON of the shown
// fields, whose values are JSON themselves: escaped twice. A long value is also looked for by its
// start, which is what a drift shows of a long value.
func secretValues(objs ...*unstructured.Unstructured) []string {
	var out []string
	add := func(s string) {
		if len(s) < 8 {
			return
		}
		out = append(out, jsonEscaped(jsonEscaped(s)))
		if start := runePrefix(s, 40); len(start) >= 8 && len(start) < len(s) {
			out = append(out, jsonEscaped(jsonEscaped(start)))
		}
	}
	for _, o := range objs {
		md, _ := o.Object["metadata"].(map[string]any)
		annotations, _ := md["annotations"].(map[string]any)
		if s, ok := annotations["kubectl.kubernetes.io/last-applied-configuration"].(string); ok {
			add(s)
		}
		for _, field := range []string{"data", "stringData"} {
			m, _ := o.Object[field].(map[string]any)
			for _, v := range m {
				s, ok := v.(string)
				if !ok {
					continue
				}
				add(s)
				if b, err := base64.StdEncoding.DecodeString(s); err == nil {
					add(string(b))
				}
			}
		}
	}
	return out
}

// runePrefix is the longest start of s of at most n bytes that ends on a character boundary
// (as JSON encodes it: an invalid byte is one character).
func runePrefix(s string, n int) string {
	end := 0
	for end < len(s) {
		_, size := utf8.DecodeRuneInString(s[end:])
		if end+size > n {
			break
		}
		end += size
	}
	return s[:end]
}

// jsonEscaped is s as it appears inside a JSON string.
func jsonEscaped(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}
