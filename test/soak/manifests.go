package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"
)

// The service set under test: two services, each from its own inline ServiceTemplate, into one
// namespace the first one declares.
const (
	hubNamespace    = "soak"      // the ServiceTemplates' namespace on the hub
	serviceSetName  = "soak"      // the MultiClusterService
	appNamespace    = "soak-apps" // the namespace on the targets
	memberLabel     = "soak.holdfast.dev/member"
	tickLabel       = "soak.holdfast.dev/tick"
	tierLabel       = "soak.holdfast.dev/tier"
	partOfLabel     = "soak.holdfast.dev/part-of"
	editor          = "soak-editor" // the field manager of every drift
	configTemplate  = "soak-config"
	webTemplate     = "soak-web"
	configService   = "config"
	webService      = "web"
	tierDeclared    = "declared"
	declaredReplica = 2
)

// Kinds of the declared objects.
const (
	kindNamespace  = "Namespace"
	kindConfigMap  = "ConfigMap"
	kindSecret     = "Secret"
	kindDeployment = "Deployment"
	kindService    = "Service"
)

// kinds lists every kind the templates declare, in the order the checks read them.
var kinds = []string{kindNamespace, kindConfigMap, kindSecret, kindDeployment, kindService}

// objRef names a declared object on a target: namespaced ones are in appNamespace.
type objRef struct{ Kind, Name string }

func (r objRef) String() string { return r.Kind + " " + r.Name }

// templateOf says which template declares an object.
func templateOf(r objRef) string {
	if r.Kind == kindDeployment || r.Kind == kindService {
		return webTemplate
	}
	return configTemplate
}

// revisions is the revision of each template: every template change adds one.
type revisions map[string]int

// secrets makes the planted Secret values: distinctive strings no log line or status field
// should ever hold. Every value handed out is remembered, for the leak scan.
type secrets struct {
	run    string
	issued []string
}

func (s *secrets) declared(rev int) string {
	return s.remember(fmt.Sprintf("hfsoak-%s-declared-r%d", s.run, rev))
}

func (s *secrets) drifted(n int) string {
	return s.remember(fmt.Sprintf("hfsoak-%s-drifted-%d", s.run, n))
}

func (s *secrets) remember(v string) string {
	if !slices.Contains(s.issued, v) {
		s.issued = append(s.issued, v)
	}
	return v
}

var logLevels = []string{"info", "debug", "warn"}

