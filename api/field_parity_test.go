package api

import (
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
)

var updateParity = flag.Bool("update-parity", false, "rewrite testdata/field_parity_gaps.golden from the fields our types lack now")

// parityGaps lists, one "group/version, Kind=K path" a line, the fields of
// Kubernetes' types that ours lack (issue 25: every field of every served
// type). It may only shrink: a new gap fails the test.
const parityGaps = "testdata/field_parity_gaps.golden"

// TestEveryKindFieldParity: every served kind has the JSON fields of
// Kubernetes' own type for its group, version and kind (k8s.io/api,
// apiextensions, kube-aggregator), but for the gaps listed in
// testdata/field_parity_gaps.golden, and no field Kubernetes' lacks. A
// field of ours kept as raw JSON (json.RawMessage, any) covers whatever
// lies below it. Strict field validation checks bodies against
// Kubernetes' types (apiserver/fieldvalidation), so a gap is not refused,
// but its value is dropped on decoding.
func TestEveryKindFieldParity(t *testing.T) {
	t.Parallel()
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, apiextensionsv1.AddToScheme, apiregistrationv1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	var gaps []string
	for _, ri := range append(slices.Clone(Resources), ComputedResources...) {
		if ri.New == nil {
			continue
		}
		gvk := schema.GroupVersionKind{Group: ri.Group, Version: ri.Version, Kind: ri.Kind}
		theirs, err := scheme.New(gvk)
		if err != nil {
			t.Errorf("%s: no Kubernetes type: %v", gvk, err)
			continue
		}
		ourPaths := jsonPaths(reflect.TypeOf(ri.New()).Elem(), "", nil)
		ourNames := make([]string, len(ourPaths))
		for i, p := range ourPaths {
			ourNames[i], _, _ = strings.Cut(p, ":")
		}
		theirPaths := jsonPaths(reflect.TypeOf(theirs).Elem(), "", nil)
		theirNames := make([]string, len(theirPaths))
		for i, p := range theirPaths {
			theirNames[i], _, _ = strings.Cut(p, ":")
		}
		for _, p := range theirNames {
			if !slices.Contains(ourNames, p) && !underOpaque(p, ourPaths) {
				gaps = append(gaps, gvk.String()+" "+p)
			}
		}
		for i, p := range ourNames {
			if !slices.Contains(theirNames, p) && !strings.HasSuffix(ourPaths[i], ":bytes") && !strings.HasSuffix(ourPaths[i], ":interface") {
				t.Errorf("%s: ours has %s, Kubernetes' type does not", gvk, p)
			}
		}
	}
	slices.Sort(gaps)
	gaps = slices.Compact(gaps)
	if *updateParity {
		if err := os.MkdirAll(filepath.Dir(parityGaps), 0o755); err != nil {
			t.Fatal(err)
		}
		var text string
		for _, g := range gaps {
			text += g + "\n"
		}
		if err := os.WriteFile(parityGaps, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	data, err := os.ReadFile(parityGaps)
	if err != nil {
		t.Fatal(err)
	}
	var known []string
	for _, line := range strings.Split(string(data), "\n") {
		if line != "" {
			known = append(known, line)
		}
	}
	for _, g := range gaps {
		if !slices.Contains(known, g) {
			t.Errorf("%s: Kubernetes' type has it, ours does not", g)
		}
	}
	for _, k := range known {
		if !slices.Contains(gaps, k) {
			// Not an error, so that adding fields never breaks the build;
			// the list is rewritten with -update-parity.
			t.Logf("%s: no longer a gap; take it out of %s (go test ./api -run TestEveryKindFieldParity -update-parity)", k, parityGaps)
		}
	}
	t.Logf("%d fields of Kubernetes' types missing from ours (%s)", len(gaps), parityGaps)
}

// underOpaque tells whether path lies under a field of ours kept as raw
// JSON (json.RawMessage, any): everything below it is accepted as sent.
func underOpaque(path string, ours []string) bool {
	for _, o := range ours {
		base, ok := strings.CutSuffix(o, ":bytes")
		if !ok {
			base, ok = strings.CutSuffix(o, ":interface")
		}
		if ok && (path == base || strings.HasPrefix(path, base) && strings.ContainsRune(".[{", rune(path[len(base)]))) {
			return true
		}
	}
	return false
}
