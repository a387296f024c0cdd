package patch

// MergePatch applies an RFC 7386 JSON merge patch: object members of the
// patch merge recursively into the original, null deletes a member, and any
// other value (arrays included) replaces. A patch that is not an object
// replaces the whole document.
func MergePatch(original, patch []byte) ([]byte, error) {
	p, err := decode("patch", patch)
	if err != nil {
		return nil, err
	}
	var doc any = map[string]any{}
	if len(original) > 0 {
		if doc, err = decode("original object", original); err != nil {
			return nil, err
		}
	}
	return encode(applyMergePatch(doc, p))
}

func applyMergePatch(target, patch any) any {
	pm, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	tm, ok := target.(map[string]any)
	if !ok {
		tm = map[string]any{}
	}
	for k, pv := range pm {
		if pv == nil {
			delete(tm, k)
			continue
		}
		tm[k] = applyMergePatch(tm[k], pv)
	}
	return tm
}

// CreateMergePatch returns the RFC 7386 merge patch that turns original
// into modified: members removed in modified are null, changed ones carry
// the new value, objects recurse, arrays are replaced whole.
func CreateMergePatch(original, modified []byte) ([]byte, error) {
	o, err := decodeObject("original object", original)
	if err != nil {
		return nil, err
	}
	m, err := decodeObject("modified object", modified)
	if err != nil {
		return nil, err
	}
	return encode(diffMerge(o, m, true, true))
}

// diffMerge computes the merge patch from o to m. With deletions false,
// members of o missing from m are left alone; with changes false, only
// deletions (nulls) are produced.
func diffMerge(o, m map[string]any, changes, deletions bool) map[string]any {
	patch := map[string]any{}
	for k, mv := range m {
		ov, found := o[k]
		switch {
		case !found:
			if changes {
				patch[k] = mv
			}
		case isObject(ov) && isObject(mv):
			if sub := diffMerge(ov.(map[string]any), mv.(map[string]any), changes, deletions); len(sub) > 0 {
				patch[k] = sub
			}
		case !equalJSON(ov, mv):
			if changes {
				patch[k] = mv
			}
		}
	}
	if deletions {
		for k := range o {
			if _, found := m[k]; !found {
				patch[k] = nil
			}
		}
	}
	return patch
}

func isObject(v any) bool {
	_, ok := v.(map[string]any)
	return ok
}

// CreateThreeWayMergePatch returns the JSON merge patch `kubectl apply`
// sends for kinds without a strategic schema: original is the
// last-applied configuration, modified the new manifest, current the live
// object. The patch sets what modified changes relative to current and
// deletes what modified dropped relative to original; fields only current
// has (set by controllers or other clients) are left alone.
func CreateThreeWayMergePatch(original, modified, current []byte) ([]byte, error) {
	o, err := decodeObject("original object", original)
	if err != nil {
		return nil, err
	}
	m, err := decodeObject("modified object", modified)
	if err != nil {
		return nil, err
	}
	c, err := decodeObject("current object", current)
	if err != nil {
		return nil, err
	}
	deletions := diffMerge(o, m, false, true)
	// An explicit null in the manifest is not a deletion request on its own
	// (kubectl drops it from the change set too); deletions come only from
	// fields the manifest no longer has.
	changes := dropNulls(diffMerge(c, m, true, false))
	return encode(combineMergePatches(deletions, changes))
}

// dropNulls removes null members from a merge patch, recursively through
// objects (not inside arrays, which are values).
func dropNulls(p map[string]any) map[string]any {
	for k, v := range p {
		switch t := v.(type) {
		case nil:
			delete(p, k)
		case map[string]any:
			dropNulls(t)
		}
	}
	return p
}

// combineMergePatches overlays b onto a; nested objects combine, so a
// deletion under a key survives next to a change under the same key.
func combineMergePatches(a, b map[string]any) map[string]any {
	for k, bv := range b {
		if am, ok := a[k].(map[string]any); ok {
			if bm, ok := bv.(map[string]any); ok {
				a[k] = combineMergePatches(am, bm)
				continue
			}
		}
		a[k] = bv
	}
	return a
}
