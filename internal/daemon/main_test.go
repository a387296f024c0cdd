package daemon_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/minik8s/minik8s/internal/daemon"
	"github.com/minik8s/minik8s/internal/version"
)

// fakeConfig is a config file of the fake daemon: two fields with flags,
// one nested.
type fakeConfig struct {
	Port    *int64  `json:"port"`
	Mode    *string `json:"mode"`
	Backoff *struct {
		Max *string `json:"max"`
	} `json:"backoff"`
}

func (c *fakeConfig) FlagValues() (daemon.FlagValues, error) {
	var v daemon.FlagValues
	v.Int("port", "port", c.Port)
	v.String("mode", "mode", c.Mode)
	if c.Backoff != nil {
		v.String("backoff.max", "backoff-max", c.Backoff.Max)
	}
	return v, nil
}

// fake is a daemon with flags in two sections and a config file; run
// records what it ran with.
type fake struct {
	port       int
	mode       string
	backoffMax time.Duration
	ran        bool
	log        *slog.Logger
}

func (f *fake) command() daemon.Command {
	return daemon.Command{
		Name: "fake",
		Long: "fake is a daemon under test.",
		Flags: func(fss *daemon.FlagSets) {
			fs := fss.FlagSet("serving")
			fs.IntVar(&f.port, "port", 10000, "Port to serve on.")
			fs = fss.FlagSet("leader election")
			fs.StringVar(&f.mode, "mode", "steady", "How to run.")
			fs.DurationVar(&f.backoffMax, "backoff-max", time.Second, "Longest back-off.")
		},
		Config: &daemon.ConfigFile{
			APIVersion: "fake.config.minik8s.io/v1", Kind: "FakeConfiguration",
			New: func() daemon.Config { return &fakeConfig{} },
		},
		Validate: func() error {
			if f.port < 1 || f.port > 65535 {
				return errors.New("--port must be in [1, 65535]")
			}
			return nil
		},
		Run: func(ctx context.Context, log *slog.Logger) error {
			f.ran, f.log = true, log
			return nil
		},
	}
}

type result struct {
	code           int
	stdout, stderr string
}

func execute(c daemon.Command, args ...string) result {
	var stdout, stderr bytes.Buffer
	code := c.Execute(args, &stdout, &stderr)
	return result{code, stdout.String(), stderr.String()}
}

// oneLine checks a refused command line: code, no stdout, one stderr line
// "fake: ..." naming want.
func (r result) oneLine(t *testing.T, code int, want string) {
	t.Helper()
	if r.code != code || r.stdout != "" || strings.Count(r.stderr, "\n") != 1 ||
		!strings.HasPrefix(r.stderr, "fake: ") || !strings.Contains(r.stderr, want) {
		t.Errorf("exit %d, stdout %q, stderr %q; want exit %d and one line naming %q", r.code, r.stdout, r.stderr, code, want)
	}
}

func TestHelpPrintsSections(t *testing.T) {
	for _, arg := range []string{"--help", "-h"} {
		f := &fake{}
		r := execute(f.command(), arg)
		if r.code != 0 || r.stderr != "" || f.ran {
			t.Fatalf("%s: exit %d, stderr %q, ran %v", arg, r.code, r.stderr, f.ran)
		}
		if !strings.HasPrefix(r.stdout, "fake is a daemon under test.\n\nUsage:\n  fake [flags]\n\nMisc flags:\n\n      --config string") {
			t.Errorf("%s: help starts %q", arg, r.stdout[:min(len(r.stdout), 120)])
		}
		if got, want := sections(r.stdout), []string{"Misc", "Serving", "Leader election", "Logs", "Global"}; !slices.Equal(got, want) {
			t.Errorf("%s: sections %q, want %q", arg, got, want)
		}
		for _, flag := range []string{"--port int", "--mode string", "-v, --v Level", "--log-level string", "--logging-format string", "-h, --help", "--version version[=true]"} {
			if !strings.Contains(r.stdout, flag) {
				t.Errorf("%s: help lacks %q", arg, flag)
			}
		}
	}
}

