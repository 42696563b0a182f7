package webui

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"strings"
	"time"

	"holdfast.dev/holdfast/internal/fleetview"
)

//go:embed templates/*.html
var templateFiles embed.FS

//go:embed static
var staticFiles embed.FS

// assets are the files under /static/: the script and the style sheet, embedded so the page
// needs nothing from the network at run time.
var assets fs.FS = staticFiles

// views are the templates that render a page, each with the layout.
var views = []string{"fleet", "drift", "charts", "preview", "result"}

// templates are the parsed views by name.
type templates map[string]*template.Template

var funcs = template.FuncMap{
	"ago":       func(now time.Time, t *time.Time) string { return fleetview.Ago(t, now) },
	"timestamp": timestamp,
	"latency": func(s *float64) string {
		if s == nil {
			return ""
		}
		return fleetview.Latency(*s)
	},
	"lower": strings.ToLower,
	"count": fleetview.Count,
	"slug":  func(s DriftState) string { return strings.ToLower(strings.ReplaceAll(string(s), " ", "-")) },
	"object": func(kind, group, namespace, name string) string {
		if group != "" {
			kind += "." + group
		}
		if namespace != "" {
			name = namespace + "/" + name
		}
		return kind + " " + name
	},
}

// timestamp is t (a time.Time or *time.Time) in RFC 3339, UTC; "" for a nil one.
func timestamp(t any) string {
	switch t := t.(type) {
	case time.Time:
		return t.UTC().Format(time.RFC3339)
	case *time.Time:
		if t != nil {
			return t.UTC().Format(time.RFC3339)
		}
	}
	return ""
}

func parseTemplates() (templates, error) {
	out := templates{}
	for _, v := range views {
		t, err := template.New(v).Funcs(funcs).ParseFS(templateFiles, "templates/layout.html", "templates/"+v+".html")
		if err != nil {
			return nil, fmt.Errorf("parsing the %s view: %w", v, err)
		}
		out[v] = t
	}
	return out, nil
}

// render executes a view into a buffer first, so that a template error gives a 500 and not half
// a page; partial renders only the view's data (the region live updates replace).
func (t templates) render(w http.ResponseWriter, view string, partial bool, code int, p page) {
	name := "layout"
	if partial {
		name = "data"
	}
	var buf bytes.Buffer
	if err := t[view].ExecuteTemplate(&buf, name, p); err != nil {
		http.Error(w, "rendering the page: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_, _ = buf.WriteTo(w)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}
