package version

import (
	"runtime"
	"runtime/debug"
	"strings"
)

// release is minik8s' own version, set with -ldflags -X by the Makefile
// ("v0.1.0-g1a2b3c4", "v0.1.0-g1a2b3c4-dirty").
var release = "v0.1.0-dev"

// The Kubernetes release whose API minik8s implements. Clients and charts
// compare against it (kubectl's version skew warning, Helm's kubeVersion
// constraints, semverCompare in templates), so it is what /version reports,
// with minik8s' own release in the semver build metadata, as other
// distributions do (k3s: "v1.34.1+k3s1").
const (
	kubeMajor   = "1"
	kubeMinor   = "37"
	kubeVersion = "v1.37.2"
)

// Info is the /version document (Kubernetes' version.Info).
type Info struct {
	Major        string `json:"major"`
	Minor        string `json:"minor"`
	GitVersion   string `json:"gitVersion"`
	GitCommit    string `json:"gitCommit"`
	GitTreeState string `json:"gitTreeState"`
	BuildDate    string `json:"buildDate"`
	GoVersion    string `json:"goVersion"`
	Compiler     string `json:"compiler"`
	Platform     string `json:"platform"`
}

// Get returns the running binary's version information.
func Get() Info {
	info := Info{
		Major: kubeMajor, Minor: kubeMinor, GitVersion: String(), GitTreeState: "clean",
		GoVersion: runtime.Version(), Compiler: runtime.Compiler,
		Platform: runtime.GOOS + "/" + runtime.GOARCH,
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				info.GitCommit = s.Value
			case "vcs.time":
				info.BuildDate = s.Value
			case "vcs.modified":
				if s.Value == "true" {
					info.GitTreeState = "dirty"
				}
			}
		}
	}
	return info
}

// String returns the version minik8s reports as Kubernetes': the
// Kubernetes release with minik8s' own in the build metadata,
// "v1.37.2+minik8s-0.1.0-g1a2b3c4".
func String() string { return kubeVersion + "+minik8s-" + buildMetadata(release) }

// Kubernetes returns the Kubernetes release minik8s implements, "v1.37.2".
func Kubernetes() string { return kubeVersion }

// Release returns minik8s' own version, "v0.1.0-g1a2b3c4".
func Release() string { return release }

// buildMetadata turns a release name into semver build metadata: the
// leading "v" goes and every character semver does not allow there
// (anything but ASCII letters, digits, '-' and '.') becomes '-'.
func buildMetadata(r string) string {
	r = strings.TrimPrefix(r, "v")
	b := []byte(r)
	for i, c := range b {
		ok := c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '-' || c == '.'
		if !ok {
			b[i] = '-'
		}
	}
	// Semver allows no empty identifier ("0..1").
	ids := strings.FieldsFunc(string(b), func(c rune) bool { return c == '.' })
	if len(ids) == 0 {
		return "unknown"
	}
	return strings.Join(ids, ".")
}
