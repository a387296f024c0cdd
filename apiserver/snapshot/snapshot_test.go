package snapshot_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/apiserver/app"
	"github.com/minik8s/minik8s/apiserver/etcd"
	"github.com/minik8s/minik8s/apiserver/etcd/etcdtest"
	"github.com/minik8s/minik8s/apiserver/snapshot"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/daemon"
	"github.com/minik8s/minik8s/internal/informer"
)

// run runs "apiserver ARGS" as the binary does and returns its exit code
// and output.
func run(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	cmd := daemon.Command{Name: "apiserver", Subcommands: []*cobra.Command{snapshot.NewCommand()}}
	code = cmd.Execute(args, &out, &errb)
	return code, out.String(), errb.String()
}

// save takes a snapshot of s's embedded etcd into path with the command
// line an operator would type.
func save(t *testing.T, s *apiservertest.Server, path string) string {
	t.Helper()
	code, out, errOut := run("snapshot", "save", path, "--cert-dir", s.Options.CertDir,
		"--embedded-etcd-client-url", s.Backend().Endpoints()[0])
	if code != 0 {
		t.Fatalf("snapshot save: exit %d: %s", code, errOut)
	}
	return out
}

func newClient(t *testing.T, host string) *client.Client {
	t.Helper()
	c, err := client.New(&client.Config{Host: host, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func createConfigMaps(ctx context.Context, t *testing.T, c *client.Client, ns string, names ...string) {
	t.Helper()
	cms := client.Resource[api.ConfigMap](c).Namespace(ns)
	for _, n := range names {
		if _, err := cms.Create(ctx, &api.ConfigMap{ObjectMeta: api.ObjectMeta{Name: n}, Data: map[string]string{"k": n}}); err != nil {
			t.Fatalf("create configmap %s: %v", n, err)
		}
	}
}

// versions maps the names of ns's config maps to their resourceVersions.
func versions(ctx context.Context, t *testing.T, c *client.Client, ns string) (map[string]string, string) {
	t.Helper()
	l, err := client.Resource[api.ConfigMap](c).Namespace(ns).List(ctx, client.ListOptions{})
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	m := map[string]string{}
	for _, cm := range l.Items {
		m[cm.Name] = cm.ResourceVersion
	}
	return m, l.ResourceVersion
}

// switchingProxy forwards to one apiserver, then another: the same
// address for clients across a restore.
type switchingProxy struct {
	target atomic.Pointer[url.URL]
	srv    *httptest.Server
}

func newSwitchingProxy(t *testing.T, target string) *switchingProxy {
	p := &switchingProxy{}
	p.set(t, target)
	rp := &httputil.ReverseProxy{
		Rewrite:       func(r *httputil.ProxyRequest) { r.SetURL(p.target.Load()) },
		FlushInterval: -1, // watch events as they come
		ErrorLog:      nil,
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
			http.Error(w, err.Error(), http.StatusBadGateway)
		},
	}
	p.srv = httptest.NewServer(rp)
	t.Cleanup(p.srv.Close)
	return p
}

func (p *switchingProxy) set(t *testing.T, target string) {
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	p.target.Store(u)
}

// TestSaveRestore saves a running apiserver's etcd with the command line,
// changes objects after the snapshot, stops the server, restores the file
// into a new data dir and starts an apiserver on it: every object of the
// snapshot is back with its resourceVersion, the later changes are gone, a
// watch from a resourceVersion a client held before gets 410 Gone, and an
// informer that ran across the restore relists to the restored state.
func TestSaveRestore(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s1 := apiservertest.Start(t)
	proxy := newSwitchingProxy(t, s1.URL())
	c1 := newClient(t, s1.URL())
	if _, err := client.Resource[api.Namespace](c1).Create(ctx, &api.Namespace{ObjectMeta: api.ObjectMeta{Name: "snap"}}); err != nil {
		t.Fatal(err)
	}
	createConfigMaps(ctx, t, c1, "snap", "a", "b", "c")

	// An informer through the proxy, as a controller would run.
	factory := informer.NewFactory(newClient(t, proxy.srv.URL), informer.FactoryOptions{Logger: slog.New(slog.DiscardHandler)})
	inf := informer.Shared[api.ConfigMap](factory, "snap", client.ListOptions{})
	var deletes atomic.Int32
	inf.AddEventHandler(informer.Handler[api.ConfigMap]{OnDelete: func(*api.ConfigMap, bool) { deletes.Add(1) }})
	infCtx, infCancel := context.WithCancel(ctx)
	defer infCancel()
	factory.Start(infCtx)
	if !factory.WaitForCacheSync(ctx) {
		t.Fatal("informer did not sync")
	}

	want, _ := versions(ctx, t, c1, "snap")
	file := filepath.Join(t.TempDir(), "etcd.db")
	out := save(t, s1, file)
	for _, w := range []string{"Snapshot saved at " + file, "HASH", "REVISION", "TOTAL KEYS", "TOTAL SIZE"} {
		if !strings.Contains(out, w) {
			t.Errorf("snapshot save printed %q, want %q in it", out, w)
		}
	}
	if entries, _ := os.ReadDir(filepath.Dir(file)); len(entries) != 1 {
		t.Errorf("snapshot dir holds %d files, want only the snapshot (no temporary file left)", len(entries))
	}

	// After the snapshot: one more, one fewer, one changed.
	createConfigMaps(ctx, t, c1, "snap", "d")
	if err := client.Resource[api.ConfigMap](c1).Namespace("snap").Delete(ctx, "a", nil); err != nil {
		t.Fatal(err)
	}
	later, clientRV := versions(ctx, t, c1, "snap")
	waitFor(ctx, t, "the informer to see d and a's deletion", func() bool {
		return sameKeys(cached(inf), later)
	})
	s1.Shutdown()

	dataDir := filepath.Join(t.TempDir(), "etcd")
	code, out, errOut := run("snapshot", "restore", file, "--data-dir", dataDir)
	if code != 0 {
		t.Fatalf("snapshot restore: exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "compacted") {
		t.Errorf("restore printed %q", out)
	}
	opts := s1.Options
	opts.DataDir = dataDir
	s2 := apiservertest.StartWith(t, opts)
	c2 := newClient(t, s2.URL())
	got, _ := versions(ctx, t, c2, "snap")
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("restored config maps (name: resourceVersion) %v, want the snapshot's %v", got, want)
	}

	// A client resuming from what it held before the restore relists.
	if err := watchError(ctx, c2, "snap", clientRV); !apierrors.IsGone(err) {
		t.Errorf("watch from the pre-restore resourceVersion %s: %v, want 410 Gone", clientRV, err)
	}

	proxy.set(t, s2.URL())
	before := deletes.Load()
	waitFor(ctx, t, "the informer to relist the restored state", func() bool {
		return sameVersions(cached(inf), want)
	})
	if deletes.Load() == before {
		t.Error("the informer's relist did not report d deleted")
	}
}

// watchError is what a watch from rv answers: its refusal, or the status
// of an ERROR event (nil if it streams otherwise for 5 seconds).
func watchError(ctx context.Context, c *client.Client, ns, rv string) error {
	w, err := client.Resource[api.ConfigMap](c).Namespace(ns).Watch(ctx, client.ListOptions{ResourceVersion: rv})
	if err != nil {
		return err
	}
	defer w.Stop()
	select {
	case ev, ok := <-w.ResultChan():
		if ok && ev.Type == "ERROR" && ev.Status != nil {
			return apierrors.FromStatus(*ev.Status)
		}
		return fmt.Errorf("watch gave a %s event", ev.Type)
	case <-time.After(5 * time.Second):
		return nil
	}
}

func cached(inf *informer.Informer[api.ConfigMap]) map[string]string {
	m := map[string]string{}
	for _, cm := range inf.Store().List() {
		m[cm.Name] = cm.ResourceVersion
	}
	return m
}

func sameKeys(a, b map[string]string) bool {
	ka, kb := keys(a), keys(b)
	return slices.Equal(ka, kb)
}

func sameVersions(a, b map[string]string) bool { return fmt.Sprint(a) == fmt.Sprint(b) }

func keys(m map[string]string) []string {
	var k []string
	for n := range m {
		k = append(k, n)
	}
	slices.Sort(k)
	return k
}

func waitFor(ctx context.Context, t *testing.T, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s", what)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// TestRestoreRefuses checks that a truncated or altered snapshot, and a
// data dir that is not empty, are refused with one line and exit 1, and
// that the data dir is left as it was.
func TestRestoreRefuses(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s := apiservertest.Start(t)
	createConfigMaps(ctx, t, newClient(t, s.URL()), "default", "x")
	dir := t.TempDir()
	good := filepath.Join(dir, "good.db")
	save(t, s, good)
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	truncated := filepath.Join(dir, "truncated.db")
	if err := os.WriteFile(truncated, data[:len(data)/2], 0o600); err != nil {
		t.Fatal(err)
	}
	corrupt := filepath.Join(dir, "corrupt.db")
	altered := bytes.Clone(data)
	altered[len(altered)/3] ^= 0xff
	if err := os.WriteFile(corrupt, altered, 0o600); err != nil {
		t.Fatal(err)
	}
	nonEmpty := filepath.Join(dir, "nonempty")
	if err := os.MkdirAll(filepath.Join(nonEmpty, "member"), 0o700); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.Mkdir(empty, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, file, dataDir, want string
	}{
		{"truncated", truncated, filepath.Join(dir, "missing1"), "truncated or not an etcd snapshot"},
		{"corrupt", corrupt, filepath.Join(dir, "missing2"), "sha256 checksum mismatch"},
		{"corrupt into empty dir", corrupt, empty, "sha256 checksum mismatch"},
		{"not empty", good, nonEmpty, "is not empty"},
		{"no such file", filepath.Join(dir, "nope.db"), filepath.Join(dir, "missing3"), "no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := listing(t, tc.dataDir)
			code, _, errOut := run("snapshot", "restore", tc.file, "--data-dir", tc.dataDir)
			if code != daemon.ExitFailure || !strings.Contains(errOut, tc.want) || strings.Count(errOut, "\n") != 1 || !strings.HasPrefix(errOut, "apiserver: ") {
				t.Errorf("exit %d, stderr %q; want exit 1 and one line with %q", code, errOut, tc.want)
			}
			if after := listing(t, tc.dataDir); after != before {
				t.Errorf("data dir changed: %s, was %s", after, before)
			}
		})
	}
	// The same checks back "snapshot status"; the good file passes.
	if code, out, errOut := run("snapshot", "status", good); code != 0 || !strings.Contains(out, "REVISION") {
		t.Errorf("status of a good snapshot: exit %d, %s%s", code, out, errOut)
	}
	if _, err := etcd.VerifySnapshot(corrupt, false); !errors.Is(err, etcd.ErrCorruptSnapshot) {
		t.Errorf("VerifySnapshot(corrupt) = %v, want ErrCorruptSnapshot", err)
	}
	if code, _, _ := run("snapshot", "restore", good); code != daemon.ExitUsage {
		t.Errorf("restore without --data-dir: exit %d, want %d", code, daemon.ExitUsage)
	}
}

// listing describes dir's tree ("missing" when it does not exist).
func listing(t *testing.T, dir string) string {
	t.Helper()
	var names []string
	err := filepath.WalkDir(dir, func(p string, _ os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		names = append(names, p)
		return nil
	})
	if errors.Is(err, os.ErrNotExist) {
		return "missing"
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(names, ",")
}

// TestSaveExternal saves an external etcd named by --etcd-servers (plain
// HTTP here) and refuses several URLs: a snapshot is one member's.
func TestSaveExternal(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b := etcdtest.Start(t)
	for i := range 20 {
		if _, err := b.Client().Put(ctx, fmt.Sprintf("/registry/k%d", i), "v"); err != nil {
			t.Fatal(err)
		}
	}
	file := filepath.Join(t.TempDir(), "ext.db")
	code, out, errOut := run("snapshot", "save", file, "--etcd-servers", b.Endpoints()[0])
	if code != 0 {
		t.Fatalf("save: exit %d: %s", code, errOut)
	}
	st, err := etcd.VerifySnapshot(file, false)
	if err != nil || st.TotalKeys < 20 {
		t.Errorf("saved snapshot: %+v, %v; want >= 20 keys (printed %s)", st, err, out)
	}
	if code, _, errOut := run("snapshot", "save", file+"2", "--etcd-servers", b.Endpoints()[0]+","+b.Endpoints()[0]); code != daemon.ExitUsage {
		t.Errorf("save from two URLs: exit %d (%s), want %d", code, errOut, daemon.ExitUsage)
	}
}

// TestScheduledInAPIServer runs the apiserver's scheduled snapshots
// (--etcd-snapshot-schedule, -retention, -dir) and checks that they are
// whole snapshots of its etcd and that no more than the retention stay.
func TestScheduledInAPIServer(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dir := filepath.Join(t.TempDir(), "snapshots")
	s := apiservertest.Start(t, func(o *app.Options) {
		o.EtcdSnapshotSchedule = "@every 1s"
		o.EtcdSnapshotRetention = 2
		o.EtcdSnapshotDir = dir
	})
	createConfigMaps(ctx, t, newClient(t, s.URL()), "default", "scheduled")
	first := ""
	waitFor(ctx, t, "the first scheduled snapshot removed, 2 kept", func() bool {
		names := snapshotNames(dir)
		if first == "" && len(names) > 0 {
			first = names[0]
		}
		if first == "" || slices.Contains(names, first) || len(names) != 2 {
			return false
		}
		st, err := etcd.VerifySnapshot(filepath.Join(dir, names[1]), false)
		return err == nil && st.Revision > 0
	})
	s.Shutdown()
	if files, _ := os.ReadDir(dir); len(files) != 2 {
		t.Errorf("%d files in the snapshot dir, want the 2 snapshots kept", len(files))
	}
}

// snapshotNames are the scheduled snapshots in dir, oldest first (the
// names end in the same number of digits).
func snapshotNames(dir string) []string {
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), snapshot.Prefix) {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names)
	return names
}
