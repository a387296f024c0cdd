package etcd

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
)

// Initial cluster states, etcd's --initial-cluster-state.
const (
	ClusterStateNew      = "new"
	ClusterStateExisting = "existing"
)

// DefaultMemberName is the embedded member's name when none is given: the
// single member of the default path.
const DefaultMemberName = memberName

// DefaultClusterToken is the initial cluster token when none is given.
const DefaultClusterToken = memberName

// syncInterval is how often a member of a multi-member cluster refreshes
// its client's endpoints from the member list.
const syncInterval = 30 * time.Second

// ClusterConfig makes the embedded server one member of a cluster, with
// etcd's own flags' meaning. The zero value is the default path: one member
// named "minik8s" whose initial cluster is itself.
type ClusterConfig struct {
	// Name is the member's name (etcd --name; default "minik8s"). Names
	// are unique in a cluster.
	Name string
	// AdvertiseClientURL and AdvertisePeerURL are the URLs the other
	// members and clients reach this one at (etcd
	// --advertise-client-urls, --initial-advertise-peer-urls); default
	// the listen URLs. They must be reachable from the other members and
	// named by this member's certificates.
	AdvertiseClientURL, AdvertisePeerURL string
	// InitialCluster is every member's NAME=PEER-URL at bootstrap, comma
	// separated (etcd --initial-cluster); it must hold this member with
	// AdvertisePeerURL. Empty: this member alone, or what Join learns.
	InitialCluster string
	// InitialClusterState is "new" (the members in InitialCluster start
	// together) or "existing" (this member was added to a running cluster
	// with a member add). Empty: "new", or "existing" with Join.
	InitialClusterState string
	// InitialClusterToken tells clusters apart at bootstrap (default
	// "minik8s"); every member of one cluster has the same.
	InitialClusterToken string
	// Join are client URLs of a running cluster's members. When the data
	// directory holds no member yet, Start adds this member to that
	// cluster itself (a member add with AdvertisePeerURL, what kubeadm join
	// --control-plane does) and starts it with the "existing" state and
	// the initial cluster the add returns (InitialCluster is not read
	// then). A data directory that holds a member ignores Join: the member
	// restarts as it was.
	Join []string
}

// multi reports whether the member may have peers: anything but the
// default single-member path.
func (c ClusterConfig) multi() bool {
	return c.InitialCluster != "" || len(c.Join) > 0 || c.InitialClusterState == ClusterStateExisting
}

// keepAliveTimeout is how long a keepalive ping may go unanswered before
// the client closes the connection (kube-apiserver's etcd client's).
const keepAliveTimeout = 10 * time.Second

// keepAliveTime is how often the client of a member of a multi-member
// cluster pings an idle connection (kube-apiserver's 30 s); 0 (never) on
// the single-member path, whose only connection is on loopback.
func keepAliveTime(cfg Config) time.Duration {
	if cfg.Cluster.multi() {
		return 30 * time.Second
	}
	return 0
}

func autoSyncInterval(cfg Config) time.Duration {
	if cfg.Cluster.multi() {
		return syncInterval
	}
	return 0
}

// ParseInitialCluster parses NAME=URL[,NAME=URL...] into member names and
// their peer URLs; a name may appear more than once (several peer URLs).
func ParseInitialCluster(s string) (map[string][]string, error) {
	out := map[string][]string{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, u, ok := strings.Cut(part, "=")
		if !ok || name == "" || u == "" {
			return nil, fmt.Errorf("%q: want NAME=PEER-URL", part)
		}
		parsed, err := url.Parse(u)
		if err != nil {
			return nil, fmt.Errorf("%q: %w", part, err)
		}
		if parsed.Scheme != "https" && parsed.Scheme != "http" {
			return nil, fmt.Errorf("%q: the peer URL's scheme must be https (or http without TLS)", part)
		}
		if parsed.Port() == "" || parsed.Hostname() == "" {
			return nil, fmt.Errorf("%q: the peer URL must be SCHEME://HOST:PORT", part)
		}
		out[name] = append(out[name], u)
	}
	if len(out) == 0 {
		return nil, errors.New("no member")
	}
	return out, nil
}

