package snapshot

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/minik8s/minik8s/apiserver/etcd"
	"github.com/minik8s/minik8s/internal/daemon"
	"github.com/minik8s/minik8s/internal/logging"
	"github.com/minik8s/minik8s/internal/pki"
)

// Defaults of the commands, the apiserver's and the compose cluster's.
const (
	DefaultCertDir   = "/var/lib/minik8s/pki"
	DefaultClientURL = "https://127.0.0.1:2379"
	DefaultPeerURL   = "https://127.0.0.1:2380"
)

// NewCommand returns "snapshot" with its verbs save, restore and status.
func NewCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "snapshot",
		Short: "Save, restore and inspect etcd snapshots",
		Long: `Back up and restore the apiserver's etcd, as etcdctl and etcdutl do:
save streams a snapshot from the running etcd, restore turns a snapshot into
the data directory of the apiserver's embedded etcd, status describes a file.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return daemon.UsageError(fmt.Errorf("unknown command %q for %q: want save, restore or status", args[0], cmd.CommandPath()))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newSave(), newRestore(), newStatus())
	return cmd
}

// saveOptions reach the etcd the apiserver uses, with the apiserver's flag
// names.
type saveOptions struct {
	certDir, clientURL        string
	servers                   []string
	caFile, certFile, keyFile string
	timeout                   time.Duration
}

func newSave() *cobra.Command {
	o := saveOptions{certDir: DefaultCertDir, clientURL: DefaultClientURL, timeout: 10 * time.Minute}
	cmd := &cobra.Command{
		Use:   "save FILE",
		Short: "Save a snapshot of the apiserver's etcd to FILE",
		Long: `Save a snapshot of the apiserver's etcd to FILE (written to a temporary file
in FILE's directory and renamed, so FILE is whole or untouched): the embedded
etcd at --embedded-etcd-client-url with the apiserver-etcd-client certificate
of --cert-dir, or the external cluster of --etcd-servers (one URL) with
--etcd-cafile, --etcd-certfile and --etcd-keyfile.`,
		Args: exactFile,
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.run(cmd.Context(), args[0], cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&o.certDir, "cert-dir", o.certDir, "The apiserver's --cert-dir: its etcd/ca.crt and apiserver-etcd-client.crt|key reach the embedded etcd.")
	fs.StringVar(&o.clientURL, "embedded-etcd-client-url", o.clientURL, "The embedded etcd's client URL (the apiserver's --embedded-etcd-client-url).")
	fs.StringSliceVar(&o.servers, "etcd-servers", nil, "The client URL of an external etcd member (instead of the embedded one).")
	fs.StringVar(&o.caFile, "etcd-cafile", "", "The CA of the external etcd's serving certificate.")
	fs.StringVar(&o.certFile, "etcd-certfile", "", "The client certificate for the external etcd.")
	fs.StringVar(&o.keyFile, "etcd-keyfile", "", "The key of --etcd-certfile.")
	fs.DurationVar(&o.timeout, "timeout", o.timeout, "How long the snapshot may take.")
	return cmd
}

func (o *saveOptions) run(ctx context.Context, path string, stdout, stderr io.Writer) error {
	if ctx == nil {
		ctx = context.Background()
	}
	cfg := etcd.Config{Servers: o.servers, CAFile: o.caFile, CertFile: o.certFile, KeyFile: o.keyFile, StartTimeout: 10 * time.Second, Logger: quietLogger(stderr)}
	switch {
	case len(o.servers) > 1:
		return daemon.UsageError(fmt.Errorf("--etcd-servers: a snapshot is taken from one member, got %d URLs", len(o.servers)))
	case len(o.servers) == 0:
		cfg.Servers = []string{o.clientURL}
		if cfg.CAFile == "" && cfg.CertFile == "" && strings.HasPrefix(o.clientURL, "https://") {
			cfg.CAFile = filepath.Join(o.certDir, pki.EtcdCACertFile)
			cfg.CertFile = filepath.Join(o.certDir, pki.APIServerEtcdClientCertFile)
			cfg.KeyFile = filepath.Join(o.certDir, pki.APIServerEtcdClientKeyFile)
		}
	}
	for _, f := range []string{cfg.CAFile, cfg.CertFile, cfg.KeyFile} {
		if f == "" {
			continue
		}
		if _, err := os.Stat(f); err != nil {
			return fmt.Errorf("etcd client certificate: %w", err)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	b, err := etcd.Start(ctx, cfg)
	if err != nil {
		return err
	}
	defer b.Close()
	version, st, err := b.SaveSnapshot(ctx, path)
	if err != nil {
		return err
	}
	// etcdctl's lines, then etcdutl's status table.
	fmt.Fprintf(stdout, "Snapshot saved at %s\n", path)
	if version != "" {
		fmt.Fprintf(stdout, "Server version %s\n", version)
	}
	return printStatus(stdout, st)
}

type restoreOptions struct {
	dataDir, peerURL string
	bump             uint64
	skipHashCheck    bool
}

func newRestore() *cobra.Command {
	o := restoreOptions{peerURL: DefaultPeerURL, bump: etcd.DefaultRevisionBump}
	cmd := &cobra.Command{
		Use:   "restore FILE --data-dir DIR",
		Short: "Restore a snapshot into an empty data directory of the embedded etcd",
		Long: `Restore the snapshot FILE into --data-dir, which must be missing or empty, as