// templateYAML renders a template at a revision: what the ServiceTemplate's inline holds.
func templateYAML(template string, rev int, sec *secrets) string {
	var docs []string
	add := func(format string, args ...any) { docs = append(docs, fmt.Sprintf(format, args...)) }
	switch template {
	case configTemplate:
		add(`apiVersion: v1
kind: Namespace
metadata:
  name: %s
  labels:
    %s: soak
`, appNamespace, partOfLabel)
		add(`apiVersion: v1
kind: ConfigMap
metadata:
  name: app-config
  labels:
    %s: %s
data:
  revision: "r%d"
  LOG_LEVEL: %s
  rev-%d: present
`, tierLabel, tierDeclared, rev, logLevels[rev%len(logLevels)], rev)
		add(`apiVersion: v1
kind: ConfigMap
metadata:
  name: app-flags
  labels:
    %s: %s
data:
  feature-a: "on"
  feature-b: "off"
`, tierLabel, tierDeclared)
		if rev%2 == 0 {
			add(`apiVersion: v1
kind: ConfigMap
metadata:
  name: app-extra
  labels:
    %s: %s
data:
  note: declared in even revisions only
`, tierLabel, tierDeclared)
		}
		add(`apiVersion: v1
kind: Secret
metadata:
  name: app-secret
  labels:
    %s: %s
type: Opaque
stringData:
  token: %s
  username: svc-soak
`, tierLabel, tierDeclared, sec.declared(rev))
	case webTemplate:
		add(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels:
    %s: %s
spec:
  replicas: %d
  selector:
    matchLabels:
      app.kubernetes.io/name: web
  template:
    metadata:
      labels:
        app.kubernetes.io/name: web
    spec:
      containers:
      - name: app
        image: registry.k8s.io/pause:3.10
        env:
        - name: REVISION
          value: "w%d"
        ports:
        - containerPort: 8080
`, tierLabel, tierDeclared, declaredReplica, rev)
		add(`apiVersion: v1
kind: Service
metadata:
  name: web
  labels:
    %s: %s
spec:
  selector:
    app.kubernetes.io/name: web
  ports:
  - name: http
    port: 80
    targetPort: %d
`, tierLabel, tierDeclared, 8080+rev%2)
	default:
		panic("unknown template " + template)
	}
	return strings.Join(docs, "---\n")
}

// declaration is what the templates declare at some revisions: each object as the JSON the API
// server would serve for it (numbers as float64, Secret stringData as base64 data).
type declaration map[objRef]map[string]any

// declare parses the templates at revs.
func declare(revs revisions, sec *secrets) (declaration, error) {
	out := declaration{}
	for _, t := range []string{configTemplate, webTemplate} {
		for doc := range strings.SplitSeq(templateYAML(t, revs[t], sec), "---\n") {
			var obj map[string]any
			if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
				return nil, fmt.Errorf("parsing template %s revision %d: %w", t, revs[t], err)
			}
			kind, _ := obj["kind"].(string)
			meta, _ := obj["metadata"].(map[string]any)
			name, _ := meta["name"].(string)
			if sd, ok := obj["stringData"].(map[string]any); ok {
				data := map[string]any{}
				for k, v := range sd {
					data[k] = base64.StdEncoding.EncodeToString([]byte(v.(string)))
				}
				obj["data"] = data
				delete(obj, "stringData")
			}
			out[objRef{kind, name}] = obj
		}
	}
	return out, nil
}

// refs lists the declared objects, sorted.
func (d declaration) refs() []objRef {
	out := make([]objRef, 0, len(d))
	for r := range d {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// normalize turns an object as a client returns it into plain JSON values, as declare does.
func normalize(obj map[string]any) (map[string]any, error) {
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// differences lists where live differs from declared, by path: every declared field must have
// its declared value (the API server adds defaults and other managers' fields, which are not
// compared), and a ConfigMap's or Secret's data must hold exactly the declared keys (the
// templates drop keys between revisions, and no drift adds one). nil means live is as declared.
func differences(declared, live map[string]any) []string {
	var out []string
	var walk func(path string, d, l any)
	walk = func(path string, d, l any) {
		switch dv := d.(type) {
		case map[string]any:
			lv, ok := l.(map[string]any)
			if !ok {
				out = append(out, fmt.Sprintf("%s: declared an object, found %s", path, short(l)))
				return
			}
			for k, v := range dv {
				lval, present := lv[k]
				if !present {
					out = append(out, fmt.Sprintf("%s.%s: missing", path, k))
					continue
				}
				walk(path+"."+k, v, lval)
			}
		case []any:
			lv, ok := l.([]any)
			if !ok || len(lv) != len(dv) {
				out = append(out, fmt.Sprintf("%s: declared %d items, found %s", path, len(dv), short(l)))
				return
			}
			for i := range dv {
				walk(fmt.Sprintf("%s[%d]", path, i), dv[i], lv[i])
			}
		default:
			if fmt.Sprint(d) != fmt.Sprint(l) {
				out = append(out, fmt.Sprintf("%s: declared %s, found %s", path, short(d), short(l)))
			}
		}
	}
	meta, _ := declared["metadata"].(map[string]any)
	for k, v := range declared {
		if k == "metadata" {
			continue
		}
		walk("."+k, v, live[k])
	}
	liveMeta, _ := live["metadata"].(map[string]any)
	if labels, ok := meta["labels"]; ok {
		walk(".metadata.labels", labels, liveMeta["labels"])
	}
	if kind, _ := declared["kind"].(string); kind == kindConfigMap || kind == kindSecret {
		dd, _ := declared["data"].(map[string]any)
		ld, _ := live["data"].(map[string]any)
		for k := range ld {
			if _, ok := dd[k]; !ok {
				out = append(out, fmt.Sprintf(".data.%s: not declared (a key of another revision?)", k))
			}
		}
	}
	sort.Strings(out)
	return out
}

// short renders a value for a difference, cut to a readable length. Secret values never reach
// it: Secret differences are reported by path only (see describeDiffs).
func short(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	s := string(b)
	if len(s) > 80 {
		s = s[:80] + "…"
	}
	return s
}

// describeDiffs joins differences for a report, naming only the paths of a Secret's (whose
// values this program planted and must not print either).
func describeDiffs(r objRef, diffs []string) string {
	if r.Kind == kindSecret {
		paths := make([]string, len(diffs))
		for i, d := range diffs {
			p, _, _ := strings.Cut(d, ":")
			paths[i] = p + ": <value not shown>"
		}
		diffs = paths
	}
	return strings.Join(diffs, "; ")
}
