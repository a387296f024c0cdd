package patch

import (
	"maps"
	"slices"
	"sort"
	"strings"
)

// Directive spellings of the strategic merge patch.
const (
	directiveMarker         = "$patch"
	deleteDirective         = "delete"
	replaceDirective        = "replace"
	mergeDirective          = "merge"
	retainKeysDirective     = "$retainKeys"
	deleteFromPrimitiveList = "$deleteFromPrimitiveList"
	setElementOrder         = "$setElementOrder"
)

// StrategicMergePatch applies a Kubernetes strategic merge patch to the JSON
// object original. Objects merge and null deletes, as in a JSON merge patch;
// lists follow schema: a list with strategy "merge" and a merge key merges
// item by item on that key (a patch item with "$patch": "delete" removes the
// matching item, a {"$patch": "replace"} item makes the patch list replace
// the whole list), a "merge" list of primitives is unioned, and every other
// list is replaced. "$deleteFromPrimitiveList/<field>",
// "$setElementOrder/<field>" and "$retainKeys" are honoured; no directive
// is left in the result.
func StrategicMergePatch(original, patch []byte, schema Schema) ([]byte, error) {
	o, err := decodeObject("original object", original)
	if err != nil {
		return nil, err
	}
	p, err := decodeObject("patch", patch)
	if err != nil {
		return nil, err
	}
	m := &merger{schema: schema, apply: true}
	out, err := m.mergeMap(nil, o, p)
	if err != nil {
		return nil, err
	}
	return encode(out)
}

// merger merges a patch into an object (apply) or a patch into a patch
// (!apply, used to build three-way patches, where directives are kept and
// nulls propagate).
type merger struct {
	schema Schema
	apply  bool
}

func child(path []string, name string) []string {
	return append(slices.Clip(path), name)
}

// mergeMap merges patch into original (both may be modified) at path.
func (m *merger) mergeMap(path []string, original, patch map[string]any) (map[string]any, error) {
	if d, ok := patch[directiveMarker]; ok {
		switch d {
		case replaceDirective:
			delete(patch, directiveMarker)
			if m.apply {
				return cleanMap(patch), nil
			}
			return patch, nil
		case deleteDirective:
			return map[string]any{}, nil
		}
		return nil, invalidPatch("unknown patch type: %v in map: %v", d, patch)
	}
	if original == nil {
		original = map[string]any{}
	}
	if err := m.retainKeys(original, patch); err != nil {
		return nil, err
	}
	if err := m.setElementOrders(path, original, patch); err != nil {
		return nil, err
	}
	for _, k := range slices.Sorted(maps.Keys(patch)) {
		pv := patch[k]
		isDeleteList := false
		if strings.HasPrefix(k, deleteFromPrimitiveList) {
			if !m.apply {
				original[k] = pv
				continue
			}
			key, err := directiveKey(k, deleteFromPrimitiveList)
			if err != nil {
				return nil, err
			}
			k, isDeleteList = key, true
		}
		if pv == nil {
			delete(original, k)
			if m.apply {
				continue
			}
		}
		ov, found := original[k]
		if !found || typeName(ov) != typeName(pv) {
			if isDeleteList {
				continue
			}
			if err := m.setNew(original, k, pv); err != nil {
				return nil, err
			}
			continue
		}
		var err error
		switch ot := ov.(type) {
		case map[string]any:
			meta := lookup(m.schema, child(path, k))
			if meta.strategy == replaceDirective {
				err = m.setNew(original, k, pv)
				break
			}
			var merged map[string]any
			merged, err = m.mergeMap(child(path, k), ot, pv.(map[string]any))
			original[k] = merged
		case []any:
			meta := lookup(m.schema, child(path, k))
			if meta.strategy != mergeDirective && !isDeleteList {
				err = m.setNew(original, k, pv)
				break
			}
			var merged []any
			merged, err = m.mergeSlice(child(path, k), ot, pv.([]any), meta.mergeKey, isDeleteList)
			original[k] = merged
		default:
			original[k] = pv
		}
		if err != nil {
			return nil, err
		}
	}
	return original, nil
}

