package patch

import (
	"fmt"
	"maps"
	"slices"
	"sort"
)

// diffOptions select what a strategic diff produces.
type diffOptions struct {
	setElementOrder bool // emit $setElementOrder lists for merge lists
	noChanges       bool // leave out additions and changes
	noDeletions     bool // leave out deletions
}

// CreateStrategicMergePatch returns the strategic merge patch that turns
// original into modified under schema: removed fields are null, merge lists
// get per-item patches, "$patch": "delete" items, a
// "$deleteFromPrimitiveList/<field>" list and a "$setElementOrder/<field>"
// list, retainKeys fields a "$retainKeys" list.
func CreateStrategicMergePatch(original, modified []byte, schema Schema) ([]byte, error) {
	o, err := decodeObject("original object", original)
	if err != nil {
		return nil, err
	}
	mod, err := decodeObject("modified object", modified)
	if err != nil {
		return nil, err
	}
	p, err := diffMaps(schema, nil, o, mod, diffOptions{setElementOrder: true}, false)
	if err != nil {
		return nil, err
	}
	return encode(p)
}

// CreateThreeWayStrategicMergePatch returns the strategic merge patch
// `kubectl apply` sends: original is the last-applied configuration (the
// kubectl.kubernetes.io/last-applied-configuration annotation), modified
// the new manifest, current the live object. The patch changes what
// modified changes relative to current, deletes what modified dropped
// relative to original, and leaves alone fields only current has, such as
// a label another client added or a status a controller wrote.
func CreateThreeWayStrategicMergePatch(original, modified, current []byte, schema Schema) ([]byte, error) {
	o, err := decodeObject("original object", original)
	if err != nil {
		return nil, err
	}
	mod, err := decodeObject("modified object", modified)
	if err != nil {
		return nil, err
	}
	c, err := decodeObject("current object", current)
	if err != nil {
		return nil, err
	}
	delta, err := diffMaps(schema, nil, c, mod, diffOptions{setElementOrder: true, noDeletions: true}, false)
	if err != nil {
		return nil, err
	}
	deletions, err := diffMaps(schema, nil, o, mod, diffOptions{setElementOrder: true, noChanges: true}, false)
	if err != nil {
		return nil, err
	}
	m := &merger{schema: schema, apply: false}
	p, err := m.mergeMap(nil, deletions, delta)
	if err != nil {
		return nil, err
	}
	return encode(p)
}

// diffMaps returns the strategic patch from original to modified at path.
// retainKeys adds a $retainKeys list of modified's fields.
func diffMaps(schema Schema, path []string, original, modified map[string]any, opts diffOptions, retainKeys bool) (map[string]any, error) {
	patch := map[string]any{}
	var keep []any
	for _, k := range slices.Sorted(maps.Keys(modified)) {
		mv := modified[k]
		if retainKeys && mv != nil {
			keep = append(keep, k)
		}
		ov, found := original[k]
		if !found {
			if !opts.noChanges {
				patch[k] = mv
			}
			continue
		}
		if k == directiveMarker {
			if !sameValue(ov, mv) {
				patch[k] = mv
			}
			continue
		}
		if typeName(ov) != typeName(mv) {
			if !opts.noChanges {
				patch[k] = mv
			}
			continue
		}
		switch ot := ov.(type) {
		case map[string]any:
			meta := lookup(schema, child(path, k))
			if meta.strategy == replaceDirective {
				if !opts.noChanges {
					patch[k] = mv
				}
				continue
			}
			sub, err := diffMaps(schema, child(path, k), ot, mv.(map[string]any), opts, meta.retainKeys)
			if err != nil {
				return nil, err
			}
			if len(sub) > 0 {
				patch[k] = sub
			}
		case []any:
			meta := lookup(schema, child(path, k))
			if meta.strategy != mergeDirective {
				if !opts.noChanges && !equalJSON(ov, mv) {
					patch[k] = mv
				}
				continue
			}
			add, del, order, err := diffLists(schema, child(path, k), ot, mv.([]any), meta.mergeKey, opts, meta.retainKeys)
			if err != nil {
				return nil, err
			}
			if len(add) > 0 {
				patch[k] = add
			}
			if len(del) > 0 {
				patch[deleteFromPrimitiveList+"/"+k] = del
			}
			if len(order) > 0 {
				patch[setElementOrder+"/"+k] = order
			}
		default:
			if !opts.noChanges && !equalJSON(ov, mv) {
				patch[k] = mv
			}
		}
	}
	if !opts.noDeletions {
		for k := range original {
			if _, found := modified[k]; !found {
				patch[k] = nil
			}
		}
	}
	if len(keep) > 0 && (len(patch) > 0 || hasExtraField(original, modified)) {
		patch[retainKeysDirective] = keep // the keys were visited sorted
	}
	return patch, nil
}

// hasExtraField reports whether original has a non-null field modified lacks.
func hasExtraField(original, modified map[string]any) bool {
	for k, v := range original {
		if _, found := modified[k]; v != nil && !found {
			return true
		}
	}
	return false
}

