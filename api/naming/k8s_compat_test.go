package naming

import (
	"reflect"
	"strings"
	"testing"

	k8sgeneric "k8s.io/apimachinery/pkg/api/validation"
	k8spath "k8s.io/apimachinery/pkg/api/validation/path"
	k8s "k8s.io/apimachinery/pkg/util/validation"
	k8sfield "k8s.io/apimachinery/pkg/util/validation/field"
)

// TestAgainstKubernetes runs every validator and Kubernetes' own (test-only
// dependency) on the same inputs and requires the same messages.
func TestAgainstKubernetes(t *testing.T) {
	t.Parallel()
	inputs := []string{
		"", "a", "A", "0", "-", "a-", "-a", "a.b", "a..b", ".a", "a_b", "my-name", "123-abc", "abc-123",
		"example.com", "Example.com", "*.example.com", "*.*.example.com", "*", "a/b", "/b", "a/", "a/b/c",
		"example.com/MyName", "EXAMPLE.com/x", "x.y/-z", "k" + strings.Repeat("a", 62), strings.Repeat("a", 64),
		strings.Repeat("a", 63) + "." + strings.Repeat("b", 63) + "." + strings.Repeat("c", 63) + "." + strings.Repeat("d", 62),
		strings.Repeat("a.", 127), "http", "http-alt", "8080", "a--b", "abcdefghijklmnop", "MY_ENV", "1ENV", "a=b",
		"naïve", "tab\tx", "key.name", ".", "..", "..a", "X-Header", "X_Header", "25%", "25", "my_value",
		"10.9.8.7", "010.9.8.7", "::ffff:1.2.3.4", "2001:db8::ffff", "2001:DB8::FFFF", "fe80::1%eth0", "1.2.3",
		"10.0.0.0/8", "10.0.0.5/8", "10.0.0.0/08", "10.0.0.0/33", "2001:db8::/64", "2001:DB8::/64", "010.0.0.0/8",
		"::ffff:1.2.3.0/120", "1.2.3.4/", "/8", "a%b", "a/b%c",
	}
	type check struct {
		name        string
		ours, their func(string) []string
	}
	fromField := func(fn func(*k8sfield.Path, string) k8sfield.ErrorList) func(string) []string {
		return func(s string) []string {
			var out []string
			for _, e := range fn(k8sfield.NewPath("f"), s) {
				out = append(out, e.Detail)
			}
			return out
		}
	}
	checks := []check{
		{"IsDNS1123Label", IsDNS1123Label, k8s.IsDNS1123Label},
		{"IsDNS1123Subdomain", IsDNS1123Subdomain, k8s.IsDNS1123Subdomain},
		{"IsDNS1035Label", IsDNS1035Label, k8s.IsDNS1035Label},
		{"IsWildcardDNS1123Subdomain", IsWildcardDNS1123Subdomain, k8s.IsWildcardDNS1123Subdomain},
		{"IsQualifiedName", IsQualifiedName, k8s.IsQualifiedName},
		{"IsValidLabelValue", IsValidLabelValue, k8s.IsValidLabelValue},
		{"IsValidPortName", IsValidPortName, k8s.IsValidPortName},
		{"IsCIdentifier", IsCIdentifier, k8s.IsCIdentifier},
		{"IsEnvVarName", IsEnvVarName, k8s.IsRelaxedEnvVarName},
		{"IsStrictEnvVarName", IsStrictEnvVarName, k8s.IsEnvVarName},
		{"IsConfigMapKey", IsConfigMapKey, k8s.IsConfigMapKey},
		{"IsHTTPHeaderName", IsHTTPHeaderName, k8s.IsHTTPHeaderName},
		{"IsValidPercent", IsValidPercent, k8s.IsValidPercent},
		{"IsValidIP", IsValidIP, fromField(k8s.IsValidIP)},
		{"IsValidCIDR", IsValidCIDR, fromField(k8s.IsValidCIDR)},
		{"IsValidIPForLegacyField strict", func(s string) []string { return IsValidIPForLegacyField(s, true) },
			fromField(func(p *k8sfield.Path, s string) k8sfield.ErrorList {
				return k8s.IsValidIPForLegacyField(p, s, true, nil)
			})},
		{"IsValidIPForLegacyField sloppy", func(s string) []string { return IsValidIPForLegacyField(s, false) },
			fromField(func(p *k8sfield.Path, s string) k8sfield.ErrorList {
				return k8s.IsValidIPForLegacyField(p, s, false, nil)
			})},
		{"IsValidCIDRForLegacyField strict", func(s string) []string { return IsValidCIDRForLegacyField(s, true) },
			fromField(func(p *k8sfield.Path, s string) k8sfield.ErrorList {
				return k8s.IsValidCIDRForLegacyField(p, s, true, nil)
			})},
		{"IsValidCIDRForLegacyField sloppy", func(s string) []string { return IsValidCIDRForLegacyField(s, false) },
			fromField(func(p *k8sfield.Path, s string) k8sfield.ErrorList {
				return k8s.IsValidCIDRForLegacyField(p, s, false, nil)
			})},
		{"IsValidPathSegmentName", IsValidPathSegmentName, k8spath.IsValidPathSegmentName},
		{"NameIsDNSSubdomain prefix", func(s string) []string { return NameIsDNSSubdomain(s, true) }, func(s string) []string { return k8sgeneric.NameIsDNSSubdomain(s, true) }},
		{"NameIsDNSLabel prefix", func(s string) []string { return NameIsDNSLabel(s, true) }, func(s string) []string { return k8sgeneric.NameIsDNSLabel(s, true) }},
		{"NameIsDNS1035Label prefix", func(s string) []string { return NameIsDNS1035Label(s, true) }, func(s string) []string { return k8sgeneric.NameIsDNS1035Label(s, true) }},
		{"ValidatePathSegmentName prefix", func(s string) []string { return ValidatePathSegmentName(s, true) }, func(s string) []string { return k8spath.ValidatePathSegmentName(s, true) }},
	}
	for _, c := range checks {
		for _, in := range inputs {
			got, want := c.ours(in), c.their(in)
			if len(got) == 0 && len(want) == 0 {
				continue
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s(%q):\n ours %q\n k8s  %q", c.name, in, got, want)
			}
		}
	}
	for _, n := range []int{-1, 0, 1, 80, 65535, 65536} {
		if got, want := IsValidPortNum(n), k8s.IsValidPortNum(n); !reflect.DeepEqual(got, want) {
			t.Errorf("IsValidPortNum(%d): ours %q, k8s %q", n, got, want)
		}
	}
	for _, name := range []string{"a.b.c", "a.b", "", "A.b.c", "example.com.", "x"} {
		gotF, wantF := IsFullyQualifiedName(nil, name), k8s.IsFullyQualifiedName(nil, name)
		if len(gotF) != len(wantF) || (len(gotF) > 0 && gotF[0].Detail != wantF[0].Detail) {
			t.Errorf("IsFullyQualifiedName(%q): ours %v, k8s %v", name, gotF, wantF)
		}
		gotD, wantD := IsFullyQualifiedDomainName(nil, name), k8s.IsFullyQualifiedDomainName(nil, name)
		if len(gotD) != len(wantD) || (len(gotD) > 0 && gotD[0].Detail != wantD[0].Detail) {
			t.Errorf("IsFullyQualifiedDomainName(%q): ours %v, k8s %v", name, gotD, wantD)
		}
	}
}
