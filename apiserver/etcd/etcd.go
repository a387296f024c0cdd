package etcd

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
)

// Defaults of the embedded server.
const (
	// DefaultStartTimeout bounds how long Start waits for the embedded
	// server to become ready (or the external cluster to answer).
	DefaultStartTimeout = 60 * time.Second
	// snapshotCount is the number of raft entries between snapshots. Entries
	// since the last snapshot are kept in memory, so a smaller number than
	// etcd's 10,000 lowers the resident size under write load; a single
	// member has no follower that would need a longer log to catch up.
	snapshotCount = 5000
	// catchUpEntries is how many raft entries are kept after a snapshot.
	catchUpEntries = 500
	memberName     = "minik8s"
	lockFileName   = "minik8s-etcd.lock"
	healthTimeout  = 5 * time.Second
)

// Config selects and configures the etcd behind the apiserver.
type Config struct {
	// DataDir holds the embedded server's data; required unless Servers is set.
	DataDir string
	// ListenClientURL and ListenPeerURL are the embedded server's listeners,
	// e.g. "https://127.0.0.1:2379". Empty: 127.0.0.1 on a port the kernel
	// picks (Endpoints reports it), https when ServerTLS (PeerTLS) is set.
	ListenClientURL, ListenPeerURL string
	// ServerTLS makes the embedded server serve clients over TLS only (an
	// https:// ListenClientURL) and refuse any client without a
	// certificate of ServerTLS.ClientCAFile. Our own client then presents
	// CertFile and KeyFile and trusts CAFile, which are required. nil: plain
	// and unauthenticated, for tests on loopback only.
	ServerTLS *TLSFiles
	// PeerTLS does the same for the peer URL: members must present a
	// certificate of PeerTLS.ClientCAFile. A single member never dials a
	// peer, but its peer listener is still open.
	PeerTLS *TLSFiles
	// QuotaBackendBytes is the embedded server's database size limit
	// (0: etcd's default, 2 GiB).
	QuotaBackendBytes int64
	// MaxRequestBytes is the embedded server's largest accepted request
	// (0: etcd's default, 1.5 MiB). Larger writes fail with "etcdserver:
	// request is too large", which the storage package turns into
	// storage.ErrRequestTooLarge.
	MaxRequestBytes uint
	// WatchProgressNotifyInterval is how often the embedded server tells idle
	// watches the current revision (0: 5 seconds).
	WatchProgressNotifyInterval time.Duration

	// Cluster makes the embedded server a member of a multi-member
	// cluster (see cluster.go); its zero value is the single member
	// "minik8s" of the default path.
	Cluster ClusterConfig

	// Servers are the client URLs of an external cluster. When set, no
	// embedded server is started and DataDir is ignored.
	Servers []string
	// CAFile, CertFile and KeyFile secure the client's connection: to
	// Servers, or to the embedded server when ServerTLS is set.
	CAFile, CertFile, KeyFile string

	// StartTimeout bounds Start (0: DefaultStartTimeout).
	StartTimeout time.Duration
	// Logger receives etcd's own warnings and errors, and the backend's logs.
	Logger *slog.Logger
}

// TLSFiles are a server's key pair and the CA its clients' certificates
// must chain to.
type TLSFiles struct {
	CertFile, KeyFile, ClientCAFile string
}

func (f *TLSFiles) info() transport.TLSInfo {
	return transport.TLSInfo{CertFile: f.CertFile, KeyFile: f.KeyFile, TrustedCAFile: f.ClientCAFile, ClientCertAuth: true}
}

// Backend is a running etcd (embedded or external) and a client to it.
type Backend struct {
	client    *clientv3.Client
	endpoints []string
	// peerURL is the embedded server's bound peer URL.
	peerURL string
	log     *slog.Logger

	// Embedded server only.
	server *embed.Etcd
	lock   *os.File

	// mute silences etcd's logs once Close begins.
	mute      *atomic.Bool
	closeOnce sync.Once
	closeErr  error
	done      chan struct{}
	wg        sync.WaitGroup
}

