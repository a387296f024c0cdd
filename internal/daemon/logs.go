package daemon

import (
	"fmt"
	"log/slog"
	"strconv"
	"strings"

	"github.com/minik8s/minik8s/internal/logging"
	"github.com/spf13/pflag"
)

// LogOptions are the logging flags every daemon has, in its "logs"
// section: kube's -v/--v and --logging-format, and --log-level.
type LogOptions struct {
	// Verbosity is kube's --v: 0 to 3 log Info and above, 4 and more add
	// Debug (logr's mapping: V(n) is slog level -n).
	Verbosity int
	// Level, when set, is the level by name and wins over Verbosity.
	Level string
	// Format is "text" or "json".
	Format string
}

// DefaultLogOptions log Info and above as text.
func DefaultLogOptions() LogOptions { return LogOptions{Format: "text"} }

// AddFlags registers -v/--v, --log-level and --logging-format.
func (o *LogOptions) AddFlags(fs *pflag.FlagSet) {
	fs.VarP(verbosityValue{&o.Verbosity}, "v", "v", "Number for the log level verbosity, as Kubernetes components take it: 0 to 3 log info, warnings and errors; 4 and more add debug records.")
	fs.Var(levelValue{&o.Level}, "log-level", "The log level by name: debug, info, warn or error. When set, it wins over --v.")
	fs.Var(formatValue{&o.Format}, "logging-format", "Sets the log format: "+strings.Join(logging.Formats, " or ")+".")
}

// SlogLevel is the level the flags ask for.
func (o *LogOptions) SlogLevel() slog.Level {
	if o.Level != "" {
		if l, err := logging.ParseLevel(o.Level); err == nil {
			return l
		}
	}
	return logging.VerbosityLevel(o.Verbosity)
}

// verbosityValue is --v: a number >= 0 ("Level" in --help, as in kube).
type verbosityValue struct{ v *int }

func (v verbosityValue) String() string {
	if v.v == nil {
		return "0"
	}
	return strconv.Itoa(*v.v)
}

func (v verbosityValue) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return fmt.Errorf("want a verbosity number >= 0")
	}
	*v.v = n
	return nil
}

func (verbosityValue) Type() string { return "Level" }

// levelValue is --log-level: a name logging.ParseLevel knows.
type levelValue struct{ v *string }

func (v levelValue) String() string {
	if v.v == nil {
		return ""
	}
	return *v.v
}

func (v levelValue) Set(s string) error {
	if _, err := logging.ParseLevel(s); err != nil {
		return err
	}
	*v.v = strings.ToLower(s)
	return nil
}

func (levelValue) Type() string { return "string" }

// formatValue is --logging-format.
type formatValue struct{ v *string }

func (v formatValue) String() string {
	if v.v == nil {
		return ""
	}
	return *v.v
}

func (v formatValue) Set(s string) error {
	for _, f := range logging.Formats {
		if s == f {
			*v.v = s
			return nil
		}
	}
	return fmt.Errorf("unknown logging format %q: want %s", s, strings.Join(logging.Formats, " or "))
}

func (formatValue) Type() string { return "string" }
