package drift

import (
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	smdvalue "sigs.k8s.io/structured-merge-diff/v6/value"

	"holdfast.dev/holdfast/internal/fieldset"
)

// ReplacedItem is an item of an associative list (a list keyed by some of its items' fields:
// a Service's ports by port and protocol, containers, env vars and volumes by name) on a live
// object that took the place of an item Holdfast declares. Someone changed the declared item's
// key — a port 80 -> 8081, a container renamed — which the API server records as the declared
// item removed and a foreign one added. Server-side apply re-adds the declared item but cannot
// remove the foreign one (another manager owns it), so the list would hold both, and the API
// server may refuse the result (two ports named http). A correction puts the declared item
// back in its place (in one write, so the list is never left without it: a Service needs a
// port), then applies.
type ReplacedItem struct {
	// Pointer is the item's JSON pointer (RFC 6901) in the live object, by index.
	Pointer string
	// Path names the item in structured-merge-diff notation, for logs.
	Path string
	// Item is the live item, so a replacement can first test that it is still there.
	Item any
	// Declared is the declared item it replaced, to put back in its place.
	Declared any
	// index is the item's index in its list, listPointer the list's pointer: removals in one
	// list go from the last item to the first.
	index       int
	listPointer string
}

// ReplacedItems returns the items of live's associative lists that replaced items desired
// declares, so that a correction restores the declared list. An item counts when another field
// manager created it (it owns the item itself, not only fields in it), desired declares the
// list, an item desired declares there is missing from live, and the two agree on at least half
// of the declared item's other fields, each as declared (defaults the API server added do not
// count against it): a port keeps its name and target port, a renamed container its image, a
// renamed env var its value, a renamed volume its source; each missing item pairs with at most one,
// the most alike. Items others merely added beside the declared ones agree on nothing and stay.
// Which fields key a list is read from managedFields, so no schema is needed.
func ReplacedItems(desired, live *unstructured.Unstructured) []ReplacedItem {
	if desired == nil || live == nil {
		return nil
	}
	sets, err := fieldset.ParseManagedFields(live, fieldset.FieldManager)
	if err != nil {
		return nil
	}
	// Items other managers created, grouped by list.
	type list struct {
		path  fieldpath.Path
		items []fieldpath.Path
	}
	lists := map[string]*list{}
	var order []string
	sets.Others.Iterate(func(p fieldpath.Path) {
		if len(p) == 0 || p[len(p)-1].Key == nil || sets.Owned.Has(p) {
			return
		}
		lp := p[:len(p)-1]
		k := lp.String()
		if lists[k] == nil {
			lists[k] = &list{path: lp.Copy()}
			order = append(order, k)
		}
		lists[k].items = append(lists[k].items, p.Copy())
	})
	var out []ReplacedItem
	for _, k := range order {
		out = append(out, replacedIn(desired.Object, live.Object, lists[k].path, lists[k].items)...)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].listPointer != out[j].listPointer {
			return out[i].listPointer < out[j].listPointer
		}
		return out[i].index > out[j].index
	})
	return out
}

// replacedIn pairs the declared items missing from the live list at lp with the foreign items
// (paths of items other managers created) that replaced them.
func replacedIn(desired, live map[string]any, lp fieldpath.Path, foreign []fieldpath.Path) []ReplacedItem {
	dv, ok := fieldset.Lookup(desired, lp)
	if !ok {
		return nil
	}
	declared, _ := dv.([]any)
	lv, _ := fieldset.Lookup(live, lp)
	liveList, _ := lv.([]any)
	listPointer, ok := pointerOf(live, lp)
	if !ok || len(declared) == 0 {
		return nil
	}
	keyNames := keyFields(*foreign[0][len(foreign[0])-1].Key)
	var missing []map[string]any
	for _, d := range declared {
		dm, ok := d.(map[string]any)
		if ok && liveIndex(liveList, dm, keyNames) < 0 {
			missing = append(missing, dm)
		}
	}
	type candidate struct {
		index int
		item  map[string]any
		path  fieldpath.Path
	}
	var candidates []candidate
	for _, p := range foreign {
		i := indexOfKey(liveList, *p[len(p)-1].Key)
		if i < 0 {
			continue
		}
		item, _ := liveList[i].(map[string]any)
		if declaredIndex(declared, item, keyNames) >= 0 {
			continue // it has a declared key: a declared item someone else also holds
		}
		candidates = append(candidates, candidate{i, item, p})
	}
	var out []ReplacedItem
	taken := map[int]bool{}
	for _, d := range missing {
		best, bestScore := -1, 0
		for ci, c := range candidates {
			if taken[ci] {
				continue
			}
			score, of := likeness(d, c.item, keyNames)
			if score*2 >= of && score > bestScore {
				best, bestScore = ci, score
			}
		}
		if best < 0 {
			continue
		}
		taken[best] = true
		c := candidates[best]
		out = append(out, ReplacedItem{Pointer: listPointer + "/" + strconv.Itoa(c.index), Path: c.path.String(),
			Item: c.item, Declared: d, index: c.index, listPointer: listPointer})
	}
	return out
}