// Start brings up etcd as cfg says and returns once it answers requests.
// ctx bounds the start only; the backend runs until Close.
func Start(ctx context.Context, cfg Config) (*Backend, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.StartTimeout <= 0 {
		cfg.StartTimeout = DefaultStartTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.StartTimeout)
	defer cancel()
	if len(cfg.Servers) > 0 {
		return startExternal(ctx, cfg)
	}
	return startEmbedded(ctx, cfg)
}

func startExternal(ctx context.Context, cfg Config) (*Backend, error) {
	mute := new(atomic.Bool)
	ccfg := clientv3.Config{
		Endpoints:   cfg.Servers,
		DialTimeout: 10 * time.Second,
		Logger:      zapLogger(cfg.Logger, zap.ErrorLevel, mute),
	}
	if cfg.CAFile != "" || cfg.CertFile != "" || cfg.KeyFile != "" {
		tlsCfg, err := clientTLS(cfg)
		if err != nil {
			return nil, err
		}
		ccfg.TLS = tlsCfg
	}
	cli, err := clientv3.New(ccfg)
	if err != nil {
		return nil, fmt.Errorf("connect to etcd %v: %w", cfg.Servers, err)
	}
	b := &Backend{client: cli, endpoints: append([]string(nil), cfg.Servers...), log: cfg.Logger, mute: mute, done: make(chan struct{})}
	if err := b.waitHealthy(ctx); err != nil {
		cli.Close()
		return nil, fmt.Errorf("etcd %v is not healthy: %w", cfg.Servers, err)
	}
	return b, nil
}

// clientTLS is the client's TLS configuration from CAFile, CertFile and
// KeyFile.
func clientTLS(cfg Config) (*tls.Config, error) {
	info := transport.TLSInfo{CertFile: cfg.CertFile, KeyFile: cfg.KeyFile, TrustedCAFile: cfg.CAFile}
	tlsCfg, err := info.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("etcd client TLS: %w", err)
	}
	return tlsCfg, nil
}

func startEmbedded(ctx context.Context, cfg Config) (*Backend, error) {
	if cfg.DataDir == "" {
		return nil, errors.New("embedded etcd needs a data directory")
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("create etcd data dir: %w", err)
	}
	lock, err := lockDataDir(cfg.DataDir)
	if err != nil {
		return nil, err
	}
	b, err := startServer(ctx, cfg, lock)
	if err != nil {
		lock.Close()
		return nil, err
	}
	return b, nil
}

// lockDataDir takes an exclusive lock on the data dir so a second server on
// the same directory fails at once instead of waiting on bbolt's lock.
func lockDataDir(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, lockFileName), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open etcd lock file: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("etcd data dir %s is in use by another server", dir)
		}
		return nil, fmt.Errorf("lock etcd data dir %s: %w", dir, err)
	}
	return f, nil
}

