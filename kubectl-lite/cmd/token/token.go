package token

import (
	"fmt"
	"net/url"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/pki"
	"github.com/minik8s/minik8s/kubectl-lite/cli"
	"github.com/minik8s/minik8s/kubectl-lite/printers"
)

// now is the clock of list and create; tests may not need to replace it.
var now = time.Now

// NewCommand returns the token command and its subcommands.
func NewCommand(streams cli.Streams, g *cli.Globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "token",
		Short: "Manage bootstrap tokens for joining nodes",
	}
	cmd.AddCommand(newCreate(streams, g), newList(streams, g), newDelete(streams, g))
	return cmd
}

func secrets(g *cli.Globals) (*client.ResourceClient[api.Secret, *api.Secret], *client.Client, error) {
	c, err := g.Client()
	if err != nil {
		return nil, nil, err
	}
	return client.Resource[api.Secret](c).Namespace(pki.BootstrapTokenNamespace), c, nil
}

func newCreate(streams cli.Streams, g *cli.Globals) *cobra.Command {
	var (
		ttl         time.Duration
		description string
		groups      []string
		printJoin   bool
	)
	cmd := &cobra.Command{
		Use:   "create [TOKEN]",
		Short: "Create a bootstrap token on the server and print it",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, secret := pki.GenerateBootstrapToken()
			if len(args) == 1 {
				var err error
				if id, secret, err = pki.ParseBootstrapToken(args[0]); err != nil {
					return err
				}
			}
			s, err := pki.BootstrapTokenSecret(id, secret, ttl, groups, now())
			if err != nil {
				return err
			}
			if description != "" {
				s.Data[pki.BootstrapTokenDescriptionKey] = []byte(description)
			}
			rc, c, err := secrets(g)
			if err != nil {
				return err
			}
			if _, err := rc.Create(cmd.Context(), s); err != nil {
				return err
			}
			tok := id + "." + secret
			if !printJoin {
				fmt.Fprintln(streams.Out, tok)
				return nil
			}
			join, err := joinCommand(g, c, tok)
			if err != nil {
				return err
			}
			fmt.Fprintln(streams.Out, join)
			return nil
		},
	}
	f := cmd.Flags()
	f.DurationVar(&ttl, "ttl", 24*time.Hour, "The duration before the token is automatically deleted (e.g. 1s, 2m, 3h). If set to '0', the token will never expire")
	f.StringVar(&description, "description", "", "A human friendly description of how this token is used.")
	f.StringSliceVar(&groups, "groups", []string{pki.BootstrapDefaultNodeGroup}, "Extra groups that this token will authenticate as when used for authentication.")
	f.BoolVar(&printJoin, "print-join-command", false, "Instead of printing only the token, print the full kubelet command line needed to join a node using the token.")
	return cmd
}

// joinCommand is the kubelet command line that joins a node with tok,
// pinning the CA the kubeconfig trusts.
func joinCommand(g *cli.Globals, c *client.Client, tok string) (string, error) {
	cc, err := g.ClientConfig()
	if err != nil {
		return "", err
	}
	if len(cc.CAData) == 0 {
		return "", fmt.Errorf("the kubeconfig names no certificate authority to pin for the join command")
	}
	hash, err := pki.CAHash(cc.CAData)
	if err != nil {
		return "", err
	}
	server := c.Host()
	if u, err := url.Parse(server); err == nil {
		server = u.Scheme + "://" + u.Host
	}
	return fmt.Sprintf("kubelet --server %s --token %s --discovery-token-ca-cert-hash %s", server, tok, hash), nil
}

func newList(streams cli.Streams, g *cli.Globals) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List bootstrap tokens on the server",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			rc, _, err := secrets(g)
			if err != nil {
				return err
			}
			list, err := rc.List(cmd.Context(), client.ListOptions{})
			if err != nil {
				return err
			}
			return printTokens(streams, list.Items, now())
		},
	}
}

// printTokens writes kubeadm's token table.
func printTokens(streams cli.Streams, items []api.Secret, t time.Time) error {
	w := tabwriter.NewWriter(streams.Out, 10, 4, 3, ' ', 0)
	fmt.Fprintln(w, "TOKEN\tTTL\tEXPIRES\tUSAGES\tDESCRIPTION\tEXTRA GROUPS")
	sort.Slice(items, func(i, j int) bool { return items[i].Name < items[j].Name })
	for _, s := range items {
		if s.Type != pki.SecretTypeBootstrapToken {
			continue
		}
		d := s.Data
		tok := string(d[pki.BootstrapTokenIDKey]) + "." + string(d[pki.BootstrapTokenSecretKey])
		ttl, expires := "<forever>", "<never>"
		if e := string(d[pki.BootstrapTokenExpirationKey]); e != "" {
			expires = e
			if exp, err := time.Parse(time.RFC3339, e); err == nil {
				ttl = printers.HumanDuration(exp.Sub(t))
				if exp.Before(t) {
					ttl = "<invalid>"
				}
			}
		}
		var usages []string
		for k, v := range d {
			if strings.HasPrefix(k, pki.BootstrapTokenUsagePrefix) && string(v) == "true" {
				usages = append(usages, strings.TrimPrefix(k, pki.BootstrapTokenUsagePrefix))
			}
		}
		sort.Strings(usages)
		desc := string(d[pki.BootstrapTokenDescriptionKey])
		if desc == "" {
			desc = "<none>"
		}
		groups := string(d[pki.BootstrapTokenExtraGroupsKey])
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", tok, ttl, expires, strings.Join(usages, ","), desc, groups)
	}
	return w.Flush()
}

func newDelete(streams cli.Streams, g *cli.Globals) *cobra.Command {
	return &cobra.Command{
		Use:   "delete TOKEN-ID|TOKEN [...]",
		Short: "Delete bootstrap tokens on the server",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			rc, _, err := secrets(g)
			if err != nil {
				return err
			}
			for _, a := range args {
				id, _, _ := strings.Cut(a, ".")
				if err := rc.Delete(cmd.Context(), pki.BootstrapTokenSecretName(id), nil); err != nil {
					return err
				}
				fmt.Fprintf(streams.Out, "bootstrap token %q deleted\n", id)
			}
			return nil
		},
	}
}