// setNew stores a patch value that is not merged with anything. When
// applying, its directives and null members go (they have nothing to act
// on); when merging patches it is kept verbatim.
func (m *merger) setNew(original map[string]any, k string, pv any) error {
	if !m.apply {
		original[k] = pv
		return nil
	}
	if pm, ok := pv.(map[string]any); ok {
		switch d, has := pm[directiveMarker]; {
		case has && d == deleteDirective:
			delete(original, k)
			return nil
		case has && d != replaceDirective && d != mergeDirective:
			return invalidPatch("unknown patch type: %v in map: %v", d, pm)
		}
	}
	original[k] = clean(pv)
	return nil
}

// clean removes every directive and every null object member from a patch
// value that is taken as is: list items carrying "$patch" are dropped, an
// object's "$patch" marker, "$retainKeys", "$setElementOrder/..." and
// "$deleteFromPrimitiveList/..." members are removed.
func clean(v any) any {
	switch t := v.(type) {
	case map[string]any:
		return cleanMap(t)
	case []any:
		out := make([]any, 0, len(t))
		for _, e := range t {
			if em, ok := e.(map[string]any); ok {
				if _, has := em[directiveMarker]; has {
					continue
				}
			}
			out = append(out, clean(e))
		}
		return out
	}
	return v
}

func cleanMap(t map[string]any) map[string]any {
	for k, e := range t {
		switch {
		case e == nil, isDirectiveKey(k):
			delete(t, k)
		default:
			t[k] = clean(e)
		}
	}
	return t
}

func isDirectiveKey(k string) bool {
	return k == directiveMarker || k == retainKeysDirective ||
		strings.HasPrefix(k, setElementOrder+"/") || strings.HasPrefix(k, deleteFromPrimitiveList+"/")
}

// directiveKey returns the field a "$prefix/field" directive is about.
func directiveKey(k, prefix string) (string, error) {
	p, field, ok := strings.Cut(k, "/")
	if !ok || p != prefix || field == "" {
		switch prefix {
		case deleteFromPrimitiveList:
			return "", invalidPatch("invalid patch format of primitive list: %q", k)
		default:
			return "", invalidPatch("invalid patch format of setElementOrder list: %q", k)
		}
	}
	return field, nil
}

// retainKeys handles "$retainKeys": when applying, members of original not
// listed are cleared, and every non-null patch member must be listed.
func (m *merger) retainKeys(original, patch map[string]any) error {
	rk, ok := patch[retainKeysDirective]
	if !ok {
		return nil
	}
	delete(patch, retainKeysDirective)
	if !m.apply {
		if prev, found := original[retainKeysDirective]; found && !equalJSON(prev, rk) {
			return invalidPatch("conflicting $retainKeys lists %v and %v", prev, rk)
		}
		original[retainKeysDirective] = rk
		return nil
	}
	list, ok := rk.([]any)
	if !ok {
		return invalidPatch("invalid patch format of retainKeys: must be a list, got %s", typeName(rk))
	}
	keep := make(map[string]bool, len(list))
	for _, v := range list {
		s, ok := v.(string)
		if !ok {
			return invalidPatch("invalid patch format of retainKeys: %v is not a field name", v)
		}
		keep[s] = true
	}
	for k, v := range patch {
		if v == nil || strings.HasPrefix(k, deleteFromPrimitiveList) || strings.HasPrefix(k, setElementOrder) {
			continue
		}
		if !keep[k] {
			return invalidPatch("invalid patch format of retainKeys: field %q is set but not in $retainKeys", k)
		}
	}
	for k := range original {
		if !keep[k] {
			delete(original, k)
		}
	}
	return nil
}

