package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/minik8s/minik8s/internal/kubeconfig"
	"github.com/minik8s/minik8s/kubectl-lite/cli"
	"github.com/minik8s/minik8s/kubectl-lite/printers"
)

// NewCommand returns the config command and its subcommands.
func NewCommand(streams cli.Streams, g *cli.Globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config SUBCOMMAND",
		Short: "Modify kubeconfig files",
	}
	cmd.AddCommand(newView(streams, g), newGetContexts(streams, g), newCurrentContext(streams, g), newUseContext(streams, g), newSetContext(streams, g),
		newSetCluster(streams, g), newSetCredentials(streams, g), newDeleteContext(streams, g), newRenameContext(streams, g))
	return cmd
}

func newView(streams cli.Streams, g *cli.Globals) *cobra.Command {
	var (
		raw, minify bool
		output      string
	)
	cmd := &cobra.Command{
		Use:   "view",
		Short: "Display merged kubeconfig settings",
		Long: `Display merged kubeconfig settings or a specified kubeconfig file.

Certificate data is shown as DATA+OMITTED and keys and tokens as REDACTED
unless --raw is given.`,
		Example: `  kubectl-lite config view
  kubectl-lite config view --minify
  kubectl-lite config view -o jsonpath='{.users[?(@.name == "e2e")].user.token}' --raw`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			cfg, err := g.Config()
			if err != nil {
				return err
			}
			out := *cfg
			if out.APIVersion == "" {
				out.APIVersion, out.Kind = "v1", "Config"
			}
			if minify {
				if out, err = minified(out, g.Context); err != nil {
					return err
				}
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
			format, arg, _ := strings.Cut(output, "=")
			switch format {
			case "", "yaml":
				y, err := yaml.Marshal(m)
				if err != nil {
					return fmt.Errorf("encode kubeconfig: %w", err)
				}
				_, err = streams.Out.Write(y)
				return err
			case "json":
				b, err := json.MarshalIndent(m, "", "    ")
				if err != nil {
					return fmt.Errorf("encode kubeconfig: %w", err)
				}
				_, err = fmt.Fprintf(streams.Out, "%s\n", b)
				return err
			case "jsonpath":
				j, err := printers.JSONPath(arg)
				if err != nil {
					return err
				}
				return printers.PrintJSONPath(streams.Out, j, m)
			}
			return fmt.Errorf("unable to match a printer suitable for the output format %q, allowed formats are: json,jsonpath,yaml", output)
		},
	}
	cmd.Flags().BoolVar(&raw, "raw", false, "Display raw byte data and sensitive data")
	cmd.Flags().BoolVar(&minify, "minify", false, "Remove all information not used by current-context from the output")
	cmd.Flags().StringVarP(&output, "output", "o", "yaml", "Output format. One of: (json, yaml, jsonpath).")
	return cmd
}

// minified keeps only the context in use (--context, else the current one)
// and the cluster and user it names, as kubectl config view --minify.
func minified(cfg kubeconfig.Config, context string) (kubeconfig.Config, error) {
	if context == "" {
		context = cfg.CurrentContext
	}
	if context == "" {
		return cfg, errors.New("current-context must exist in order to minify")
	}
	var ctx *kubeconfig.NamedContext
	for i := range cfg.Contexts {
		if cfg.Contexts[i].Name == context {
			ctx = &cfg.Contexts[i]
		}
	}
	if ctx == nil {
		return cfg, fmt.Errorf("cannot locate context %s", context)
	}
	out := cfg
	out.CurrentContext = context
	out.Contexts = []kubeconfig.NamedContext{*ctx}
	out.Clusters, out.Users = nil, nil
	for _, c := range cfg.Clusters {
		if c.Name == ctx.Context.Cluster {
			out.Clusters = append(out.Clusters, c)
		}
	}
	for _, u := range cfg.Users {
		if u.Name == ctx.Context.AuthInfo {
			out.Users = append(out.Users, u)
		}
	}
	return out, nil
}

