package render

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/yaml"
)

const (
	templateValuesOrigin = "ServiceTemplate values"
	serviceValuesOrigin  = "service values"
)

// resolveValues renders both values texts as Go templates, parses them as
// YAML maps and deep-merges them, the service's values winning.
func resolveValues(req Request, b *budget) (map[string]any, error) {
	data := templateData{Cluster: req.Cluster, Service: req.Service, TargetNamespace: req.TargetNamespace}
	defaults, err := parseValues(req.TemplateValuesFrom.or(templateValuesOrigin), req.TemplateValues, req.TemplateValuesFrom.Sensitive, data, b)
	if err != nil {
		return nil, err
	}
	overrides, err := parseValues(req.ServiceValuesFrom.or(serviceValuesOrigin), req.ServiceValues, req.ServiceValuesFrom.Sensitive, data, b)
	if err != nil {
		return nil, err
	}
	return mergeValues(defaults, overrides), nil
}

// or returns the origin o names, or def when it names none (the values are the spec's).
func (o ValuesOrigin) or(def string) string {
	if o.Origin == "" {
		return def
	}
	return o.Origin
}

// parseValues renders one values text and parses it as a YAML map. sensitive
// marks a text read from a Secret (see Document.Sensitive): its errors say
// where, never what the template engine or the parser said.
func parseValues(origin, text string, sensitive bool, data templateData, b *budget) (map[string]any, error) {
	if text == "" {
		return map[string]any{}, nil
	}
	out, err := executeTemplate(origin, text, data, b)
	if err != nil {
		if sensitive {
			err = withholdTemplateError(err)
		}
		return nil, err
	}
	v, err := yamlToValue(out)
	if err != nil {
		line, msg := yamlErrorDetail(err)
		where := ""
		if line > 0 {
			where = fmt.Sprintf(" at line %d", line)
		}
		cause := err
		if sensitive {
			msg, cause = withheld, nil
		}
		return nil, newError(ReasonInvalidValues, origin, "values are not valid YAML"+where+" (after Go template rendering): "+msg, cause)
	}
	switch m := v.(type) {
	case nil:
		return map[string]any{}, nil
	case map[string]any:
		return m, nil
	default:
		return nil, newError(ReasonInvalidValues, origin, fmt.Sprintf("values must be a YAML map of keys to values, not %s", typeName(v)), nil)
	}
}

// withholdHelmValuesError rewrites an error of a Helm render with values read
// from a Secret: Helm's messages about values (schema violations, templates
// that fail, invalid YAML rendered from them) may quote them. What the error
// says of itself, the message before its first ": ", is kept.
func withholdHelmValuesError(err error) error {
	var re *Error
	if !errors.As(err, &re) {
		return err
	}
	switch re.Reason {
	case ReasonInvalidValues, ReasonInvalidYAML, ReasonTemplateFailed:
		what, _, _ := strings.Cut(re.Message, ": ")
		re.Message, re.Err = what+": details withheld because values are read from a Secret", nil
	}
	return err
}

// yamlToValue parses one YAML document into JSON-compatible Go values, with
// integers as int64 (not float64) so that 10000000 renders as 10000000.
func yamlToValue(data []byte) (any, error) {
	j, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, err
	}
	var v any
	if err := utiljson.Unmarshal(j, &v); err != nil {
		return nil, err
	}
	return v, nil
}

// mergeValues returns base deep-merged with override: maps merge key by key,
// anything else (lists included) in override replaces what base has, and a
// null in override deletes the key, as in Helm. Neither input is modified.
func mergeValues(base, override map[string]any) map[string]any {
	out := make(map[string]any, len(base)+len(override))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range override {
		if v == nil {
			delete(out, k)
			continue
		}
		if om, ok := v.(map[string]any); ok {
			if bm, ok := out[k].(map[string]any); ok {
				out[k] = mergeValues(bm, om)
				continue
			}
			out[k] = mergeValues(nil, om)
			continue
		}
		out[k] = v
	}
	return out
}

func typeName(v any) string {
	switch v.(type) {
	case []any:
		return "a list"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case int64, float64:
		return "a number"
	default:
		return fmt.Sprintf("%T", v)
	}
}

var yamlLineRE = regexp.MustCompile(`(?:yaml: )?line (\d+): `)

// yamlErrorDetail extracts the line number (1-based, 0 if unknown) and the
// parser's message from a sigs.k8s.io/yaml error.
func yamlErrorDetail(err error) (int, string) {
	msg := err.Error()
	line := 0
	if m := yamlLineRE.FindStringSubmatchIndex(msg); m != nil {
		line, _ = strconv.Atoi(msg[m[2]:m[3]])
		msg = msg[m[1]:]
	}
	for _, p := range []string{"error converting YAML to JSON: ", "yaml: "} {
		if len(msg) >= len(p) && msg[:len(p)] == p {
			msg = msg[len(p):]
		}
	}
	return line, msg
}