// sections are the "NAME flags:" headings of a --help text, in order.
func sections(help string) []string {
	var out []string
	for _, line := range strings.Split(help, "\n") {
		if name, ok := strings.CutSuffix(line, " flags:"); ok && !strings.HasPrefix(line, " ") {
			out = append(out, name)
		}
	}
	return out
}

func TestVersion(t *testing.T) {
	f := &fake{}
	r := execute(f.command(), "--version")
	if r.code != 0 || r.stdout != "minik8s "+version.Release()+" (Kubernetes "+version.Kubernetes()+")\n" || r.stderr != "" || f.ran {
		t.Errorf("--version: exit %d, stdout %q, stderr %q, ran %v", r.code, r.stdout, r.stderr, f.ran)
	}
	r = execute(f.command(), "--version=raw")
	var info version.Info
	if err := json.Unmarshal([]byte(r.stdout), &info); r.code != 0 || err != nil || info.GitVersion != version.String() {
		t.Errorf("--version=raw: exit %d, stdout %q (%v)", r.code, r.stdout, err)
	}
	execute(f.command(), "--version=maybe").oneLine(t, daemon.ExitUsage, "--version")
}

func TestLogFlags(t *testing.T) {
	for _, tc := range []struct {
		args          []string
		debug, info   bool
		warn, errorOn bool
	}{
		{nil, false, true, true, true},
		{[]string{"--v=2"}, false, true, true, true},
		{[]string{"-v", "4"}, true, true, true, true},
		{[]string{"--log-level=warn"}, false, false, true, true},
		{[]string{"--v=4", "--log-level=error"}, false, false, false, true},
		{[]string{"--log-level=debug", "--logging-format=json"}, true, true, true, true},
	} {
		f := &fake{}
		r := execute(f.command(), tc.args...)
		if r.code != 0 || !f.ran {
			t.Errorf("%v: exit %d, stderr %q", tc.args, r.code, r.stderr)
			continue
		}
		ctx := context.Background()
		got := []bool{f.log.Enabled(ctx, slog.LevelDebug), f.log.Enabled(ctx, slog.LevelInfo), f.log.Enabled(ctx, slog.LevelWarn), f.log.Enabled(ctx, slog.LevelError)}
		if want := []bool{tc.debug, tc.info, tc.warn, tc.errorOn}; !slices.Equal(got, want) {
			t.Errorf("%v: debug/info/warn/error enabled = %v, want %v", tc.args, got, want)
		}
	}
	for _, tc := range []struct{ arg, want string }{
		{"--v=abc", "-v"}, {"--v=-1", "-v"}, {"--log-level=loud", "loud"}, {"--logging-format=xml", "--logging-format"},
	} {
		f := &fake{}
		execute(f.command(), tc.arg).oneLine(t, daemon.ExitUsage, tc.want)
	}
}

func TestCommandLineErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--no-such-flag"}, "--no-such-flag"},
		{[]string{"--port=http"}, "--port"},
		{[]string{"--port=0"}, "--port"},
		{[]string{"stray"}, "stray"},
		{[]string{"--port=80", "stray"}, "stray"},
	} {
		f := &fake{}
		execute(f.command(), tc.args...).oneLine(t, daemon.ExitUsage, tc.want)
		if f.ran {
			t.Errorf("%v: ran", tc.args)
		}
	}
	f := &fake{}
	c := f.command()
	c.Run = func(context.Context, *slog.Logger) error { return errors.New("etcd died\nfor good") }
	execute(c).oneLine(t, daemon.ExitFailure, "etcd died; for good")
	// kube's WordSepNormalizeFunc: --backoff_max is --backoff-max.
	if r := execute(f.command(), "--backoff_max=3s"); r.code != 0 || f.backoffMax != 3*time.Second {
		t.Errorf("--backoff_max: exit %d (%s), backoff %v", r.code, r.stderr, f.backoffMax)
	}
}

