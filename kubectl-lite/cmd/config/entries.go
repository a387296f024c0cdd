package config

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/minik8s/minik8s/internal/kubeconfig"
	"github.com/minik8s/minik8s/kubectl-lite/cli"
)

// loadOrEmpty loads path; a missing file is an empty config, which the
// write creates.
func loadOrEmpty(path string) (*kubeconfig.Config, error) {
	cfg, err := kubeconfig.Load(path)
	if errors.Is(err, os.ErrNotExist) {
		return &kubeconfig.Config{}, nil
	}
	return cfg, err
}

// edit loads the file config writes go to, lets fn change it, and writes
// it back.
func edit(g *cli.Globals, fn func(cfg *kubeconfig.Config) error) error {
	path, err := targetFile(g.Kubeconfig)
	if err != nil {
		return err
	}
	cfg, err := loadOrEmpty(path)
	if err != nil {
		return err
	}
	if err := fn(cfg); err != nil {
		return err
	}
	return kubeconfig.Write(path, cfg)
}

// named returns the entry of list called name, appending a new one made
// by newEntry when there is none (created).
func named[T any](list *[]T, name string, nameOf func(T) string, newEntry func(string) T) (e *T, created bool) {
	for i := range *list {
		if nameOf((*list)[i]) == name {
			return &(*list)[i], false
		}
	}
	*list = append(*list, newEntry(name))
	return &(*list)[len(*list)-1], true
}

func newSetCluster(streams cli.Streams, g *cli.Globals) *cobra.Command {
	var (
		server, ca, tlsServerName string
		insecure, embed           bool
	)
	cmd := &cobra.Command{
		Use:   "set-cluster NAME [--server=server] [--certificate-authority=path/to/certificate/authority] [--insecure-skip-tls-verify=true] [--tls-server-name=example.com]",
		Short: "Set a cluster entry in kubeconfig",
		Long: `Set a cluster entry in kubeconfig.

Specifying a name that already exists will merge new fields on top of
existing values for those fields.`,
		Example: `  kubectl-lite config set-cluster e2e --server=https://1.2.3.4
  kubectl-lite config set-cluster e2e --embed-certs --certificate-authority=~/.kube/e2e/kubernetes.ca.crt`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			verb := "modified"
			err := edit(g, func(cfg *kubeconfig.Config) error {
				e, created := named(&cfg.Clusters, name, func(c kubeconfig.NamedCluster) string { return c.Name },
					func(n string) kubeconfig.NamedCluster { return kubeconfig.NamedCluster{Name: n} })
				if created {
					verb = "set"
				}
				cl := &e.Cluster
				f := cmd.Flags()
				if f.Changed("server") {
					cl.Server = server
				}
				if f.Changed("tls-server-name") {
					cl.TLSServerName = tlsServerName
				}
				if f.Changed("insecure-skip-tls-verify") {
					cl.InsecureSkipTLSVerify = insecure
					if insecure {
						cl.CertificateAuthority, cl.CertificateAuthorityData = "", nil
					}
				}
				if f.Changed("certificate-authority") {
					if embed {
						b, err := os.ReadFile(ca)
						if err != nil {
							return fmt.Errorf("could not read certificate-authority data from %s: %w", ca, err)
						}
						cl.CertificateAuthority, cl.CertificateAuthorityData = "", b
					} else {
						cl.CertificateAuthority, cl.CertificateAuthorityData = ca, nil
					}
					cl.InsecureSkipTLSVerify = false
				}
				return nil
			})
			if err != nil {
				return err
			}
			fmt.Fprintf(streams.Out, "Cluster %q %s.\n", name, verb)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&server, "server", "", "server for the cluster entry in kubeconfig")
	f.StringVar(&ca, "certificate-authority", "", "Path to certificate-authority file for the cluster entry in kubeconfig")
	f.StringVar(&tlsServerName, "tls-server-name", "", "tls-server-name for the cluster entry in kubeconfig")
	f.BoolVar(&insecure, "insecure-skip-tls-verify", false, "insecure-skip-tls-verify for the cluster entry in kubeconfig")
	f.BoolVar(&embed, "embed-certs", false, "embed-certs for the cluster entry in kubeconfig")
	return cmd
}

