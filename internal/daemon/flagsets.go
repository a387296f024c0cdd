package daemon

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/pflag"
	"golang.org/x/term"
)

// FlagSets are a daemon's flags in named sections, in the order each
// section was first asked for (component-base's NamedFlagSets): --help
// prints one "Name flags:" block per section, as Kubernetes components do.
type FlagSets struct {
	order []string
	sets  map[string]*pflag.FlagSet
}

// FlagSet returns the section called name ("misc", "leader election"),
// adding it after the others the first time.
func (f *FlagSets) FlagSet(name string) *pflag.FlagSet {
	if f.sets == nil {
		f.sets = map[string]*pflag.FlagSet{}
	}
	fs, ok := f.sets[name]
	if !ok {
		fs = pflag.NewFlagSet(name, pflag.ContinueOnError)
		f.sets[name] = fs
		f.order = append(f.order, name)
	}
	return fs
}

// Names lists the sections in order.
func (f *FlagSets) Names() []string { return append([]string(nil), f.order...) }

// Parse parses args into the flags of every section, as the daemon's
// command line would (positional arguments are an error): for tests and
// benchmarks that configure a component's options from flags.
func (f *FlagSets) Parse(args []string) error {
	fs := pflag.NewFlagSet("", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f.addTo(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	return nil
}

// addTo adds every section's flags to fs (the command's own set).
func (f *FlagSets) addTo(fs *pflag.FlagSet) {
	for _, name := range f.order {
		fs.AddFlagSet(f.sets[name])
	}
}

// print writes each section that has flags: a blank line, "Name flags:",
// a blank line and the flags, wrapped at cols (0: not wrapped).
func (f *FlagSets) print(w io.Writer, cols int) {
	for _, name := range f.order {
		fs := f.sets[name]
		if !fs.HasAvailableFlags() {
			continue
		}
		fmt.Fprintf(w, "\n%s flags:\n\n%s", strings.ToUpper(name[:1])+name[1:], fs.FlagUsagesWrapped(cols))
	}
}

// terminalWidth is w's width when it is a terminal, else 0 (no wrapping),
// as kube's help does.
func terminalWidth(w io.Writer) int {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return 0
	}
	width, _, err := term.GetSize(int(f.Fd()))
	if err != nil {
		return 0
	}
	return width
}

// wordSepNormalize lets --node_ip mean --node-ip (component-base's
// WordSepNormalizeFunc).
func wordSepNormalize(_ *pflag.FlagSet, name string) pflag.NormalizedName {
	return pflag.NormalizedName(strings.ReplaceAll(name, "_", "-"))
}