// applyCluster sets the member's name, advertise URLs and initial cluster
// on ecfg, joining a running cluster first when Join says so.
func applyCluster(ctx context.Context, cfg Config, ecfg *embed.Config, clientURL, peerURL *url.URL, clientTLS *tls.Config) error {
	c := cfg.Cluster
	ecfg.Name = c.Name
	if ecfg.Name == "" {
		ecfg.Name = memberName
	}
	advClient, advPeer := *clientURL, *peerURL
	for _, a := range []struct {
		flag, v string
		dst     *url.URL
	}{{"advertise client URL", c.AdvertiseClientURL, &advClient}, {"advertise peer URL", c.AdvertisePeerURL, &advPeer}} {
		if a.v == "" {
			continue
		}
		u, err := url.Parse(a.v)
		if err != nil {
			return fmt.Errorf("etcd %s %q: %w", a.flag, a.v, err)
		}
		*a.dst = *u
	}
	ecfg.AdvertiseClientUrls = []url.URL{advClient}
	ecfg.AdvertisePeerUrls = []url.URL{advPeer}
	ecfg.InitialClusterToken = c.InitialClusterToken
	if ecfg.InitialClusterToken == "" {
		ecfg.InitialClusterToken = DefaultClusterToken
	}
	ecfg.ClusterState = embed.ClusterStateFlagNew
	if c.InitialClusterState == ClusterStateExisting {
		ecfg.ClusterState = embed.ClusterStateFlagExisting
	}
	switch {
	case len(c.Join) > 0 && !hasMember(cfg.DataDir):
		initial, err := joinCluster(ctx, cfg, ecfg.Name, advPeer.String(), clientTLS)
		if err != nil {
			return err
		}
		ecfg.InitialCluster = initial
		ecfg.ClusterState = embed.ClusterStateFlagExisting
	case c.InitialCluster != "":
		members, err := ParseInitialCluster(c.InitialCluster)
		if err != nil {
			return fmt.Errorf("etcd initial cluster: %w", err)
		}
		if !slices.Contains(members[ecfg.Name], advPeer.String()) {
			return fmt.Errorf("etcd initial cluster %q does not name this member %s with its advertise peer URL %s", c.InitialCluster, ecfg.Name, advPeer.String())
		}
		ecfg.InitialCluster = c.InitialCluster
	default:
		// With Join and a member in the data directory etcd reads the
		// cluster from there; the initial cluster only has to name us.
		ecfg.InitialCluster = ecfg.InitialClusterFromName(ecfg.Name)
	}
	return nil
}

// hasMember reports whether an embedded server's data directory holds a
// member (etcd's member/ directory with its write-ahead log).
func hasMember(dataDir string) bool {
	entries, err := os.ReadDir(filepath.Join(dataDir, "member", "wal"))
	return err == nil && len(entries) > 0
}

// joinCluster adds the member (name, peerURL) to the cluster at
// cfg.Cluster.Join and returns the initial cluster it starts with. A
// member already listed with peerURL is reused when it never started (an
// earlier join that did not finish), and replaced when it did: its data
// directory is empty here, so it is this member wiped, which can only come
// back as a new member.
func joinCluster(ctx context.Context, cfg Config, name, peerURL string, clientTLS *tls.Config) (string, error) {
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:   cfg.Cluster.Join,
		DialTimeout: 5 * time.Second,
		TLS:         clientTLS,
		Logger:      zapLogger(cfg.Logger, zap.ErrorLevel, new(atomic.Bool)),
	})
	if err != nil {
		return "", fmt.Errorf("join etcd cluster %v: %w", cfg.Cluster.Join, err)
	}
	defer cli.Close()
	list, err := retry(ctx, func(ctx context.Context) (*clientv3.MemberListResponse, error) { return cli.MemberList(ctx) })
	if err != nil {
		return "", fmt.Errorf("join etcd cluster %v: list members: %w", cfg.Cluster.Join, err)
	}
	for _, m := range list.Members {
		if !slices.Contains(m.PeerURLs, peerURL) {
			if m.Name == name {
				return "", fmt.Errorf("join etcd cluster %v: a member named %s (%x) is there with peer URLs %v: remove it first, or pick another name", cfg.Cluster.Join, name, m.ID, m.PeerURLs)
			}
			continue
		}
		if m.Name == "" {
			cfg.Logger.Info("etcd member already added, not started yet: starting it", "member", name, "id", fmt.Sprintf("%x", m.ID))
			return initialCluster(list.Members, m.ID, name), nil
		}
		// Only a member that no longer answers is this one wiped; a live
		// one is another machine given the same peer URL by mistake.
		for _, u := range m.ClientURLs {
			sctx, cancel := context.WithTimeout(ctx, 3*time.Second)
			st, err := cli.Status(sctx, u)
			cancel()
			if err == nil && st.Header != nil && st.Header.MemberId == m.ID {
				return "", fmt.Errorf("join etcd cluster %v: member %s (%x) with peer URL %s answers at %s: refusing to replace a live member (a wiped member must be stopped first; or give this one another --embedded-etcd-advertise-peer-url)",
					cfg.Cluster.Join, m.Name, m.ID, peerURL, u)
			}
		}
		cfg.Logger.Warn("etcd member with this peer URL is in the cluster but the data directory is empty: replacing it", "member", m.Name, "id", fmt.Sprintf("%x", m.ID), "peerURL", peerURL)
		if _, err := retry(ctx, func(ctx context.Context) (*clientv3.MemberRemoveResponse, error) { return cli.MemberRemove(ctx, m.ID) }); err != nil {
			return "", fmt.Errorf("join etcd cluster %v: remove the old member %s (%x): %w", cfg.Cluster.Join, m.Name, m.ID, err)
		}
	}
	add, err := retry(ctx, func(ctx context.Context) (*clientv3.MemberAddResponse, error) {
		return cli.MemberAdd(ctx, []string{peerURL})
	})
	if err != nil {
		return "", fmt.Errorf("join etcd cluster %v: add member %s (%s): %w", cfg.Cluster.Join, name, peerURL, err)
	}
	cfg.Logger.Info("added etcd member", "member", name, "id", fmt.Sprintf("%x", add.Member.ID), "peerURL", peerURL, "members", len(add.Members))
	waitMembersKnow(ctx, cfg, clientTLS, add.Members, add.Member.ID)
	return initialCluster(add.Members, add.Member.ID, name), nil
}

