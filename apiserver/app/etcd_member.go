package app

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"go.etcd.io/etcd/api/v3/etcdserverpb"

	"github.com/minik8s/minik8s/apiserver/etcd"
	"github.com/minik8s/minik8s/internal/daemon"
	"github.com/minik8s/minik8s/internal/pki"
)

// memberOptions reach a member of the embedded etcd cluster with the
// apiserver-etcd-client certificate of --cert-dir, as etcdctl would.
type memberOptions struct {
	certDir   string
	endpoints []string
	timeout   time.Duration
}

// newEtcdCommand is "apiserver etcd member list|remove|move-leader": etcdctl's member
// commands for the embedded etcd cluster, with the apiserver's
// certificates (a member adds itself: --embedded-etcd-join).
func newEtcdCommand() *cobra.Command {
	o := &memberOptions{certDir: DefaultOptions().CertDir, endpoints: []string{"https://127.0.0.1:2379"}, timeout: 30 * time.Second}
	etcdCmd := &cobra.Command{
		Use:   "etcd",
		Short: "Manage the members of the embedded etcd cluster",
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	member := &cobra.Command{
		Use:   "member",
		Short: "List or remove members of the embedded etcd cluster, or move its leadership",
		Long: `List or remove members of the embedded etcd cluster, as etcdctl member does,
through --endpoints with the apiserver-etcd-client certificate of --cert-dir.
A new member adds itself when its apiserver starts with --embedded-etcd-join.`,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	pf := member.PersistentFlags()
	pf.StringVar(&o.certDir, "cert-dir", o.certDir, "The apiserver's --cert-dir: its etcd/ca.crt and apiserver-etcd-client.crt|key reach the members.")
	pf.StringSliceVar(&o.endpoints, "endpoints", o.endpoints, "Client URLs of members to ask.")
	pf.DurationVar(&o.timeout, "timeout", o.timeout, "How long the command may take.")
	member.AddCommand(
		o.command("list", "List the members: ID, name, started, leader, peer and client URLs", 0,
			func(ctx context.Context, b *etcd.Backend, _ []string, out, _ io.Writer) error {
				return listMembers(ctx, b, out)
			}),
		o.command("remove NAME|ID", "Remove a member, by name or hexadecimal ID", 1,
			func(ctx context.Context, b *etcd.Backend, args []string, out, _ io.Writer) error {
				return removeMember(ctx, b, args[0], out)
			}),
		o.command("move-leader NAME|ID", "Hand the raft leadership to another member (etcdctl move-leader)", 1,
			func(ctx context.Context, b *etcd.Backend, args []string, out, stderr io.Writer) error {
				return o.moveLeader(ctx, b, args[0], out, stderr)
			}),
	)
	etcdCmd.AddCommand(member)
	return etcdCmd
}

// command is one member subcommand: it takes nargs arguments (a member
// name or ID when one), reaches the cluster as o says and runs f.
func (o *memberOptions) command(use, short string, nargs int, f func(ctx context.Context, b *etcd.Backend, args []string, out, stderr io.Writer) error) *cobra.Command {
	return &cobra.Command{
		Use:   use,
		Short: short,
		Args: func(cmd *cobra.Command, args []string) error {
			switch {
			case nargs == 0:
				return cobra.NoArgs(cmd, args)
			case len(args) != nargs:
				return daemon.UsageError(fmt.Errorf("%s takes one member name or ID", cmd.CommandPath()))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.run(cmd.Context(), cmd.ErrOrStderr(), func(ctx context.Context, b *etcd.Backend) error {
				return f(ctx, b, args, cmd.OutOrStdout(), cmd.ErrOrStderr())
			})
		},
	}
}

func (o *memberOptions) run(ctx context.Context, stderr io.Writer, f func(context.Context, *etcd.Backend) error) error {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	b, err := etcd.Start(ctx, etcd.Config{
		Servers:  o.endpoints,
		CAFile:   filepath.Join(o.certDir, pki.EtcdCACertFile),
		CertFile: filepath.Join(o.certDir, pki.APIServerEtcdClientCertFile),
		KeyFile:  filepath.Join(o.certDir, pki.APIServerEtcdClientKeyFile),
		// Start waits for a healthy cluster (a quorum): ask a member
		// that has one.
		StartTimeout: o.timeout,
		Logger:       slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelError})),
	})
	if err != nil {
		return err
	}
	defer b.Close()
	return f(ctx, b)
}

