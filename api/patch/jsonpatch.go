package patch

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// MaxJSONPatchOperations is the most operations a JSON patch may hold, as
// in the Kubernetes apiserver.
const MaxJSONPatchOperations = 10000

// MaxJSONPatchCopyBytes bounds what the copy operations of one JSON patch
// may add to the document: the compact JSON size of every copied value,
// summed over the patch. Without it a patch of a few doubling copies (one
// copying a value into itself) builds an object of gigabytes in the memory
// of the apiserver, dry run or not, before anything looks at its size. It
// is kube-apiserver's JSONPatchMaxCopyBytes default, 3 MiB like its request
// body limit (the fix of CVE-2019-1002100), counted as evanphx/json-patch
// counts it (AccumulatedCopySizeLimit).
const MaxJSONPatchCopyBytes = 3 << 20

type operation struct {
	op, path, from string
	value          any
}

// JSONPatch applies an RFC 6902 JSON patch (add, remove, replace, move,
// copy, test) to original. Paths are JSON pointers (RFC 6901: "~1" is '/',
// "~0" is '~'); "-" as the last token of an add appends to an array. The
// operations apply in order and all or nothing. A malformed patch wraps
// ErrInvalidPatch; an operation that does not apply (a failed test, a
// missing path, copies beyond MaxJSONPatchCopyBytes) wraps ErrCannotApply.
func JSONPatch(original, patch []byte) ([]byte, error) {
	ops, err := decodeJSONPatch(patch)
	if err != nil {
		return nil, err
	}
	var doc any = map[string]any{}
	if len(strings.TrimSpace(string(original))) > 0 {
		if doc, err = decode("original object", original); err != nil {
			return nil, err
		}
	}
	var copied int64
	for i, op := range ops {
		if doc, err = applyOperation(doc, op, &copied); err != nil {
			return nil, fmt.Errorf("operation %d: %w", i, err)
		}
	}
	return encode(doc)
}

func decodeJSONPatch(patch []byte) ([]operation, error) {
	v, err := decode("patch", patch)
	if err != nil {
		return nil, err
	}
	list, ok := v.([]any)
	if !ok {
		return nil, &patchError{class: ErrInvalidJSON, msg: "patch: invalid JSON: a JSON patch must be a list of operations, got " + typeName(v)}
	}
	if len(list) > MaxJSONPatchOperations {
		return nil, &patchError{class: ErrTooLarge, msg: fmt.Sprintf("The allowed maximum operations in a JSON patch is %d, got %d", MaxJSONPatchOperations, len(list))}
	}
	ops := make([]operation, len(list))
	for i, item := range list {
		m, ok := item.(map[string]any)
		if !ok {
			return nil, invalidPatch("operation %d: must be an object, got %s", i, typeName(item))
		}
		opName, _ := m["op"].(string)
		path, pathOK := m["path"].(string)
		op := operation{op: opName, path: path}
		switch opName {
		case "add", "replace", "test":
			v, has := m["value"]
			if !has {
				return nil, invalidPatch("operation %d (%s): missing value", i, opName)
			}
			op.value = v
		case "move", "copy":
			from, ok := m["from"].(string)
			if !ok {
				return nil, invalidPatch("operation %d (%s): missing from", i, opName)
			}
			op.from = from
		case "remove":
		case "":
			return nil, invalidPatch("operation %d: missing op", i)
		default:
			return nil, invalidPatch("operation %d: unknown op %q", i, opName)
		}
		if !pathOK {
			return nil, invalidPatch("operation %d (%s): missing path", i, opName)
		}
		if _, err := parsePointer(op.path); err != nil {
			return nil, invalidPatch("operation %d (%s): %v", i, opName, err)
		}
		if op.from != "" || opName == "move" || opName == "copy" {
			if _, err := parsePointer(op.from); err != nil {
				return nil, invalidPatch("operation %d (%s): from: %v", i, opName, err)
			}
		}
		ops[i] = op
	}
	return ops, nil
}

