package daemon

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/minik8s/minik8s/internal/version"
	"github.com/spf13/pflag"
)

// versionFlag is --version (component-base's verflag): --version prints
// the version and quits, --version=raw prints the whole version document.
type versionFlag string

const (
	versionOff = "false"
	versionOn  = "true"
	versionRaw = "raw"
)

func (v *versionFlag) String() string {
	if *v == "" {
		return versionOff
	}
	return string(*v)
}

func (v *versionFlag) Set(s string) error {
	switch s {
	case versionOff, versionOn, versionRaw:
		*v = versionFlag(s)
		return nil
	}
	return fmt.Errorf("want true, false or raw")
}

func (*versionFlag) Type() string { return "version" }

// addFlag registers --version[=true|raw].
func (v *versionFlag) addFlag(fs *pflag.FlagSet) {
	f := fs.VarPF(v, "version", "", "--version prints version information and quits; --version=raw prints the whole version document (JSON).")
	f.NoOptDefVal = versionOn
}

// requested tells whether the version was asked for.
func (v *versionFlag) requested() bool { return *v == versionOn || *v == versionRaw }

// print writes the version, "minik8s v0.1.0 (Kubernetes v1.37.2)", or the
// raw document.
func (v *versionFlag) print(w io.Writer) error {
	if *v == versionRaw {
		b, err := json.MarshalIndent(version.Get(), "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	}
	_, err := fmt.Fprintf(w, "minik8s %s (Kubernetes %s)\n", version.Release(), version.Kubernetes())
	return err
}
