package patch

import (
	"encoding/json"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
)

// randomPod builds a small random pod document from a fixed vocabulary so
// the merge keys collide often.
func randomPod(r *rand.Rand, forPatch bool) map[string]any {
	pick := func(xs ...string) string { return xs[r.IntN(len(xs))] }
	doc := map[string]any{}
	meta := map[string]any{}
	if r.IntN(2) == 0 {
		labels := map[string]any{}
		for range r.IntN(3) {
			if forPatch && r.IntN(3) == 0 {
				labels[pick("a", "b", "c")] = nil
			} else {
				labels[pick("a", "b", "c")] = pick("1", "2")
			}
		}
		meta["labels"] = labels
	}
	if r.IntN(2) == 0 {
		var fin []any
		for range r.IntN(3) {
			fin = append(fin, pick("f1", "f2", "f3"))
		}
		fin = dedupeScalars(fin)
		meta["finalizers"] = fin
		// Kubernetes applies a deletion list and an addition of the same
		// value in random order (map iteration); keep them apart.
		if del := pick("f1", "f2", "f3"); forPatch && r.IntN(3) == 0 && !slices.Contains(fin, any(del)) {
			meta["$deleteFromPrimitiveList/finalizers"] = []any{del}
		}
	}
	if len(meta) > 0 {
		doc["metadata"] = meta
	}
	spec := map[string]any{}
	if r.IntN(4) > 0 {
		var cs []any
		seen := map[string]bool{}
		for range r.IntN(4) {
			name := pick("a", "b", "c", "d")
			if seen[name] {
				continue
			}
			seen[name] = true
			c := map[string]any{"name": name}
			if r.IntN(2) == 0 {
				c["image"] = pick("i1", "i2")
			}
			if r.IntN(3) == 0 {
				var env []any
				eseen := map[string]bool{}
				for range r.IntN(3) {
					n := pick("X", "Y", "Z")
					if eseen[n] {
						continue
					}
					eseen[n] = true
					e := map[string]any{"name": n, "value": pick("1", "2")}
					if forPatch && r.IntN(4) == 0 {
						e = map[string]any{"name": n, "$patch": "delete"}
					}
					env = append(env, e)
				}
				c["env"] = env
			}
			if forPatch && r.IntN(5) == 0 {
				c = map[string]any{"name": name, "$patch": "delete"}
			}
			cs = append(cs, c)
		}
		if forPatch && r.IntN(8) == 0 {
			cs = append(cs, map[string]any{"$patch": "replace"})
		}
		if forPatch && r.IntN(3) == 0 {
			var order []any
			for _, n := range r.Perm(4) {
				name := []string{"a", "b", "c", "d"}[n]
				if seen[name] || r.IntN(2) == 0 {
					order = append(order, map[string]any{"name": name})
				}
			}
			// The order list must contain the patch's items in patch order.
			var patchNames []any
			for _, c := range cs {
				if cm := c.(map[string]any); cm["$patch"] == nil {
					patchNames = append(patchNames, map[string]any{"name": cm["name"]})
				}
			}
			var extra []any
			for _, o := range order {
				if !seen[o.(map[string]any)["name"].(string)] {
					extra = append(extra, o)
				}
			}
			spec["$setElementOrder/containers"] = append(patchNames, extra...)
		}
		spec["containers"] = cs
	}
	if r.IntN(3) == 0 {
		spec["nodeName"] = pick("n1", "n2")
		if forPatch && r.IntN(2) == 0 {
			spec["nodeName"] = nil
		}
	}
	if len(spec) > 0 {
		doc["spec"] = spec
	}
	return doc
}

func cleaned(t *testing.T, b []byte, sortContainers bool) string {
	t.Helper()
	v, err := decode("result", b)
	if err != nil {
		t.Fatal(err)
	}
	v = clean(v)
	if spec, ok := v.(map[string]any)["spec"].(map[string]any); ok && sortContainers {
		if cs, ok := spec["containers"].([]any); ok {
			sort.Slice(cs, func(i, j int) bool {
				return cs[i].(map[string]any)["name"].(string) < cs[j].(map[string]any)["name"].(string)
			})
		}
	}
	out, _ := json.Marshal(v)
	return string(out)
}

