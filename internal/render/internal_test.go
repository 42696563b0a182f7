package render

import (
	"reflect"
	"testing"
)

func TestMergeValues(t *testing.T) {
	tests := []struct {
		name           string
		base, override map[string]any
		want           map[string]any
	}{
		{"override wins", map[string]any{"a": int64(1)}, map[string]any{"a": int64(2)}, map[string]any{"a": int64(2)}},
		{"maps merge deeply",
			map[string]any{"img": map[string]any{"repo": "nginx", "tag": "1"}, "keep": true},
			map[string]any{"img": map[string]any{"tag": "2"}},
			map[string]any{"img": map[string]any{"repo": "nginx", "tag": "2"}, "keep": true}},
		{"lists are replaced", map[string]any{"l": []any{"a", "b"}}, map[string]any{"l": []any{"c"}}, map[string]any{"l": []any{"c"}}},
		{"null deletes", map[string]any{"a": int64(1), "b": int64(2)}, map[string]any{"b": nil}, map[string]any{"a": int64(1)}},
		{"map replaces scalar", map[string]any{"a": "x"}, map[string]any{"a": map[string]any{"b": "c", "d": nil}}, map[string]any{"a": map[string]any{"b": "c"}}},
		{"empty base", nil, map[string]any{"a": "x"}, map[string]any{"a": "x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := deepCopy(tt.base)
			if got := mergeValues(tt.base, tt.override); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("merge = %v, want %v", got, tt.want)
			}
			if !reflect.DeepEqual(before, deepCopy(tt.base)) {
				t.Errorf("base was modified")
			}
		})
	}
}

func deepCopy(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := map[string]any{}
	for k, v := range m {
		if mm, ok := v.(map[string]any); ok {
			v = deepCopy(mm)
		}
		out[k] = v
	}
	return out
}

func TestSplitDocuments(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		lines []int
		texts []string
	}{
		{"single", "a: 1\n", []int{1}, []string{"a: 1\n"}},
		{"leading separator", "---\na: 1\n---\nb: 2", []int{2, 4}, []string{"a: 1\n", "b: 2"}},
		{"blank documents dropped", "a: 1\n---\n\n---\n# c\n", []int{1, 5}, []string{"a: 1\n", "# c\n"}},
		{"separator with comment", "a: 1\n--- # next\nb: 2\n", []int{1, 3}, []string{"a: 1\n", "b: 2\n"}},
		{"inline content after separator", "--- {a: 1}\n", []int{1}, []string{"{a: 1}\n"}},
		{"--- inside a value is not a separator", "a: |\n  ---x\n", []int{1}, []string{"a: |\n  ---x\n"}},
		{"----- is not a separator", "a: 1\n-----\n", []int{1}, []string{"a: 1\n-----\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			docs := splitDocuments([]byte(tt.in))
			if len(docs) != len(tt.lines) {
				t.Fatalf("got %d documents, want %d: %+v", len(docs), len(tt.lines), docs)
			}
			for i, d := range docs {
				if d.line != tt.lines[i] || string(d.text) != tt.texts[i] || d.index != i+1 {
					t.Errorf("doc %d = {%d %d %q}, want {%d %d %q}", i, d.index, d.line, d.text, i+1, tt.lines[i], tt.texts[i])
				}
			}
		})
	}
}
