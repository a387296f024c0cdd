package validation

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/netip"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/minik8s/minik8s/api/field"
	"github.com/minik8s/minik8s/api/naming"
)

func mustCompile(re string) *regexp.Regexp { return regexp.MustCompile(re) }

func validateDNS1123Label(v string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range naming.IsDNS1123Label(v) {
		errs = append(errs, field.Invalid(p, v, msg))
	}
	return errs
}

func validateDNS1123Subdomain(v string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range naming.IsDNS1123Subdomain(v) {
		errs = append(errs, field.Invalid(p, v, msg))
	}
	return errs
}

func validateQualifiedName(v string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range naming.IsQualifiedName(v) {
		errs = append(errs, field.Invalid(p, v, msg))
	}
	return errs
}

// maxDiffLines bounds the diff appended to "may not change" messages.
const maxDiffLines = 20

// specDiff describes how b differs from a, one changed JSON leaf per line
// ("- spec.nodeName: \"a\"" / "+ spec.nodeName: \"b\""). Kubernetes appends
// a go-cmp diff to the same messages; the wording of the diff is not part of
// its contract, the field list before it is.
func specDiff(root *field.Path, a, b any) string {
	var av, bv any
	if err := roundTrip(a, &av); err != nil {
		return ""
	}
	if err := roundTrip(b, &bv); err != nil {
		return ""
	}
	var lines []string
	diffJSON(root.String(), av, bv, &lines)
	if len(lines) > maxDiffLines {
		lines = append(lines[:maxDiffLines], fmt.Sprintf("  ... (%d more)", len(lines)-maxDiffLines))
	}
	return strings.Join(lines, "\n")
}

func roundTrip(v any, out *any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	return d.Decode(out)
}

func diffJSON(path string, a, b any, lines *[]string) {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		keys := map[string]bool{}
		for k := range am {
			keys[k] = true
		}
		for k := range bm {
			keys[k] = true
		}
		for _, k := range slices.Sorted(maps.Keys(keys)) {
			diffJSON(path+"."+k, am[k], bm[k], lines)
		}
		return
	}
	as, aok := a.([]any)
	bs, bok := b.([]any)
	if aok && bok && len(as) == len(bs) {
		for i := range as {
			diffJSON(fmt.Sprintf("%s[%d]", path, i), as[i], bs[i], lines)
		}
		return
	}
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if bytes.Equal(ja, jb) {
		return
	}
	if a != nil {
		*lines = append(*lines, fmt.Sprintf("- %s: %s", path, ja))
	}
	if b != nil {
		*lines = append(*lines, fmt.Sprintf("+ %s: %s", path, jb))
	}
}

func sortStrings(s []string) { sort.Strings(s) }

// parseIP parses an IP the lenient way Kubernetes' legacy fields do
// (leading zeros in IPv4 allowed).
func parseIP(s string) (netip.Addr, bool) {
	if len(naming.IsValidIPForLegacyField(s, false)) != 0 {
		return netip.Addr{}, false
	}
	if a, err := netip.ParseAddr(s); err == nil {
		return a.Unmap(), true
	}
	// IPv4 with leading zeros: strip them.
	parts := strings.Split(s, ".")
	for i, p := range parts {
		if t := strings.TrimLeft(p, "0"); t != "" {
			parts[i] = t
		} else {
			parts[i] = "0"
		}
	}
	a, err := netip.ParseAddr(strings.Join(parts, "."))
	return a, err == nil
}
