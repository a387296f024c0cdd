package daemon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"

	"github.com/minik8s/minik8s/internal/logging"
	"github.com/spf13/cobra"
)

// Exit codes of every daemon.
const (
	// ExitFailure: the command line was fine but the daemon could not start
	// or stopped with an error (a file a flag names, or the --config file,
	// is missing or malformed, a port is taken, etcd died...).
	ExitFailure = 1
	// ExitUsage: the command line is wrong (an unknown flag, a value that
	// does not parse, is out of range or conflicts with another flag, a
	// positional argument).
	ExitUsage = 2
)

// Command is what a daemon's main wires: its flags, their validation and
// the daemon itself. Every daemon gets the same skeleton around it
// (component-base's): a cobra command whose --help prints the flags in
// sections, the "logs" flags (-v/--v, --log-level, --logging-format), the
// "global" ones (-h/--help, --version), --config when the daemon has a
// config file, and a context that ends on SIGINT or SIGTERM.
type Command struct {
	// Name is the binary's name: the "Usage:" line, the prefix of the
	// error line ("scheduler: ...") and the logs' component.
	Name string
	// Long describes the daemon at the top of --help.
	Long string
	// Flags registers the daemon's flags, each in its --help section.
	Flags func(*FlagSets)
	// Config, when set, adds --config to the "misc" section.
	Config *ConfigFile
	// Validate checks the parsed flags: ranges, formats, conflicts. It
	// reads no file: what a flag points at is Run's to load (first, before
	// it logs anything).
	Validate func() error
	// Run runs the daemon until ctx ends (SIGINT or SIGTERM).
	Run func(ctx context.Context, log *slog.Logger) error
	// Subcommands are the binary's other verbs (e.g. "apiserver snapshot
	// save FILE"), each with its own flags and cobra's own help. Their
	// errors are one line and exit codes as the daemon's: ExitUsage for
	// a flag or an error wrapped by UsageError, ExitFailure otherwise.
	Subcommands []*cobra.Command
}

// UsageError marks err as a wrong command line (ExitUsage), for a
// subcommand's argument checks.
func UsageError(err error) error { return usageError{err} }

// Main runs the command line args and returns the exit code: see Execute.
func (c Command) Main(args []string) int {
	return c.Execute(args, os.Stdout, os.Stderr)
}