// waitMembersKnow waits (at most 30 s) until every started member that
// answers lists the member id in its own, serializable view. A new member
// checks its initial cluster against the membership the first peer it
// reaches reports; a peer that has not applied the add yet (one that just
// caught up itself) reports one member fewer, and the start fails with
// "member count is unequal".
func waitMembersKnow(ctx context.Context, cfg Config, clientTLS *tls.Config, members []*etcdserverpb.Member, id uint64) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for _, m := range members {
		if m.ID == id || len(m.ClientURLs) == 0 {
			continue
		}
		cli, err := clientv3.New(clientv3.Config{
			Endpoints:   m.ClientURLs,
			DialTimeout: 3 * time.Second,
			TLS:         clientTLS,
			Logger:      zapLogger(cfg.Logger, zap.ErrorLevel, new(atomic.Bool)),
		})
		if err != nil {
			continue
		}
		var failingSince time.Time
		for {
			tctx, tcancel := context.WithTimeout(ctx, 3*time.Second)
			list, err := cli.MemberList(tctx, clientv3.WithSerializable())
			tcancel()
			if err != nil {
				// A member that keeps failing for 5 s is taken as stopped
				// or unreachable: it cannot answer the new member either.
				// A passing error (a leader change) is retried.
				if failingSince.IsZero() {
					failingSince = time.Now()
				}
				if time.Since(failingSince) > 5*time.Second || ctx.Err() != nil {
					break
				}
				time.Sleep(200 * time.Millisecond)
				continue
			}
			failingSince = time.Time{}
			if slices.ContainsFunc(list.Members, func(x *etcdserverpb.Member) bool { return x.ID == id }) {
				break
			}
			select {
			case <-ctx.Done():
			case <-time.After(200 * time.Millisecond):
				continue
			}
			cfg.Logger.Warn("etcd member has not applied the member add yet", "member", m.Name, "added", fmt.Sprintf("%x", id))
			break
		}
		cli.Close()
	}
}

// initialCluster is NAME=URL for every member, self (not started, so
// unnamed in the list) under name, as etcdctl member add prints it:
// another member added but not started yet stays unnamed ("=URL"), since
// etcd checks that the initial cluster has as many members as the cluster.
func initialCluster(members []*etcdserverpb.Member, self uint64, name string) string {
	var parts []string
	for _, m := range members {
		n := m.Name
		if m.ID == self {
			n = name
		}
		for _, u := range m.PeerURLs {
			parts = append(parts, n+"="+u)
		}
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

// retry repeats f (each try bounded by 5 s) until it succeeds or ctx ends:
// right after a member add or a leader change the cluster refuses
// membership changes for a moment.
func retry[T any](ctx context.Context, f func(context.Context) (T, error)) (T, error) {
	for {
		tctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		v, err := f(tctx)
		cancel()
		if err == nil {
			return v, nil
		}
		select {
		case <-ctx.Done():
			return v, err
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// syncEndpoints points the client of a member of a multi-member cluster at
// every member's client URL, this member's first listed by the member
// list, so that it fails over when this member cannot serve (no leader,
// stopping).
func (b *Backend) syncEndpoints(ctx context.Context, cfg Config) {
	if !cfg.Cluster.multi() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := b.client.Sync(ctx); err != nil {
		b.log.Warn("etcd client endpoints not synced with the member list", "err", err)
	}
}