// parsePointer splits an RFC 6901 JSON pointer into unescaped tokens.
func parsePointer(p string) ([]string, error) {
	if p == "" {
		return nil, nil
	}
	if p[0] != '/' {
		return nil, fmt.Errorf("invalid JSON pointer %q: must be empty or start with '/'", p)
	}
	tokens := strings.Split(p[1:], "/")
	for i, t := range tokens {
		for j := 0; j < len(t); j++ {
			if t[j] == '~' && (j+1 == len(t) || (t[j+1] != '0' && t[j+1] != '1')) {
				return nil, fmt.Errorf("invalid JSON pointer %q: '~' must be followed by '0' or '1'", p)
			}
		}
		tokens[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
	}
	return tokens, nil
}

// applyOperation applies op to doc; copied is the size of what the
// patch's copy operations have added so far.
func applyOperation(doc any, op operation, copied *int64) (any, error) {
	path, _ := parsePointer(op.path)
	switch op.op {
	case "add":
		return add(doc, path, op.value, op)
	case "remove":
		doc, _, err := remove(doc, path, op)
		return doc, err
	case "replace":
		if _, err := get(doc, path, op, op.path); err != nil {
			// kube-apiserver's evanphx/json-patch v4 replaces a member
			// missing from an existing object: it adds it. A missing
			// parent or array element still does not apply.
			if len(path) > 0 {
				if parent, perr := get(doc, path[:len(path)-1], op, op.path); perr == nil {
					if _, isObject := parent.(map[string]any); isObject {
						return add(doc, path, op.value, op)
					}
				}
			}
			return nil, err
		}
		doc, _, err := remove(doc, path, op)
		if err != nil {
			return nil, err
		}
		return add(doc, path, op.value, op)
	case "move":
		from, _ := parsePointer(op.from)
		if op.from == op.path {
			if _, err := get(doc, from, op, op.from); err != nil {
				return nil, err
			}
			return doc, nil
		}
		if strings.HasPrefix(op.path, op.from+"/") {
			return nil, cannotApply("the move operation failed: %s cannot be moved into its own child %s", op.from, op.path)
		}
		doc, v, err := remove(doc, from, op)
		if err != nil {
			return nil, err
		}
		return add(doc, path, v, op)
	case "copy":
		from, _ := parsePointer(op.from)
		v, err := get(doc, from, op, op.from)
		if err != nil {
			return nil, err
		}
		// Counted before the copy is made, so a refused copy costs no more
		// than one encoding of a value already in the document.
		enc, err := json.Marshal(v)
		if err != nil {
			return nil, cannotApply("the copy operation failed: encode %s: %v", op.from, err)
		}
		*copied += int64(len(enc))
		if *copied > MaxJSONPatchCopyBytes {
			return nil, cannotApply("Unable to complete the copy, the accumulated size increase of copy is %d, exceeding the limit %d", *copied, MaxJSONPatchCopyBytes)
		}
		return add(doc, path, deepCopy(v), op)
	case "test":
		v, err := get(doc, path, op, op.path)
		if err != nil || !jsonEqual(v, op.value) {
			return nil, cannotApply("the test operation failed at %s", displayPath(op.path))
		}
		return doc, nil
	}
	return nil, invalidPatch("unknown op %q", op.op)
}

func displayPath(p string) string {
	if p == "" {
		return `"" (the whole document)`
	}
	return p
}

// arrayIndex parses an array index token; "-" (end) only where allowed.
func arrayIndex(tok string, length int, allowEnd bool, op operation) (int, error) {
	if tok == "-" && allowEnd {
		return length, nil
	}
	if tok == "" || (len(tok) > 1 && tok[0] == '0') || strings.TrimLeft(tok, "0123456789") != "" {
		return 0, cannotApply("the %s operation failed at %s: %q is not an array index", op.op, displayPath(op.path), tok)
	}
	i, err := strconv.Atoi(tok)
	max := length - 1
	if allowEnd {
		max = length
	}
	if err != nil || i > max {
		return 0, cannotApply("the %s operation failed at %s: index %s is out of range (array length %d)", op.op, displayPath(op.path), tok, length)
	}
	return i, nil
}

// get returns the value at path.
func get(doc any, path []string, op operation, ptr string) (any, error) {
	cur := doc
	for _, tok := range path {
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[tok]
			if !ok {
				return nil, cannotApply("the %s operation failed: the path %s does not exist", op.op, ptr)
			}
			cur = v
		case []any:
			i, err := arrayIndex(tok, len(c), false, op)
			if err != nil {
				return nil, cannotApply("the %s operation failed: the path %s does not exist", op.op, ptr)
			}
			cur = c[i]
		default:
			return nil, cannotApply("the %s operation failed: the path %s does not exist", op.op, ptr)
		}
	}
	return cur, nil
}