func newSetContext(streams cli.Streams, g *cli.Globals) *cobra.Command {
	var (
		current                  bool
		cluster, user, namespace string
	)
	cmd := &cobra.Command{
		Use:   "set-context [NAME | --current] [--cluster=cluster_nickname] [--user=user_nickname] [--namespace=namespace]",
		Short: "Set a context entry in kubeconfig",
		Long: `Set a context entry in kubeconfig.

Specifying a name that already exists will merge new fields on top of
existing values for those fields.`,
		Example: `  # Set the user field on the gce context entry without touching other values
  kubectl-lite config set-context gce --user=cluster-admin
  # Switch the current context's default namespace
  kubectl-lite config set-context --current --namespace=team-a`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path, err := targetFile(g.Kubeconfig)
			if err != nil {
				return err
			}
			cfg, err := loadOrEmpty(path)
			if err != nil {
				return err
			}
			var name string
			switch {
			case current && len(args) > 0:
				return errors.New("you cannot specify both a context name and --current")
			case current:
				merged, err := g.Config()
				if err != nil {
					return err
				}
				if name = merged.CurrentContext; name == "" {
					return errors.New("no current context is set")
				}
			case len(args) == 1:
				name = args[0]
			default:
				return errors.New("you must specify a non-empty context name or --current")
			}
			e, created := named(&cfg.Contexts, name, func(c kubeconfig.NamedContext) string { return c.Name },
				func(n string) kubeconfig.NamedContext { return kubeconfig.NamedContext{Name: n} })
			verb := "modified"
			if created {
				verb = "created"
			}
			ctx := &e.Context
			f := cmd.Flags()
			if f.Changed("cluster") {
				ctx.Cluster = cluster
			}
			if f.Changed("user") {
				ctx.AuthInfo = user
			}
			if f.Changed("namespace") {
				ctx.Namespace = namespace
			}
			if err := kubeconfig.Write(path, cfg); err != nil {
				return err
			}
			fmt.Fprintf(streams.Out, "Context %q %s.\n", name, verb)
			return nil
		},
	}
	f := cmd.Flags()
	f.BoolVar(&current, "current", false, "Modify the current context")
	f.StringVar(&cluster, "cluster", "", "cluster for the context entry in kubeconfig")
	f.StringVar(&user, "user", "", "user for the context entry in kubeconfig")
	// Shadows the global -n: here it is the value to store.
	f.StringVar(&namespace, "namespace", "", "namespace for the context entry in kubeconfig")
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
	var (
		output    string
		noHeaders bool
	)
	cmd := &cobra.Command{
		Use:   "get-contexts [(-o|--output=)name)]",
		Short: "Describe one or many contexts",
		Long:  "Display one or many contexts from the kubeconfig file.",
		Example: `  kubectl-lite config get-contexts
  kubectl-lite config get-contexts my-context
  kubectl-lite config get-contexts -o name`,
		RunE: func(_ *cobra.Command, args []string) error {
			if output != "" && output != "name" {
				return fmt.Errorf("output must be one of '' or 'name': %v", output)
			}
			cfg, err := g.Config()
			if err != nil {
				return err
			}
			var shown []kubeconfig.NamedContext
			var missing []string
			for _, want := range args {
				found := false
				for _, c := range cfg.Contexts {
					if c.Name == want {
						shown, found = append(shown, c), true
					}
				}
				if !found {
					missing = append(missing, want)
				}
			}
			if len(args) == 0 {
				shown = cfg.Contexts
			}
			if output == "name" {
				for _, c := range shown {
					fmt.Fprintln(streams.Out, c.Name)
				}
			} else {
				w := tabwriter.NewWriter(streams.Out, 6, 4, 3, ' ', 0)
				if !noHeaders {
					fmt.Fprintln(w, "CURRENT\tNAME\tCLUSTER\tAUTHINFO\tNAMESPACE")
				}
				for _, c := range shown {
					cur := ""
					if c.Name == cfg.CurrentContext {
						cur = "*"
					}
					fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", cur, c.Name, c.Context.Cluster, c.Context.AuthInfo, c.Context.Namespace)
				}
				if err := w.Flush(); err != nil {
					return err
				}
			}
			if len(missing) > 0 {
				return fmt.Errorf("context %v not found", strings.Join(missing, ", "))
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "Output format. One of: (name).")
	cmd.Flags().BoolVar(&noHeaders, "no-headers", false, "When using the default or custom-column output format, don't print headers (default print headers).")
	return cmd
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
			cfg, err := loadOrEmpty(path)
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
