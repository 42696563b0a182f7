package admission

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/fieldset"
)

// ignoreRuleFor is an ignore rule of one service.
type ignoreRuleFor struct {
	service string
	rule    holdfastv1.IgnoreRule
}

// fieldNode is a node of the tree of ignored paths, in managedFields notation: children by
// fieldsV1 key ("f:spec"), or any list item ("*": a numeric or "*" pointer segment, as
// fieldset.PointerCovers reads them). ignoredWhen is a CEL condition under which everything
// from here down is ignored ("" never).
type fieldNode struct {
	ignoredWhen []string
	children    map[string]*fieldNode
}

// anyItem is the child key of a wildcard segment: any list item (fieldsV1 keys "k:", "v:", "i:").
const anyItem = "*"

// maxFieldDepth bounds the ignored paths' depth, so the generated CEL stays small.
const maxFieldDepth = 16

// fieldsUnchanged is the CEL condition that an update left Holdfast's own field set as it was,
// outside the ignored fields: every field Holdfast owned before it still owns, with the same
// children. Nobody but Holdfast can add to its set, and another manager that changes or removes
// one of its fields takes it away (an Update removes it, a forced Apply takes it over); a value
// set to what it already was changes nothing. The sets are the fieldsV1 of Holdfast's apply
// entry in the old and new object's managedFields, which the API server has computed for this
// very request before admission runs.
func fieldsUnchanged(rules []ignoreRuleFor) (string, error) {
	root := &fieldNode{}
	for _, r := range rules {
		when := ruleCondition(r)
		for _, p := range r.rule.Paths {
			segs, ok := fieldset.ParsePointer(p)
			if !ok {
				continue // drift.Policy reports it and leaves the rule out
			}
			if len(segs) > maxFieldDepth {
				return "", fmt.Errorf("ignored path %s of service %s is deeper than %d fields", p, r.service, maxFieldDepth)
			}
			node := root
			for _, seg := range segs {
				key := "f:" + seg
				if _, err := strconv.Atoi(seg); err == nil || seg == "*" || seg == "-" {
					key = anyItem
				}
				if node.children == nil {
					node.children = map[string]*fieldNode{}
				}
				if node.children[key] == nil {
					node.children[key] = &fieldNode{}
				}
				node = node.children[key]
			}
			node.ignoredWhen = append(node.ignoredWhen, when)
		}
	}
	return "size(variables.before) == 0 || (size(variables.after) > 0 && " +
		root.unchanged("variables.before[0].fieldsV1", "variables.after[0].fieldsV1", 0) + ")", nil
}

// unchanged is the CEL condition for the node at depth, whose old and new field sets are the
// CEL expressions o and n. (The API server's CEL has no cel.bind: the expressions are spelled
// out, each node's once, with one comprehension variable per depth.)
func (n *fieldNode) unchanged(o, nw string, depth int) string {
	expr := o + " == " + nw
	if len(n.children) > 0 {
		k := "k" + strconv.Itoa(depth)
		expr += " || " + o + ".all(" + k + ", " + n.dispatch(o, nw, k, depth) + ")"
	}
	if when := n.ignored(); when != "false" {
		expr = when + " || " + expr
	}
	return "(" + expr + ")"
}

// dispatch is the condition on one key k of the old field set o at depth: a child with ignored
// paths below is compared by its own rule; any other key must be kept as it was.
func (n *fieldNode) dispatch(o, nw, k string, depth int) string {
	child := func(c *fieldNode) string {
		return "(" + k + " in " + nw + " ? " + c.unchanged(o+"["+k+"]", nw+"["+k+"]", depth+1) + " : " + c.ignored() + ")"
	}
	same := "(" + k + " in " + nw + " && " + o + "[" + k + "] == " + nw + "[" + k + "])"
	rest := same
	if c := n.children[anyItem]; c != nil {
		rest = "(" + k + `.startsWith("k:") || ` + k + `.startsWith("v:") || ` + k + `.startsWith("i:") ? ` + child(c) + " : " + same + ")"
	}
	keys := make([]string, 0, len(n.children))
	for key := range n.children {
		if key != anyItem {
			keys = append(keys, key)
		}
	}
	sort.Strings(keys)
	expr := rest
	for i := len(keys) - 1; i >= 0; i-- {
		expr = "(" + k + " == " + strconv.Quote(keys[i]) + " ? " + child(n.children[keys[i]]) + " : " + expr + ")"
	}
	return expr
}

// ignored is the CEL condition under which the whole node is ignored.
func (n *fieldNode) ignored() string {
	if len(n.ignoredWhen) == 0 {
		return "false"
	}
	seen := map[string]bool{}
	var parts []string
	for _, w := range n.ignoredWhen {
		if w == "true" {
			return "true"
		}
		if !seen[w] {
			seen[w] = true
			parts = append(parts, w)
		}
	}
	return "(" + strings.Join(parts, " || ") + ")"
}

// ruleCondition is the CEL condition that the rule applies to the object of the request, as
// drift.Policy matches it: its service, then the rule's target.
func ruleCondition(r ignoreRuleFor) string {
	parts := []string{"variables.service == " + strconv.Quote(r.service)}
	if t := r.rule.Target; t != nil {
		if t.Group != nil {
			parts = append(parts, "request.kind.group == "+strconv.Quote(*t.Group))
		}
		if t.Kind != "" {
			parts = append(parts, "request.kind.kind == "+strconv.Quote(t.Kind))
		}
		if t.Namespace != "" {
			parts = append(parts, "request.namespace == "+strconv.Quote(t.Namespace))
		}
		if prefix, ok := strings.CutSuffix(t.Name, "*"); ok {
			parts = append(parts, "request.name.startsWith("+strconv.Quote(prefix)+")")
		} else if t.Name != "" {
			parts = append(parts, "request.name == "+strconv.Quote(t.Name))
		}
		if t.LabelSelector != nil {
			parts = append(parts, labelCondition(t.LabelSelector)...)
		}
	}
	return "(" + strings.Join(parts, " && ") + ")"
}

// labelCondition is a label selector over the object's labels before the request, in CEL.
func labelCondition(sel *metav1.LabelSelector) []string {
	const labels = "oldObject.metadata.labels"
	value := func(k string) string { return labels + "[" + strconv.Quote(k) + "]" }
	keys := make([]string, 0, len(sel.MatchLabels))
	for k := range sel.MatchLabels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, "("+hasKey(labels, k)+" && "+value(k)+" == "+strconv.Quote(sel.MatchLabels[k])+")")
	}
	for _, e := range sel.MatchExpressions {
		switch e.Operator {
		case metav1.LabelSelectorOpIn:
			parts = append(parts, "("+hasKey(labels, e.Key)+" && "+value(e.Key)+" in "+celList(e.Values)+")")
		case metav1.LabelSelectorOpNotIn:
			parts = append(parts, "!("+hasKey(labels, e.Key)+" && "+value(e.Key)+" in "+celList(e.Values)+")")
		case metav1.LabelSelectorOpExists:
			parts = append(parts, "("+hasKey(labels, e.Key)+")")
		case metav1.LabelSelectorOpDoesNotExist:
			parts = append(parts, "!("+hasKey(labels, e.Key)+")")
		default:
			parts = append(parts, "false") // drift.Policy reports the selector and leaves the rule out
		}
	}
	return parts
}