func listMembers(ctx context.Context, b *etcd.Backend, out io.Writer) error {
	ml, err := b.Client().MemberList(ctx)
	if err != nil {
		return fmt.Errorf("member list: %w", err)
	}
	leader := leaderID(ctx, b)
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tSTARTED\tLEADER\tPEER ADDRS\tCLIENT ADDRS")
	for _, m := range ml.Members {
		started := "started"
		if m.Name == "" {
			started = "unstarted"
		}
		fmt.Fprintf(tw, "%x\t%s\t%s\t%t\t%s\t%s\n", m.ID, m.Name, started, m.ID == leader, strings.Join(m.PeerURLs, ","), strings.Join(m.ClientURLs, ","))
	}
	return tw.Flush()
}

// leaderID is the raft leader as the first member that answers sees it
// (0 when none does).
func leaderID(ctx context.Context, b *etcd.Backend) uint64 {
	for _, ep := range b.Endpoints() {
		if st, err := b.Client().Status(ctx, ep); err == nil {
			return st.Leader
		}
	}
	return 0
}

// findMember is the member named which, or with the hexadecimal ID which.
func findMember(members []*etcdserverpb.Member, which string) *etcdserverpb.Member {
	if which == "" {
		return nil
	}
	var found *etcdserverpb.Member
	for _, m := range members {
		if m.Name == which || strconv.FormatUint(m.ID, 16) == strings.ToLower(which) {
			if found != nil {
				// Two members answer to the name: only an ID is sure.
				return nil
			}
			found = m
		}
	}
	return found
}

// moveLeader asks the leader (only it may) to hand over to which.
func (o *memberOptions) moveLeader(ctx context.Context, b *etcd.Backend, which string, out, stderr io.Writer) error {
	ml, err := b.Client().MemberList(ctx)
	if err != nil {
		return fmt.Errorf("member list: %w", err)
	}
	target := findMember(ml.Members, which)
	if target == nil {
		return fmt.Errorf("no member named or with ID %q", which)
	}
	leader := leaderID(ctx, b)
	if leader == target.ID {
		fmt.Fprintf(out, "Member %x (%s) is the leader already\n", target.ID, target.Name)
		return nil
	}
	var lm *etcdserverpb.Member
	for _, m := range ml.Members {
		if m.ID == leader {
			lm = m
		}
	}
	if lm == nil || len(lm.ClientURLs) == 0 {
		return fmt.Errorf("the leader %x has no client URL", leader)
	}
	lo := *o
	lo.endpoints = lm.ClientURLs
	return lo.run(ctx, stderr, func(ctx context.Context, lb *etcd.Backend) error {
		if _, err := lb.Client().MoveLeader(ctx, target.ID); err != nil {
			return fmt.Errorf("move leader from %s to %s: %w", lm.Name, target.Name, err)
		}
		fmt.Fprintf(out, "Leadership transferred from %x (%s) to %x (%s)\n", leader, lm.Name, target.ID, target.Name)
		return nil
	})
}

func removeMember(ctx context.Context, b *etcd.Backend, which string, out io.Writer) error {
	ml, err := b.Client().MemberList(ctx)
	if err != nil {
		return fmt.Errorf("member list: %w", err)
	}
	m := findMember(ml.Members, which)
	if m == nil {
		return fmt.Errorf("no single member named or with ID %q (etcd member list shows the IDs)", which)
	}
	if _, err := b.Client().MemberRemove(ctx, m.ID); err != nil {
		return fmt.Errorf("remove member %s (%x): %w", m.Name, m.ID, err)
	}
	fmt.Fprintf(out, "Member %x removed from cluster %x\n", m.ID, ml.Header.ClusterId)
	return nil
}