func startServer(ctx context.Context, cfg Config, lock *os.File) (*Backend, error) {
	clientURL, err := listenURL(cfg.ListenClientURL, cfg.ServerTLS != nil)
	if err != nil {
		return nil, fmt.Errorf("etcd client URL: %w", err)
	}
	peerURL, err := listenURL(cfg.ListenPeerURL, cfg.PeerTLS != nil)
	if err != nil {
		return nil, fmt.Errorf("etcd peer URL: %w", err)
	}
	var clientTLSConfig *tls.Config
	if cfg.ServerTLS != nil {
		if cfg.CAFile == "" || cfg.CertFile == "" || cfg.KeyFile == "" {
			return nil, errors.New("embedded etcd with client certificate authentication: the client's CAFile, CertFile and KeyFile are required")
		}
		if clientTLSConfig, err = clientTLS(cfg); err != nil {
			return nil, err
		}
	}
	ecfg := embed.NewConfig()
	ecfg.Dir = cfg.DataDir
	ecfg.ListenClientUrls = []url.URL{*clientURL}
	ecfg.ListenPeerUrls = []url.URL{*peerURL}
	if err := applyCluster(ctx, cfg, ecfg, clientURL, peerURL, clientTLSConfig); err != nil {
		return nil, err
	}
	ecfg.SnapshotCount = snapshotCount
	ecfg.SnapshotCatchUpEntries = catchUpEntries
	ecfg.QuotaBackendBytes = cfg.QuotaBackendBytes
	if cfg.MaxRequestBytes > 0 {
		ecfg.MaxRequestBytes = cfg.MaxRequestBytes
	}
	ecfg.WatchProgressNotifyInterval = cfg.WatchProgressNotifyInterval
	if ecfg.WatchProgressNotifyInterval <= 0 {
		ecfg.WatchProgressNotifyInterval = 5 * time.Second
	}
	ecfg.AutoCompactionRetention = "0"
	ecfg.EnableGRPCGateway = false
	ecfg.MemoryMlock = false
	ecfg.Metrics = "basic"
	ecfg.ListenMetricsUrls = nil
	if cfg.ServerTLS != nil {
		ecfg.ClientTLSInfo = cfg.ServerTLS.info()
	}
	if cfg.PeerTLS != nil {
		ecfg.PeerTLSInfo = cfg.PeerTLS.info()
	}
	ecfg.Logger = "zap"
	mute := new(atomic.Bool)
	ecfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zapLogger(cfg.Logger, zap.ErrorLevel, mute))

	e, err := embed.StartEtcd(ecfg)
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return nil, fmt.Errorf("start embedded etcd (client %s, peer %s): address already in use: %w", clientURL, peerURL, err)
		}
		return nil, fmt.Errorf("start embedded etcd: %w", err)
	}
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		mute.Store(true)
		e.Close()
		return nil, fmt.Errorf("embedded etcd failed while starting: %w", err)
	case <-ctx.Done():
		mute.Store(true)
		e.Server.Stop()
		e.Close()
		return nil, fmt.Errorf("embedded etcd did not become ready: %w", ctx.Err())
	}
	endpoint := dialEndpoint(clientURL.Scheme, e.Clients[0].Addr(), clientURL)
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:   []string{endpoint},
		DialTimeout: 5 * time.Second,
		TLS:         clientTLSConfig,
		Logger:      zapLogger(cfg.Logger, zap.ErrorLevel, mute),
		// A member of a multi-member cluster learns every member's client
		// URL (syncEndpoints) and keeps the list current, and pings its
		// connections as kube-apiserver does (keepaliveTime 30 s, timeout
		// 10 s): one to a member that vanished (killed, partitioned, its
		// address gone) is closed and redialled instead of holding every
		// request routed to it until the TCP stack gives up.
		AutoSyncInterval:     autoSyncInterval(cfg),
		DialKeepAliveTime:    keepAliveTime(cfg),
		DialKeepAliveTimeout: keepAliveTimeout,
	})
	if err != nil {
		mute.Store(true)
		e.Close()
		return nil, fmt.Errorf("connect to embedded etcd: %w", err)
	}
	b := &Backend{client: cli, endpoints: []string{endpoint}, peerURL: dialEndpoint(peerURL.Scheme, e.Peers[0].Listener.Addr(), peerURL), log: cfg.Logger,
		server: e, lock: lock, mute: mute, done: make(chan struct{})}
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		select {
		case err, ok := <-e.Err():
			if ok && err != nil {
				b.log.Error("embedded etcd failed", "err", err)
			}
		case <-b.done:
		}
	}()
	if err := b.waitHealthy(ctx); err != nil {
		b.Close()
		return nil, fmt.Errorf("embedded etcd is not healthy: %w", err)
	}
	b.syncEndpoints(ctx, cfg)
	b.log.Info("embedded etcd ready", "endpoint", b.endpoints[0], "dataDir", cfg.DataDir, "member", ecfg.Name, "clientEndpoints", cli.Endpoints())
	return b, nil
}