// likeness counts the fields other than the key that declared sets and item has with the same
// value, of how many declared sets.
func likeness(declared, item map[string]any, keyNames []string) (same, of int) {
	for f, v := range declared {
		if contains(keyNames, f) {
			continue
		}
		of++
		if iv, ok := item[f]; ok && covers(v, iv) {
			same++
		}
	}
	return same, of
}

// covers reports whether live holds everything declared sets: the same scalars and lists, and
// for maps the declared keys (the API server may have defaulted others in).
func covers(declared, live any) bool {
	dm, ok := declared.(map[string]any)
	if !ok {
		return equalJSON(declared, live)
	}
	lm, ok := live.(map[string]any)
	if !ok {
		return false
	}
	for k, v := range dm {
		if lv, ok := lm[k]; !ok || !covers(v, lv) {
			return false
		}
	}
	return true
}

func keyFields(k smdvalue.FieldList) []string {
	names := make([]string, 0, len(k))
	for _, f := range k {
		names = append(names, f.Name)
	}
	return names
}

func contains(names []string, n string) bool {
	for _, x := range names {
		if x == n {
			return true
		}
	}
	return false
}

// declaredIndex returns the index of the declared item of declared whose key matches the live
// item's, or -1. A key field the declared item leaves out (a Service port's protocol) takes the
// live value the API server defaulted in, so it is not compared.
func declaredIndex(declared []any, live map[string]any, keyNames []string) int {
	for i, d := range declared {
		if dm, ok := d.(map[string]any); ok && keyMatches(dm, live, keyNames) {
			return i
		}
	}
	return -1
}

// liveIndex returns the index of the live item matching a declared item's key, or -1.
func liveIndex(live []any, declared map[string]any, keyNames []string) int {
	for i, it := range live {
		if lm, ok := it.(map[string]any); ok && keyMatches(declared, lm, keyNames) {
			return i
		}
	}
	return -1
}

func keyMatches(declared, live map[string]any, keyNames []string) bool {
	for _, n := range keyNames {
		d, ok := declared[n]
		if !ok {
			continue
		}
		if l, ok := live[n]; !ok || !equalJSON(d, l) {
			return false
		}
	}
	return true
}

// indexOfKey returns the index of the item of items with key k, or -1.
func indexOfKey(items []any, k smdvalue.FieldList) int {
	for i, it := range items {
		if fieldset.MatchesKey(it, k) {
			return i
		}
	}
	return -1
}

// pointerOf returns the JSON pointer of the field at p in content, with list items by index.
func pointerOf(content map[string]any, p fieldpath.Path) (string, bool) {
	var b strings.Builder
	var cur any = content
	for _, pe := range p {
		switch {
		case pe.FieldName != nil:
			m, ok := cur.(map[string]any)
			if !ok {
				return "", false
			}
			b.WriteString("/" + strings.ReplaceAll(strings.ReplaceAll(*pe.FieldName, "~", "~0"), "/", "~1"))
			cur = m[*pe.FieldName]
		case pe.Key != nil:
			l, _ := cur.([]any)
			i := indexOfKey(l, *pe.Key)
			if i < 0 {
				return "", false
			}
			b.WriteString("/" + strconv.Itoa(i))
			cur = l[i]
		default:
			return "", false
		}
	}
	return b.String(), true
}
