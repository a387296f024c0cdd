package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/minik8s/minik8s/internal/kubeconfig"
	"github.com/minik8s/minik8s/kubectl-lite/cli"
)

// NewCommand returns the config command and its subcommands.
func NewCommand(streams cli.Streams, g *cli.Globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config SUBCOMMAND",
		Short: "Modify kubeconfig files",
	}
	cmd.AddCommand(newView(streams, g), newGetContexts(streams, g), newCurrentContext(streams, g), newUseContext(streams, g))
	return cmd
}

func newView(streams cli.Streams, g *cli.Globals) *cobra.Command {
	var raw bool
	cmd := &cobra.Command{
		Use:   "view",
		Short: "Display merged kubeconfig settings",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			cfg, err := g.Config()
			if err != nil {
				return err
			}
			out := *cfg
			if out.APIVersion == "" {
				out.APIVersion, out.Kind = "v1", "Config"
			}
			b, err := json.Marshal(&out)
			if err != nil {
				return fmt.Errorf("encode kubeconfig: %w", err)
			}
			var m map[string]any
			if err := json.Unmarshal(b, &m); err != nil {
				return fmt.Errorf("encode kubeconfig: %w", err)
			}
			if !raw {
				Redact(m)
			}
			y, err := yaml.Marshal(m)
			if err != nil {
				return fmt.Errorf("encode kubeconfig: %w", err)
			}
			_, err = streams.Out.Write(y)
			return err
		},
	}
	cmd.Flags().BoolVar(&raw, "raw", false, "Display raw byte data and sensitive data")
	return cmd
}

// Redact replaces certificate data with "DATA+OMITTED" and keys and tokens
// with "REDACTED", as kubectl config view does without --raw.
func Redact(m map[string]any) {
	for _, section := range []struct{ list, inner string }{{"clusters", "cluster"}, {"users", "user"}} {
		items, _ := m[section.list].([]any)
		for _, it := range items {
			im, _ := it.(map[string]any)
			inner, _ := im[section.inner].(map[string]any)
			for k := range inner {
				switch k {
				case "certificate-authority-data", "client-certificate-data":
					inner[k] = "DATA+OMITTED"
				case "client-key-data", "token":
					inner[k] = "REDACTED"
				}
			}
		}
	}
}

func newGetContexts(streams cli.Streams, g *cli.Globals) *cobra.Command {
	return &cobra.Command{
		Use:   "get-contexts",
		Short: "Describe one or many contexts",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			cfg, err := g.Config()
			if err != nil {
				return err
			}
			w := tabwriter.NewWriter(streams.Out, 6, 4, 3, ' ', 0)
			fmt.Fprintln(w, "CURRENT\tNAME\tCLUSTER\tAUTHINFO\tNAMESPACE")
			for _, c := range cfg.Contexts {
				cur := ""
				if c.Name == cfg.CurrentContext {
					cur = "*"
				}
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", cur, c.Name, c.Context.Cluster, c.Context.AuthInfo, c.Context.Namespace)
			}
			return w.Flush()
		},
	}
}

func newCurrentContext(streams cli.Streams, g *cli.Globals) *cobra.Command {
	return &cobra.Command{
		Use:   "current-context",
		Short: "Display the current-context",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			cfg, err := g.Config()
			if err != nil {
				return err
			}
			if cfg.CurrentContext == "" {
				return errors.New("current-context is not set")
			}
			fmt.Fprintln(streams.Out, cfg.CurrentContext)
			return nil
		},
	}
}

func newUseContext(streams cli.Streams, g *cli.Globals) *cobra.Command {
	return &cobra.Command{
		Use:   "use-context CONTEXT_NAME",
		Short: "Set the current-context in a kubeconfig file",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			path, err := targetFile(g.Kubeconfig)
			if err != nil {
				return err
			}
			cfg, err := kubeconfig.Load(path)
			if err != nil {
				return err
			}
			merged, err := g.Config()
			if err != nil {
				return err
			}
			found := false
			for _, c := range merged.Contexts {
				found = found || c.Name == args[0]
			}
			if !found {
				return fmt.Errorf("no context exists with the name: %q", args[0])
			}
			cfg.CurrentContext = args[0]
			if err := kubeconfig.Write(path, cfg); err != nil {
				return err
			}
			fmt.Fprintf(streams.Out, "Switched to context %q.\n", args[0])
			return nil
		},
	}
}

// targetFile is the file a config write goes to: --kubeconfig, else the
// first $KUBECONFIG entry, else ~/.kube/config.
func targetFile(explicit string) (string, error) {
	if explicit != "" {
		return explicit, nil
	}
	for _, p := range filepath.SplitList(os.Getenv(kubeconfig.EnvVar)) {
		if p != "" {
			return p, nil
		}
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("find kubeconfig: %w", err)
	}
	return filepath.Join(home, kubeconfig.RecommendedHomeFile), nil
}