// listenURL parses u; empty is 127.0.0.1 on a port the kernel picks when
// etcd binds it (port 0: never a port picked free and bound later, which
// another process could take in between). The client reads the bound
// address back from the server; a single member never dials its peer URL.
// With TLS the scheme must be https, without it http or unix: etcd would
// serve plain HTTP on an http URL and ignore the certificates.
func listenURL(u string, secure bool) (*url.URL, error) {
	if u == "" {
		u = "http://127.0.0.1:0"
		if secure {
			u = "https://127.0.0.1:0"
		}
	}
	parsed, err := url.Parse(u)
	if err != nil {
		return nil, err
	}
	switch parsed.Scheme {
	case "https":
		if !secure {
			return nil, fmt.Errorf("%q: a TLS scheme without certificates", u)
		}
	case "http", "unix":
		if secure {
			return nil, fmt.Errorf("%q: scheme must be https (TLS with client certificates)", u)
		}
	default:
		// unixs (TLS on a unix socket) is not wired up: our client does
		// not reach etcd's socket with TLS yet.
		return nil, fmt.Errorf("%q: scheme must be https, or http or unix without TLS", u)
	}
	return parsed, nil
}

// dialEndpoint is the client URL of a bound listener: a wildcard address
// (0.0.0.0, ::) is dialled on loopback, which the serving certificate
// names. The family is the configured URL's: Go may report a listener on
// 0.0.0.0 as [::] (dual stack), and a container may have no ::1.
func dialEndpoint(scheme string, addr net.Addr, configured *url.URL) string {
	if tcp, ok := addr.(*net.TCPAddr); ok && tcp.IP.IsUnspecified() {
		loopback := net.IPv4(127, 0, 0, 1)
		if ip := net.ParseIP(configured.Hostname()); ip != nil && ip.To4() == nil {
			loopback = net.IPv6loopback
		}
		return scheme + "://" + net.JoinHostPort(loopback.String(), strconv.Itoa(tcp.Port))
	}
	return scheme + "://" + addr.String()
}

func (b *Backend) waitHealthy(ctx context.Context) error {
	for {
		err := b.Healthy(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// Client returns the etcd client. It stays valid until Close.
func (b *Backend) Client() *clientv3.Client { return b.client }

// Endpoints returns the client URLs in use.
func (b *Backend) Endpoints() []string { return append([]string(nil), b.endpoints...) }

// PeerURL returns the embedded server's peer URL as bound ("" for an
// external cluster).
func (b *Backend) PeerURL() string { return b.peerURL }

// Embedded reports whether the backend runs its own etcd server.
func (b *Backend) Embedded() bool { return b.server != nil }

// Healthy reports whether etcd serves a linearizable read, which needs a
// leader and a quorum: the same probe as etcd's own /health endpoint.
func (b *Backend) Healthy(ctx context.Context) error {
	select {
	case <-b.done:
		return errors.New("etcd backend is closed")
	default:
	}
	ctx, cancel := context.WithTimeout(ctx, healthTimeout)
	defer cancel()
	if _, err := b.client.Get(ctx, "health"); err != nil {
		return fmt.Errorf("etcd health check: %w", err)
	}
	return nil
}

// Close closes the client and stops the embedded server, waiting for it to
// finish writing. It is safe to call more than once.
func (b *Backend) Close() error {
	b.closeOnce.Do(func() {
		b.mute.Store(true)
		close(b.done)
		b.closeErr = b.client.Close()
		if errors.Is(b.closeErr, context.Canceled) {
			b.closeErr = nil
		}
		if b.server != nil {
			b.server.Close()
			<-b.server.Server.StopNotify()
		}
		b.wg.Wait()
		if b.lock != nil {
			b.lock.Close()
		}
	})
	return b.closeErr
}