// setElementOrders handles "$setElementOrder/<field>": the field's list is
// merged now and its items put in the given order, items only the
// original has staying near their old neighbours.
func (m *merger) setElementOrders(path []string, original, patch map[string]any) error {
	for _, key := range slices.Sorted(maps.Keys(patch)) {
		if !strings.HasPrefix(key, setElementOrder) {
			continue
		}
		orderV := patch[key]
		if !m.apply {
			if prev, found := original[key]; found && !equalJSON(prev, orderV) {
				return invalidPatch("invalid patch format of setElementOrder list: conflicting lists for %q", key)
			}
			original[key] = orderV
		}
		delete(patch, key)
		order, ok := orderV.([]any)
		if !ok {
			return invalidPatch("invalid patch format of setElementOrder list: %q must be a list, got %s", key, typeName(orderV))
		}
		field, err := directiveKey(key, setElementOrder)
		if err != nil {
			return err
		}
		ov, foundOriginal := original[field]
		pv, foundPatch := patch[field]
		var oList, pList []any
		if foundOriginal {
			if oList, ok = ov.([]any); !ok {
				return invalidPatch("%s: %q is a %s, not a list", key, field, typeName(ov))
			}
		}
		if foundPatch {
			if pList, ok = pv.([]any); !ok {
				return invalidPatch("%s: the patch sets %q to a %s, not a list", key, field, typeName(pv))
			}
		}
		fpath := child(path, field)
		meta := lookup(m.schema, fpath)
		if err := checkOrder(pList, order, meta.mergeKey); err != nil {
			return err
		}
		var merged []any
		switch {
		case !foundOriginal && !foundPatch:
			continue
		case foundOriginal && !foundPatch:
			merged = oList
		case !foundOriginal && foundPatch:
			merged = pList
			if m.apply {
				merged = clean(pList).([]any)
			}
		default:
			if meta.strategy == mergeDirective {
				if merged, err = m.mergeSlice(fpath, oList, pList, meta.mergeKey, false); err != nil {
					return err
				}
			} else {
				merged = pList
				if m.apply {
					merged = clean(pList).([]any)
				}
			}
		}
		delete(patch, field)
		if len(merged) == 0 {
			original[field] = merged
			continue
		}
		isMap := isObject(merged[0])
		inPatch, serverOnly, err := partition(merged, order, meta.mergeKey, isMap)
		if err != nil {
			return err
		}
		if original[field], err = normalizeOrder(inPatch, serverOnly, order, oList, meta.mergeKey, isMap); err != nil {
			return err
		}
	}
	return nil
}

// checkOrder verifies the non-delete items of the patch list appear in the
// $setElementOrder list in the same relative order.
func checkOrder(patchList, order []any, mergeKey string) error {
	if len(order) == 0 || len(patchList) == 0 {
		return nil
	}
	items := patchList
	if mergeKey != "" {
		var err error
		if items, _, err = splitDeletes(patchList); err != nil {
			return err
		}
	}
	pi, oi := 0, 0
	for pi < len(items) && oi < len(order) {
		if hasDirective(items[pi]) {
			pi++
			continue
		}
		eq, err := sameItem(items[pi], order[oi], mergeKey)
		if err != nil {
			return err
		}
		if eq {
			pi++
		}
		oi++
	}
	if pi < len(items) {
		return invalidPatch("invalid patch format of setElementOrder list: the order in patch list %v doesn't match the $setElementOrder list %v", patchList, order)
	}
	return nil
}

func hasDirective(v any) bool {
	if m, ok := v.(map[string]any); ok {
		_, has := m[directiveMarker]
		return has
	}
	return false
}

// mergeSlice merges a list with strategy "merge".
func (m *merger) mergeSlice(path []string, original, patch []any, mergeKey string, isDeleteList bool) ([]any, error) {
	if len(original) == 0 && len(patch) == 0 {
		return original, nil
	}
	kind, err := elementKind(path, original, patch)
	if err != nil {
		return nil, err
	}
	var merged []any
	if kind != "object" {
		if isDeleteList {
			if !m.apply {
				return append(original, patch...), nil
			}
			return deleteFromSlice(original, patch), nil
		}
		merged = dedupeScalars(append(slices.Clip(original), patch...))
	} else {
		if isDeleteList {
			return nil, invalidPatch("invalid patch format of primitive list: %s holds objects", dotted(path))
		}
		if mergeKey == "" {
			return nil, invalidPatch("cannot merge lists without merge key for %s", dotted(path))
		}
		if original, patch, err = m.specialElements(original, patch, mergeKey); err != nil {
			return nil, err
		}
		if merged, err = m.mergeItems(path, original, patch, mergeKey); err != nil {
			return nil, err
		}
	}
	inPatch, serverOnly, err := partition(merged, patch, mergeKey, kind == "object")
	if err != nil {
		return nil, err
	}
	return normalizeOrder(inPatch, serverOnly, patch, original, mergeKey, kind == "object")
}

func dotted(path []string) string { return strings.Join(path, ".") }

// elementKind returns the common JSON type of the items of the lists.
func elementKind(path []string, lists ...[]any) (string, error) {
	kind := ""
	for _, l := range lists {
		for _, v := range l {
			k := typeName(v)
			switch {
			case k == "array":
				return "", cannotApply("%s: lists of lists are not supported", dotted(path))
			case kind == "":
				kind = k
			case kind != k:
				return "", cannotApply("%s: list element types are not identical (%s and %s)", dotted(path), kind, k)
			}
		}
	}
	return kind, nil
}