// diffLists diffs a merge list: it returns the patch list (changed and added
// items, then delete directives), the deletion list for primitives and the
// $setElementOrder list.
func diffLists(schema Schema, path []string, original, modified []any, mergeKey string, opts diffOptions, retainKeys bool) (add, del, order []any, err error) {
	if len(original) == 0 {
		if len(modified) == 0 || opts.noChanges {
			return nil, nil, nil, nil
		}
		return modified, nil, nil, nil
	}
	kind, err := elementKind(path, original, modified)
	if err != nil {
		return nil, nil, nil, err
	}
	if kind == "object" {
		if mergeKey == "" {
			return nil, nil, nil, invalidPatch("cannot merge lists without merge key for %s", dotted(path))
		}
		add, dels, err := diffListsOfMaps(schema, path, original, modified, mergeKey, opts, retainKeys)
		if err != nil {
			return nil, nil, nil, err
		}
		if add, err = sortByOrder(add, modified, mergeKey, true); err != nil {
			return nil, nil, nil, err
		}
		same, err := sameOrder(original, modified, mergeKey)
		if err != nil {
			return nil, nil, nil, err
		}
		add = append(add, dels...)
		if opts.setElementOrder && ((!opts.noChanges && (len(add) > 0 || !same)) || (!opts.noDeletions && len(add) > 0)) {
			order = make([]any, len(modified))
			for i, v := range modified {
				order[i] = map[string]any{mergeKey: v.(map[string]any)[mergeKey]}
			}
		}
		return add, nil, order, nil
	}
	add, del = diffListsOfScalars(original, modified, opts)
	if add, err = sortByOrder(add, modified, "", false); err != nil {
		return nil, nil, nil, err
	}
	if opts.setElementOrder && ((!opts.noDeletions && len(del) > 0) || (!opts.noChanges && !equalJSON(original, modified))) {
		order = modified
	}
	return add, del, order, nil
}

func sameOrder(original, modified []any, mergeKey string) (bool, error) {
	if len(original) != len(modified) {
		return false, nil
	}
	for i := range modified {
		eq, err := sameItem(original[i], modified[i], mergeKey)
		if err != nil || !eq {
			return eq, err
		}
	}
	return true, nil
}

// sortKey is how Kubernetes orders list items when diffing: by the text of
// the merge-key value (or of the scalar).
func sortKey(v any) string { return fmt.Sprintf("%v", v) }

func sortedByKey(l []any, key func(any) string) []any {
	s := append([]any(nil), l...)
	sort.SliceStable(s, func(i, j int) bool { return key(s[i]) < key(s[j]) })
	return s
}

func diffListsOfMaps(schema Schema, path []string, original, modified []any, mergeKey string, opts diffOptions, retainKeys bool) (add, dels []any, err error) {
	keyOf := func(v any) (map[string]any, any, error) {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, nil, invalidPatch("%s: expected a list of objects, got a %s item", dotted(path), typeName(v))
		}
		k, ok := m[mergeKey]
		if !ok {
			return nil, nil, invalidPatch("map: %v does not contain declared merge key: %s", m, mergeKey)
		}
		return m, k, nil
	}
	for _, l := range [][]any{original, modified} {
		for _, v := range l {
			if _, _, err := keyOf(v); err != nil {
				return nil, nil, err
			}
		}
	}
	byKey := func(v any) string { return sortKey(v.(map[string]any)[mergeKey]) }
	os, ms := sortedByKey(original, byKey), sortedByKey(modified, byKey)
	i, j := 0, 0
	for i < len(os) || j < len(ms) {
		var om, mm map[string]any
		var ok, mk any
		if i < len(os) {
			om, ok, _ = keyOf(os[i])
		}
		if j < len(ms) {
			mm, mk, _ = keyOf(ms[j])
		}
		switch {
		case i < len(os) && j < len(ms) && sortKey(ok) == sortKey(mk):
			sub, err := diffMaps(schema, path, om, mm, opts, retainKeys)
			if err != nil {
				return nil, nil, err
			}
			if len(sub) > 0 {
				sub[mergeKey] = mk
				add = append(add, sub)
			}
			i++
			j++
		case i >= len(os) || (j < len(ms) && sortKey(ok) > sortKey(mk)):
			if !opts.noChanges {
				add = append(add, mm)
			}
			j++
		default:
			if !opts.noDeletions {
				dels = append(dels, map[string]any{mergeKey: ok, directiveMarker: deleteDirective})
			}
			i++
		}
	}
	return add, dels, nil
}

func diffListsOfScalars(original, modified []any, opts diffOptions) (add, del []any) {
	os, ms := sortedByKey(original, sortKey), sortedByKey(modified, sortKey)
	i, j := 0, 0
	for i < len(os) || j < len(ms) {
		switch {
		case i < len(os) && j < len(ms) && sortKey(os[i]) == sortKey(ms[j]):
			i++
			j++
		case i >= len(os) || (j < len(ms) && sortKey(os[i]) > sortKey(ms[j])):
			if !opts.noChanges {
				add = append(add, ms[j])
			}
			j++
		default:
			if !opts.noDeletions {
				del = append(del, os[i])
			}
			i++
		}
	}
	return add, dedupeScalars(del)
}