// TestRandomAgainstKubernetes applies random pod patches with both
// implementations.
func TestRandomAgainstKubernetes(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	schema := KubernetesSchema("Pod")
	mismatches := 0
	for i := 0; i < 5000 && mismatches < 10; i++ {
		orig, _ := json.Marshal(randomPod(r, false))
		p, _ := json.Marshal(randomPod(r, true))
		want, kerr := strategicpatch.StrategicMergePatch(orig, p, corev1.Pod{})
		got, err := StrategicMergePatch(orig, p, schema)
		if (kerr == nil) != (err == nil) {
			t.Errorf("apply(%s, %s): ours err %v, Kubernetes err %v", orig, p, err, kerr)
			mismatches++
			continue
		}
		if kerr != nil {
			continue
		}
		// Compare modulo null members and directive keys: Kubernetes leaves
		// directives of new subtrees and nulls of appended list items in its
		// map (its typed decoding drops them later); ours removes them.
		// With both $setElementOrder and delete items, Kubernetes orders
		// server-only items by a list its own merge overwrote in place
		// (slice aliasing); compare the containers as a set then.
		unordered := strings.Contains(string(p), "$setElementOrder") && strings.Contains(string(p), `"$patch":"delete"`)
		if g, w := cleaned(t, got, unordered), cleaned(t, want, unordered); g != w {
			t.Errorf("apply(%s, %s)\n ours %s\n k8s  %s", orig, p, g, w)
			mismatches++
		}
	}
}

// TestRandomDiffAgainstKubernetes builds two- and three-way patches between
// random pods with both implementations. The $setElementOrder lists of
// primitive lists (finalizers) are left out of the comparison: Kubernetes
// decides whether to send one by comparing the new list with the old one
// after sorting the old one in place, so it sends one for an unchanged
// unsorted list and none when the new order is the sorted old one; ours is
// sent exactly when the list changed (TestPrimitiveListOrder).
func TestRandomDiffAgainstKubernetes(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 4))
	schema := KubernetesSchema("Pod")
	meta, err := strategicpatch.NewPatchMetaFromStruct(corev1.Pod{})
	if err != nil {
		t.Fatal(err)
	}
	mismatches := 0
	for i := 0; i < 3000 && mismatches < 10; i++ {
		o, _ := json.Marshal(randomPod(r, false))
		m, _ := json.Marshal(randomPod(r, false))
		c, _ := json.Marshal(randomPod(r, false))
		want2, kerr := strategicpatch.CreateTwoWayMergePatch(o, m, corev1.Pod{})
		got2, err := CreateStrategicMergePatch(o, m, schema)
		if (kerr == nil) != (err == nil) {
			t.Errorf("two-way(%s, %s): ours err %v, Kubernetes err %v", o, m, err, kerr)
			mismatches++
			continue
		}
		if kerr == nil && withoutPrimitiveOrder(t, got2) != withoutPrimitiveOrder(t, want2) {
			t.Errorf("two-way(%s, %s)\n ours %s\n k8s  %s", o, m, got2, want2)
			mismatches++
		}
		want3, kerr := strategicpatch.CreateThreeWayMergePatch(o, m, c, meta, true)
		got3, err := CreateThreeWayStrategicMergePatch(o, m, c, schema)
		if (kerr == nil) != (err == nil) {
			t.Errorf("three-way(%s, %s, %s): ours err %v, Kubernetes err %v", o, m, c, err, kerr)
			mismatches++
			continue
		}
		if kerr == nil && withoutPrimitiveOrder(t, got3) != withoutPrimitiveOrder(t, want3) {
			t.Errorf("three-way(%s, %s, %s)\n ours %s\n k8s  %s", o, m, c, got3, want3)
			mismatches++
		}
	}
}

func withoutPrimitiveOrder(t *testing.T, b []byte) string {
	t.Helper()
	v, err := decode("patch", b)
	if err != nil {
		t.Fatal(err)
	}
	if meta, ok := v.(map[string]any)["metadata"].(map[string]any); ok {
		delete(meta, "$setElementOrder/finalizers")
		if len(meta) == 0 {
			delete(v.(map[string]any), "metadata")
		}
	}
	out, _ := json.Marshal(v)
	return string(out)
}