the data of the apiserver's embedded etcd (etcdutl snapshot restore, with the
embedded member's name and cluster token); start the apiserver with that
--data-dir. The file's sha256 and database are checked first: a truncated or
corrupt file is refused and nothing is written. Every object comes back with
its resourceVersion; the store's revision is moved --bump-revision past the
snapshot's and marked compacted, so a client's watch or list from an older
resourceVersion gets 410 Gone and relists (0 keeps the snapshot's revision).`,
		Args: exactFile,
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.run(args[0], cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&o.dataDir, "data-dir", "", "The data directory to create (the apiserver's --data-dir); missing or empty. Required.")
	fs.StringVar(&o.peerURL, "embedded-etcd-peer-url", o.peerURL, "The member's peer URL (the apiserver's --embedded-etcd-peer-url).")
	fs.Uint64Var(&o.bump, "bump-revision", o.bump, "How far to move the store revision past the snapshot's, marking it compacted (0: not at all).")
	fs.BoolVar(&o.skipHashCheck, "skip-hash-check", false, "Accept a file without etcd's sha256 checksum (a member/snap/db copied out of a data directory).")
	return cmd
}

func (o *restoreOptions) run(path string, stdout, stderr io.Writer) error {
	if strings.TrimSpace(o.dataDir) == "" {
		return daemon.UsageError(errors.New("--data-dir is required"))
	}
	res, err := etcd.RestoreSnapshot(path, etcd.RestoreOptions{DataDir: o.dataDir, PeerURL: o.peerURL,
		RevisionBump: o.bump, SkipHashCheck: o.skipHashCheck, Logger: quietLogger(stderr)})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Restored %s into %s: %d keys at revision %d", path, o.dataDir, res.Snapshot.TotalKeys, res.Snapshot.Revision)
	if o.bump > 0 {
		fmt.Fprintf(stdout, "; store revision %d, compacted (older resourceVersions get 410 Gone)", res.Revision)
	}
	fmt.Fprintln(stdout)
	return nil
}

func newStatus() *cobra.Command {
	var skipHashCheck bool
	cmd := &cobra.Command{
		Use:   "status FILE",
		Short: "Check a snapshot file and print its hash, revision, keys and size",
		Args:  exactFile,
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := etcd.VerifySnapshot(args[0], skipHashCheck)
			if err != nil {
				return err
			}
			return printStatus(cmd.OutOrStdout(), st)
		},
	}
	cmd.Flags().BoolVar(&skipHashCheck, "skip-hash-check", false, "Accept a file without etcd's sha256 checksum.")
	return cmd
}

func exactFile(_ *cobra.Command, args []string) error {
	if len(args) != 1 {
		return daemon.UsageError(fmt.Errorf("want one snapshot FILE, got %d arguments", len(args)))
	}
	return nil
}

// printStatus prints etcdutl snapshot status's columns.
func printStatus(w io.Writer, st etcd.SnapshotStatus) error {
	tw := tabwriter.NewWriter(w, 0, 8, 3, ' ', 0)
	fmt.Fprintln(tw, "HASH\tREVISION\tTOTAL KEYS\tTOTAL SIZE\tVERSION")
	fmt.Fprintf(tw, "%x\t%d\t%d\t%s\t%s\n", st.Hash, st.Revision, st.TotalKeys, siBytes(st.TotalSize), st.Version)
	return tw.Flush()
}

// siBytes is a size as etcdutl prints it (go-humanize's Bytes: SI units).
func siBytes(n int64) string {
	const unit = 1000
	if n < 10 {
		return fmt.Sprintf("%d B", n)
	}
	v, i := float64(n), 0
	units := []string{"B", "kB", "MB", "GB", "TB", "PB"}
	for v >= unit && i < len(units)-1 {
		v /= unit
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%d B", n)
	}
	if v < 10 {
		return fmt.Sprintf("%.1f %s", v, units[i])
	}
	return fmt.Sprintf("%.0f %s", v, units[i])
}

// quietLogger is the commands' log: warnings and errors on stderr.
func quietLogger(stderr io.Writer) *slog.Logger {
	log, err := logging.New(stderr, slog.LevelWarn, "text", "apiserver")
	if err != nil {
		return slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	return log
}