func newSetCredentials(streams cli.Streams, g *cli.Globals) *cobra.Command {
	var (
		cert, key, token string
		embed            bool
	)
	cmd := &cobra.Command{
		Use:   "set-credentials NAME [--client-certificate=path/to/certfile] [--client-key=path/to/keyfile] [--token=bearer_token]",
		Short: "Set a user entry in kubeconfig",
		Long: `Set a user entry in kubeconfig.

Specifying a name that already exists will merge new fields on top of
existing values. A client certificate and key, or a bearer token.`,
		Example: `  kubectl-lite config set-credentials cluster-admin --client-key=~/.kube/admin.key
  kubectl-lite config set-credentials cluster-admin --token=abcdef.0123456789abcdef
  kubectl-lite config set-credentials cluster-admin --client-certificate=~/.kube/admin.crt --embed-certs=true`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			verb := "modified"
			read := func(path string) ([]byte, error) {
				b, err := os.ReadFile(path)
				if err != nil {
					return nil, fmt.Errorf("error reading %s data from %s: %w", "client", path, err)
				}
				return b, nil
			}
			err := edit(g, func(cfg *kubeconfig.Config) error {
				e, created := named(&cfg.Users, name, func(u kubeconfig.NamedAuthInfo) string { return u.Name },
					func(n string) kubeconfig.NamedAuthInfo { return kubeconfig.NamedAuthInfo{Name: n} })
				if created {
					verb = "set"
				}
				u := &e.User
				f := cmd.Flags()
				if f.Changed("client-certificate") {
					u.ClientCertificate, u.ClientCertificateData = cert, nil
					if embed {
						b, err := read(cert)
						if err != nil {
							return err
						}
						u.ClientCertificate, u.ClientCertificateData = "", b
					}
				}
				if f.Changed("client-key") {
					u.ClientKey, u.ClientKeyData = key, nil
					if embed {
						b, err := read(key)
						if err != nil {
							return err
						}
						u.ClientKey, u.ClientKeyData = "", b
					}
				}
				if f.Changed("token") {
					u.Token, u.TokenFile = token, ""
				}
				return nil
			})
			if err != nil {
				return err
			}
			fmt.Fprintf(streams.Out, "User %q %s.\n", name, verb)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&cert, "client-certificate", "", "Path to client-certificate file for the user entry in kubeconfig")
	f.StringVar(&key, "client-key", "", "Path to client-key file for the user entry in kubeconfig")
	f.StringVar(&token, "token", "", "token for the user entry in kubeconfig")
	f.BoolVar(&embed, "embed-certs", false, "Embed client cert/key for the user entry in kubeconfig")
	return cmd
}

func newDeleteContext(streams cli.Streams, g *cli.Globals) *cobra.Command {
	return &cobra.Command{
		Use:     "delete-context NAME",
		Short:   "Delete the specified context from the kubeconfig",
		Long:    "Delete the specified context from the kubeconfig.",
		Example: "  kubectl-lite config delete-context minikube",
		Args:    cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			name := args[0]
			path, err := targetFile(g.Kubeconfig)
			if err != nil {
				return err
			}
			wasCurrent := false
			err = edit(g, func(cfg *kubeconfig.Config) error {
				for i, c := range cfg.Contexts {
					if c.Name == name {
						cfg.Contexts = append(cfg.Contexts[:i], cfg.Contexts[i+1:]...)
						wasCurrent = cfg.CurrentContext == name
						return nil
					}
				}
				return fmt.Errorf("cannot delete context %s, not in %s", name, path)
			})
			if err != nil {
				return err
			}
			if wasCurrent {
				fmt.Fprintln(streams.ErrOut, "warning: this removed your active context, use \"kubectl-lite config use-context\" to select a different one")
			}
			fmt.Fprintf(streams.Out, "deleted context %s from %s\n", name, path)
			return nil
		},
	}
}

func newRenameContext(streams cli.Streams, g *cli.Globals) *cobra.Command {
	return &cobra.Command{
		Use:     "rename-context CONTEXT_NAME NEW_NAME",
		Short:   "Rename a context from the kubeconfig file",
		Long:    "Renames a context from the kubeconfig file. If the context is the current context, the current context is renamed too.",
		Example: "  kubectl-lite config rename-context old-name new-name",
		Args:    cobra.ExactArgs(2),
		RunE: func(_ *cobra.Command, args []string) error {
			from, to := args[0], args[1]
			path, err := targetFile(g.Kubeconfig)
			if err != nil {
				return err
			}
			err = edit(g, func(cfg *kubeconfig.Config) error {
				idx := -1
				for i, c := range cfg.Contexts {
					if c.Name == to {
						return fmt.Errorf("cannot rename the context %q, the context %q already exists in %s", from, to, path)
					}
					if c.Name == from {
						idx = i
					}
				}
				if idx < 0 {
					return fmt.Errorf("cannot rename the context %q, it's not in %s", from, path)
				}
				cfg.Contexts[idx].Name = to
				if cfg.CurrentContext == from {
					cfg.CurrentContext = to
				}
				return nil
			})
			if err != nil {
				return err
			}
			fmt.Fprintf(streams.Out, "Context %q renamed to %q.\n", from, to)
			return nil
		},
	}
}