// add sets value at path and returns the new document (arrays grow, so a
// parent may be replaced).
func add(doc any, path []string, value any, op operation) (any, error) {
	if len(path) == 0 {
		return value, nil
	}
	parent, err := get(doc, path[:len(path)-1], op, op.path)
	if err != nil {
		return nil, cannotApply("the %s operation failed: the parent of %s does not exist", op.op, op.path)
	}
	last := path[len(path)-1]
	switch p := parent.(type) {
	case map[string]any:
		p[last] = value
		return doc, nil
	case []any:
		i, err := arrayIndex(last, len(p), true, op)
		if err != nil {
			return nil, err
		}
		grown := make([]any, 0, len(p)+1)
		grown = append(append(append(grown, p[:i]...), value), p[i:]...)
		return replaceAt(doc, path[:len(path)-1], grown), nil
	}
	return nil, cannotApply("the %s operation failed: the parent of %s is a %s, not an object or array", op.op, op.path, typeName(parent))
}

// remove deletes the value at path and returns the new document and the value.
func remove(doc any, path []string, op operation) (any, any, error) {
	if len(path) == 0 {
		return nil, doc, nil
	}
	ptr := op.path
	if op.op == "move" {
		ptr = op.from
	}
	parent, err := get(doc, path[:len(path)-1], op, ptr)
	if err != nil {
		return nil, nil, cannotApply("the %s operation failed: the path %s does not exist", op.op, ptr)
	}
	last := path[len(path)-1]
	switch p := parent.(type) {
	case map[string]any:
		v, ok := p[last]
		if !ok {
			return nil, nil, cannotApply("the %s operation failed: the path %s does not exist", op.op, ptr)
		}
		delete(p, last)
		return doc, v, nil
	case []any:
		i, err := arrayIndex(last, len(p), false, op)
		if err != nil {
			return nil, nil, cannotApply("the %s operation failed: the path %s does not exist", op.op, ptr)
		}
		v := p[i]
		shrunk := append(append(make([]any, 0, len(p)-1), p[:i]...), p[i+1:]...)
		return replaceAt(doc, path[:len(path)-1], shrunk), v, nil
	}
	return nil, nil, cannotApply("the %s operation failed: the path %s does not exist", op.op, ptr)
}

// replaceAt stores v at an existing path and returns the document.
func replaceAt(doc any, path []string, v any) any {
	if len(path) == 0 {
		return v
	}
	cur := doc
	for _, tok := range path[:len(path)-1] {
		switch c := cur.(type) {
		case map[string]any:
			cur = c[tok]
		case []any:
			i, _ := strconv.Atoi(tok)
			cur = c[i]
		}
	}
	last := path[len(path)-1]
	switch c := cur.(type) {
	case map[string]any:
		c[last] = v
	case []any:
		i, _ := strconv.Atoi(last)
		c[i] = v
	}
	return doc
}

// jsonEqual is deep equality with numbers compared by value (1 == 1.0).
func jsonEqual(a, b any) bool {
	switch at := a.(type) {
	case map[string]any:
		bt, ok := b.(map[string]any)
		if !ok || len(at) != len(bt) {
			return false
		}
		for k, av := range at {
			bv, ok := bt[k]
			if !ok || !jsonEqual(av, bv) {
				return false
			}
		}
		return true
	case []any:
		bt, ok := b.([]any)
		if !ok || len(at) != len(bt) {
			return false
		}
		for i := range at {
			if !jsonEqual(at[i], bt[i]) {
				return false
			}
		}
		return true
	case int64:
		switch bt := b.(type) {
		case int64:
			return at == bt
		case float64:
			return float64(at) == bt
		}
		return false
	case float64:
		switch bt := b.(type) {
		case int64:
			return at == float64(bt)
		case float64:
			return at == bt
		}
		return false
	}
	return sameValue(a, b)
}
