package version

import (
	"runtime"
	"runtime/debug"
)

// gitVersion is set with -ldflags -X by the Makefile.
var gitVersion = "v0.1.0-dev"

// Kubernetes compatibility level the API mimics; client-go and kubectl read
// major/minor from /version.
const (
	major = "1"
	minor = "34"
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
		Major: major, Minor: minor, GitVersion: gitVersion, GitTreeState: "clean",
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

// String returns the git version, e.g. "v0.1.0".
func String() string { return gitVersion }
