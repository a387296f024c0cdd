package version

import (
	"strings"
	"testing"

	utilversion "k8s.io/apimachinery/pkg/util/version"
)

// TestStringIsKubernetesSemver: what /version reports parses as the
// Kubernetes release it implements (kubectl's and Helm's parsers accept
// strict semver with build metadata), whatever minik8s' own release name.
func TestStringIsKubernetesSemver(t *testing.T) {
	defer func(r string) { release = r }(release)
	for _, r := range []string{"v0.1.0-dev", "v0.1.0-g1a2b3c4", "v0.1.0-g1a2b3c4-dirty", "v0.2.0", "feature/x y", "v0..1", "", "."} {
		release = r
		s := String()
		v, err := utilversion.ParseSemantic(s)
		if err != nil {
			t.Errorf("release %q: %q is not semver: %v", r, s, err)
			continue
		}
		if v.Major() != 1 || v.Minor() != 37 || v.PreRelease() != "" || !strings.HasPrefix(v.BuildMetadata(), "minik8s-") {
			t.Errorf("release %q: %q parses as %d.%d pre %q build %q", r, s, v.Major(), v.Minor(), v.PreRelease(), v.BuildMetadata())
		}
		if got := Get(); got.GitVersion != s || got.Major != "1" || got.Minor != "37" {
			t.Errorf("release %q: Get() = %+v", r, got)
		}
	}
	release = "v0.3.1-gabc"
	if got, want := String(), "v1.37.2+minik8s-0.3.1-gabc"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}