// Execute parses args, loads --config, validates and runs the daemon; it
// returns the exit code. Every failure is one line on stderr, "NAME:
// reason", naming the flag or file at fault, with ExitUsage for a wrong
// command line and ExitFailure for the rest; no usage dump. -h/--help
// prints the flags by section, and --version the version, on stdout, and
// return 0.
func (c Command) Execute(args []string, stdout, stderr io.Writer) int {
	var (
		fss        FlagSets
		configPath string
		logs       = DefaultLogOptions()
		ver        versionFlag
	)
	if c.Config != nil {
		fss.FlagSet("misc").StringVar(&configPath, "config", "", fmt.Sprintf(
			"The path to the configuration file, a %s (apiVersion %s). Flags given on the command line override its fields.", c.Config.Kind, c.Config.APIVersion))
	}
	if c.Flags != nil {
		c.Flags(&fss)
	}
	logs.AddFlags(fss.FlagSet("logs"))
	global := fss.FlagSet("global")
	global.BoolP("help", "h", false, "help for "+c.Name)
	ver.addFlag(global)

	cmd := &cobra.Command{
		Use:           c.Name,
		Long:          c.Long,
		SilenceErrors: true,
		SilenceUsage:  true,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageError{fmt.Errorf("unexpected argument %q: %s takes only flags", args[0], c.Name)}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			if ver.requested() {
				return ver.print(cmd.OutOrStdout())
			}
			return c.run(cmd, configPath, &logs, stderr)
		},
	}
	cmd.CompletionOptions.DisableDefaultCmd = true
	for _, sub := range c.Subcommands {
		// The daemon's help and usage print its flag sections: a
		// subcommand gets cobra's defaults back (a parentless command's).
		sub.SetHelpFunc((&cobra.Command{}).HelpFunc())
		sub.SetUsageFunc((&cobra.Command{}).UsageFunc())
		sub.SilenceErrors, sub.SilenceUsage = true, true
		cmd.AddCommand(sub)
	}
	if args == nil {
		args = []string{} // cobra reads os.Args for nil
	}
	cmd.SetArgs(args)
	cmd.SetOut(stdout)
	cmd.SetErr(stderr)
	cmd.Flags().SetNormalizeFunc(wordSepNormalize)
	fss.addTo(cmd.Flags())
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	cmd.SetHelpFunc(func(cmd *cobra.Command, _ []string) {
		out := cmd.OutOrStdout()
		if c.Long != "" {
			fmt.Fprintf(out, "%s\n\n", strings.TrimSpace(c.Long))
		}
		fmt.Fprintf(out, "Usage:\n  %s\n", cmd.UseLine())
		if len(c.Subcommands) > 0 {
			fmt.Fprintf(out, "  %s [command]\n\nAvailable Commands:\n", c.Name)
			for _, sub := range c.Subcommands {
				fmt.Fprintf(out, "  %-12s %s\n", sub.Name(), sub.Short)
			}
		}
		fss.print(out, terminalWidth(out))
	})
	// Errors are one line: cobra never prints the usage (SilenceUsage),
	// this only keeps its default template from ever showing.
	cmd.SetUsageFunc(func(*cobra.Command) error { return nil })

	if err := cmd.Execute(); err != nil {
		fmt.Fprintf(stderr, "%s: %s\n", c.Name, oneLine(err.Error()))
		var ue usageError
		if errors.As(err, &ue) {
			return ExitUsage
		}
		return ExitFailure
	}
	return 0
}

// run loads the config file, validates, sets up logging and runs the
// daemon, once the command line is parsed.
func (c Command) run(cmd *cobra.Command, configPath string, logs *LogOptions, stderr io.Writer) error {
	var cfg *loadedConfig
	if configPath != "" {
		var err error
		if cfg, err = c.Config.load(configPath); err != nil {
			return fmt.Errorf("--config %s: %w", configPath, err)
		}
		if err := cfg.apply(cmd.Flags()); err != nil {
			return fmt.Errorf("--config %s: %w", configPath, err)
		}
	}
	if c.Validate != nil {
		if err := c.Validate(); err != nil {
			// A value the file set is the file's fault.
			if fields := cfg.blame(err.Error()); len(fields) > 0 {
				return fmt.Errorf("--config %s (%s): %w", configPath, strings.Join(fields, ", "), err)
			}
			return usageError{err}
		}
	}
	log, err := logging.New(stderr, logs.SlogLevel(), logs.Format, c.Name)
	if err != nil {
		return usageError{err}
	}
	if cfg != nil && len(cfg.ignored) > 0 {
		log.Warn("config file fields not supported; ignored", "config", configPath, "fields", cfg.ignored)
	}
	ctx, stop := SignalContext()
	defer stop()
	return c.Run(ctx, log)
}

// usageError is a wrong command line: ExitUsage.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// SignalContext ends on the first SIGINT or SIGTERM, for a graceful stop;
// a second one exits at once with ExitFailure (component-base's
// SetupSignalHandler). The cancel func stops listening.
func SignalContext() (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case <-sigs:
			cancel()
		case <-done:
			return
		}
		select {
		case <-sigs:
			os.Exit(ExitFailure)
		case <-done:
		}
	}()
	var once sync.Once
	return ctx, func() {
		once.Do(func() {
			signal.Stop(sigs)
			close(done)
			cancel()
		})
	}
}

// oneLine keeps an error on one line: errors.Join and multi-line messages
// become "; "-separated.
func oneLine(s string) string {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			if i+1 < len(s) {
				out = append(out, "; "...)
			}
			continue
		}
		out = append(out, s[i])
	}
	return string(out)
}