// specialElements applies the "$patch" items of a patch list of objects:
// delete items remove every original item with their merge key, a replace
// item makes the rest of the patch list the whole list.
func (m *merger) specialElements(original, patch []any, mergeKey string) ([]any, []any, error) {
	rest := make([]any, 0, len(patch))
	replace := false
	for _, v := range patch {
		item := v.(map[string]any)
		d, has := item[directiveMarker]
		if !has {
			rest = append(rest, v)
			continue
		}
		switch d {
		case deleteDirective:
			key, ok := item[mergeKey]
			if !ok {
				return nil, nil, invalidPatch("map: %v does not contain declared merge key: %s", item, mergeKey)
			}
			kept := original[:0:0]
			for _, o := range original {
				om, ok := o.(map[string]any)
				if !ok || !sameValue(om[mergeKey], key) || !hasKey(om, mergeKey) {
					kept = append(kept, o)
				}
			}
			original = kept
		case replaceDirective:
			replace = true
		case mergeDirective:
			return nil, nil, invalidPatch("merging lists cannot yet be specified in the patch")
		default:
			return nil, nil, invalidPatch("unknown patch type: %v in map: %v", d, item)
		}
	}
	if replace {
		if m.apply {
			rest = clean(rest).([]any)
		}
		return rest, nil, nil
	}
	return original, rest, nil
}

func hasKey(m map[string]any, k string) bool {
	_, ok := m[k]
	return ok
}

// mergeItems merges each patch item into the original item with the same
// merge key, or appends it.
func (m *merger) mergeItems(path []string, original, patch []any, mergeKey string) ([]any, error) {
	for _, v := range patch {
		item := v.(map[string]any)
		key, ok := item[mergeKey]
		if !ok {
			return nil, invalidPatch("map: %v does not contain declared merge key: %s", item, mergeKey)
		}
		idx := -1
		for i, o := range original {
			om, ok := o.(map[string]any)
			if !ok {
				return nil, cannotApply("%s: item %d is a %s, not an object", dotted(path), i, typeName(o))
			}
			if ov, found := om[mergeKey]; found && sameValue(ov, key) {
				idx = i
				break
			}
		}
		if idx < 0 {
			if m.apply {
				v = cleanMap(item)
			}
			original = append(original, v)
			continue
		}
		merged, err := m.mergeMap(path, original[idx].(map[string]any), item)
		if err != nil {
			return nil, err
		}
		original[idx] = merged
	}
	return original, nil
}

// sameValue compares merge-key values and scalars; it never panics on
// objects or lists (Kubernetes' == would).
func sameValue(a, b any) bool {
	switch a.(type) {
	case map[string]any, []any:
		return equalJSON(a, b)
	}
	switch b.(type) {
	case map[string]any, []any:
		return false
	}
	return a == b
}

// sameItem compares two list items by merge key (or by value for primitives).
func sameItem(a, b any, mergeKey string) (bool, error) {
	if mergeKey == "" {
		return sameValue(a, b), nil
	}
	am, ok1 := a.(map[string]any)
	bm, ok2 := b.(map[string]any)
	if !ok1 || !ok2 {
		return false, invalidPatch("expected list items to be objects with merge key %q, got %s and %s", mergeKey, typeName(a), typeName(b))
	}
	av, ok1 := am[mergeKey]
	if !ok1 {
		return false, invalidPatch("map: %v does not contain declared merge key: %s", am, mergeKey)
	}
	bv, ok2 := bm[mergeKey]
	if !ok2 {
		return false, invalidPatch("map: %v does not contain declared merge key: %s", bm, mergeKey)
	}
	return sameValue(av, bv), nil
}

func deleteFromSlice(current, toDelete []any) []any {
	out := make([]any, 0, len(current))
	for _, v := range current {
		if !slices.ContainsFunc(toDelete, func(d any) bool { return sameValue(d, v) }) {
			out = append(out, v)
		}
	}
	return out
}

func dedupeScalars(s []any) []any {
	out := make([]any, 0, len(s))
	for _, v := range s {
		if !slices.ContainsFunc(out, func(o any) bool { return sameValue(o, v) }) {
			out = append(out, v)
		}
	}
	return out
}

