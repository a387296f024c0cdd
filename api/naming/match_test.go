package naming

import "testing"

// TestMatchersAgreeWithPatterns compares the hand-written matchers with
// the regular expressions they replace on every string of up to 5
// characters over an alphabet of each character class, and on longer
// samples.
func TestMatchersAgreeWithPatterns(t *testing.T) {
	const alphabet = "a0Z-._/*é\n"
	runes := []rune(alphabet)
	var strs []string
	var gen func(prefix []rune, n int)
	gen = func(prefix []rune, n int) {
		strs = append(strs, string(prefix))
		if n == 0 {
			return
		}
		for _, r := range runes {
			gen(append(prefix, r), n-1)
		}
	}
	gen(nil, 5)
	strs = append(strs, "my-pod.example.com", "a..b", "-a", "a-", "web-0", "kube-system",
		"app.kubernetes.io", "Foo_Bar.baz-1", "a.b.c.d.e.f.g.h-i", "x\n")
	for _, s := range strs {
		if got, want := isDNS1123Label(s), dns1123LabelRegexp.MatchString(s); got != want {
			t.Errorf("isDNS1123Label(%q) = %v, the pattern says %v", s, got, want)
		}
		if got, want := isDNS1123Subdomain(s), dns1123SubdomainRegexp.MatchString(s); got != want {
			t.Errorf("isDNS1123Subdomain(%q) = %v, the pattern says %v", s, got, want)
		}
		if got, want := isQualifiedNamePart(s), qualifiedNameRegexp.MatchString(s); got != want {
			t.Errorf("isQualifiedNamePart(%q) = %v, the pattern says %v", s, got, want)
		}
		if got, want := s == "" || isQualifiedNamePart(s), labelValueRegexp.MatchString(s); got != want {
			t.Errorf("label value %q: %v, the pattern says %v", s, got, want)
		}
	}
}