func writeFile(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

const fakeHeader = "apiVersion: fake.config.minik8s.io/v1\nkind: FakeConfiguration\n"

func TestConfigFile(t *testing.T) {
	file := writeFile(t, fakeHeader+"port: 8080\nmode: eager\nbackoff:\n  max: 30s\n  jitter: 0.1\nprofiles: [{}]\n")

	// The file's fields take effect...
	f := &fake{}
	r := execute(f.command(), "--config", file)
	if r.code != 0 || f.port != 8080 || f.mode != "eager" || f.backoffMax != 30*time.Second {
		t.Errorf("--config: exit %d (%s), port %d, mode %q, backoff %v", r.code, r.stderr, f.port, f.mode, f.backoffMax)
	}
	// ...fields it does not support are named in a warning...
	if !strings.Contains(r.stderr, "level=WARN") || !strings.Contains(r.stderr, "backoff.jitter profiles") {
		t.Errorf("no warning naming the ignored fields: %q", r.stderr)
	}
	// ...and the command line wins, wherever it stands.
	f = &fake{}
	r = execute(f.command(), "--mode=lazy", "--config="+file, "--port", "9090")
	if r.code != 0 || f.port != 9090 || f.mode != "lazy" || f.backoffMax != 30*time.Second {
		t.Errorf("--config with flags: exit %d (%s), port %d, mode %q, backoff %v", r.code, r.stderr, f.port, f.mode, f.backoffMax)
	}
	// JSON is YAML.
	f = &fake{}
	r = execute(f.command(), "--config", writeFile(t, `{"apiVersion":"fake.config.minik8s.io/v1","kind":"FakeConfiguration","port":7070}`))
	if r.code != 0 || f.port != 7070 {
		t.Errorf("JSON --config: exit %d (%s), port %d", r.code, r.stderr, f.port)
	}
}

func TestConfigFileErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing.yaml")
	for _, tc := range []struct {
		name, content string
		args          []string
		code          int
		want          string
	}{
		{"garbage", "{{{ this: is: not [yaml\n", nil, daemon.ExitFailure, "yaml"},
		{"empty", "", nil, daemon.ExitFailure, `apiVersion ""`},
		{"a list", "- port: 1\n", nil, daemon.ExitFailure, "not a FakeConfiguration"},
		{"unknown apiVersion", "apiVersion: fake.config.minik8s.io/v9\nkind: FakeConfiguration\n", nil, daemon.ExitFailure, "fake.config.minik8s.io/v9"},
		{"unknown kind", "apiVersion: fake.config.minik8s.io/v1\nkind: Pod\n", nil, daemon.ExitFailure, `kind "Pod"`},
		{"wrong field type", fakeHeader + "port: eighty\n", nil, daemon.ExitFailure, "port: want an integer, got string"},
		{"nested wrong type", fakeHeader + "backoff:\n  max: 30\n", nil, daemon.ExitFailure, "backoff.max: want a string, got number"},
		{"value the flag refuses", fakeHeader + "backoff:\n  max: soon\n", nil, daemon.ExitFailure, `backoff.max: invalid argument "soon" for "--backoff-max"`},
		{"value Validate refuses", fakeHeader + "port: 0\n", nil, daemon.ExitFailure, "(port): --port must be"},
		// The command line's own mistake stays a usage error.
		{"flag Validate refuses", fakeHeader + "mode: eager\n", []string{"--port=0"}, daemon.ExitUsage, "--port must be"},
		{"flag overrides a bad value", fakeHeader + "port: 0\n", []string{"--port=0"}, daemon.ExitUsage, "--port must be"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fake{}
			file := writeFile(t, tc.content)
			r := execute(f.command(), append([]string{"--config=" + file}, tc.args...)...)
			r.oneLine(t, tc.code, tc.want)
			if tc.code == daemon.ExitFailure && !strings.Contains(r.stderr, "--config "+file) {
				t.Errorf("%q does not name the file", r.stderr)
			}
			if f.ran {
				t.Error("ran")
			}
		})
	}
	f := &fake{}
	execute(f.command(), "--config="+missing).oneLine(t, daemon.ExitFailure, missing)
}

func TestSignalContext(t *testing.T) {
	ctx, stop := daemon.SignalContext()
	defer stop()
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("SIGTERM did not end the context")
	}
	stop()
	stop() // idempotent
}