// partition splits merged into the items also in list (by merge key, or
// value for primitives) and the others.
func partition(merged, list []any, mergeKey string, isMap bool) (in, others []any, err error) {
	in = make([]any, 0, len(merged))
	others = make([]any, 0, len(merged))
	for _, v := range merged {
		found := false
		if isMap {
			vm, ok := v.(map[string]any)
			if !ok {
				return nil, nil, cannotApply("expected a list of objects, got a %s item", typeName(v))
			}
			key, ok := vm[mergeKey]
			if !ok {
				return nil, nil, invalidPatch("map: %v does not contain declared merge key: %s", vm, mergeKey)
			}
			for _, l := range list {
				if lm, ok := l.(map[string]any); ok && hasKey(lm, mergeKey) && sameValue(lm[mergeKey], key) {
					found = true
					break
				}
			}
		} else {
			found = slices.ContainsFunc(list, func(l any) bool { return sameValue(l, v) })
		}
		if found {
			in = append(in, v)
		} else {
			others = append(others, v)
		}
	}
	return in, others, nil
}

// normalizeOrder sorts the patch items by patchOrder and the server-only
// items by serverOrder, then interleaves them: a server-only item goes
// before a patch item when the original list had it first. This is
// Kubernetes' ordering, including its habit of putting brand-new items
// first when the patch has no $setElementOrder.
func normalizeOrder(patchItems, serverOnly, patchOrder, serverOrder []any, mergeKey string, isMap bool) ([]any, error) {
	var err error
	if patchItems, err = sortByOrder(patchItems, patchOrder, mergeKey, isMap); err != nil {
		return nil, err
	}
	if serverOnly, err = sortByOrder(serverOnly, serverOrder, mergeKey, isMap); err != nil {
		return nil, err
	}
	out := make([]any, 0, len(patchItems)+len(serverOnly))
	i, j := 0, 0
	for i < len(serverOnly) || j < len(patchItems) {
		switch {
		case i >= len(serverOnly):
			out = append(out, patchItems[j])
			j++
		case j >= len(patchItems):
			out = append(out, serverOnly[i])
			i++
		default:
			li := indexOf(serverOrder, serverOnly[i], mergeKey, isMap)
			ri := indexOf(serverOrder, patchItems[j], mergeKey, isMap)
			if li >= 0 && ri >= 0 && li < ri {
				out = append(out, serverOnly[i])
				i++
			} else {
				out = append(out, patchItems[j])
				j++
			}
		}
	}
	return out, nil
}

// sortByOrder stably sorts items by their position in order; items carrying
// a delete directive (possible only when merging patches) go last.
func sortByOrder(items, order []any, mergeKey string, isMap bool) ([]any, error) {
	var deletes []any
	if isMap {
		for _, l := range [][]any{items, order} {
			for _, v := range l {
				vm, ok := v.(map[string]any)
				if !ok {
					return nil, invalidPatch("expected a list of objects with merge key %q, got a %s item", mergeKey, typeName(v))
				}
				if !hasKey(vm, mergeKey) {
					return nil, invalidPatch("map: %v does not contain declared merge key: %s", vm, mergeKey)
				}
			}
		}
		var err error
		if items, deletes, err = splitDeletes(items); err != nil {
			return nil, err
		}
	}
	sort.SliceStable(items, func(a, b int) bool {
		ia := indexOf(order, items[a], mergeKey, isMap)
		ib := indexOf(order, items[b], mergeKey, isMap)
		if ia >= 0 && ib >= 0 {
			return ia < ib
		}
		return true
	})
	return append(items, deletes...), nil
}

func splitDeletes(l []any) (keep, deletes []any, err error) {
	for _, v := range l {
		vm, ok := v.(map[string]any)
		if !ok {
			return nil, nil, invalidPatch("expected a list of objects, got a %s item", typeName(v))
		}
		if vm[directiveMarker] == deleteDirective {
			deletes = append(deletes, v)
		} else {
			keep = append(keep, v)
		}
	}
	return keep, deletes, nil
}

func indexOf(l []any, v any, mergeKey string, isMap bool) int {
	key := func(x any) any {
		if !isMap {
			return x
		}
		if m, ok := x.(map[string]any); ok {
			return m[mergeKey]
		}
		return nil
	}
	want := key(v)
	for i, x := range l {
		if sameValue(key(x), want) {
			return i
		}
	}
	return -1
}
