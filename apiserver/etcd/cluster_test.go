package etcd_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/minik8s/minik8s/apiserver/etcd"
	"github.com/minik8s/minik8s/apiserver/etcd/etcdtest"
	"github.com/minik8s/minik8s/internal/pki"
)

// loopbackHost returns a loopback address of its own for member i (the
// whole 127.0.0.0/8 is loopback on Linux), so the members' peer URLs are
// known before they start and the fixed ports do not clash with another
// process on 127.0.0.1.
func loopbackHost(t *testing.T, i int) string {
	t.Helper()
	base := os.Getpid()%200 + 20
	ip := fmt.Sprintf("127.%d.%d.%d", base, (time.Now().Nanosecond()/1000)%250+1, i+1)
	l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Skipf("loopback address %s is not usable here: %v", ip, err)
	}
	l.Close()
	return ip
}

// memberConfig is member name's embedded etcd with TLS from its own
// certificate directory, whose etcd CA is copied from caDir (what a
// joining control-plane node gets).
func memberConfig(t *testing.T, caDir, name, ip string) etcd.Config {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{pki.EtcdCACertFile, pki.EtcdCAKeyFile} {
		data, err := os.ReadFile(filepath.Join(caDir, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(dir, pki.EtcdDir), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	b, err := pki.EnsureEtcd(dir, pki.EtcdOptions{IPs: []net.IP{net.ParseIP(ip)}})
	if err != nil {
		t.Fatal(err)
	}
	ca := b.Path(pki.EtcdCACertFile)
	return etcd.Config{
		DataDir:         t.TempDir(),
		ListenClientURL: "https://" + ip + ":2379",
		ListenPeerURL:   "https://" + ip + ":2380",
		ServerTLS:       &etcd.TLSFiles{CertFile: b.Path(pki.EtcdServerCertFile), KeyFile: b.Path(pki.EtcdServerKeyFile), ClientCAFile: ca},
		PeerTLS:         &etcd.TLSFiles{CertFile: b.Path(pki.EtcdPeerCertFile), KeyFile: b.Path(pki.EtcdPeerKeyFile), ClientCAFile: ca},
		CAFile:          ca, CertFile: b.Path(pki.APIServerEtcdClientCertFile), KeyFile: b.Path(pki.APIServerEtcdClientKeyFile),
		Cluster: etcd.ClusterConfig{Name: name},
		Logger:  etcdtest.Logger(),
	}
}

func cput(t *testing.T, c *clientv3.Client, k, v string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := c.Put(ctx, k, v); err != nil {
		t.Fatalf("put %s: %v", k, err)
	}
}

func cget(t *testing.T, c *clientv3.Client, k string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := c.Get(ctx, k)
	if err != nil {
		t.Fatalf("get %s: %v", k, err)
	}
	if len(r.Kvs) == 0 {
		return ""
	}
	return string(r.Kvs[0].Value)
}

// TestThreeMemberCluster forms a three-member cluster of embedded servers
// sharing one etcd CA, writes through one member and reads through
// another, stops the leader and keeps writing, adds a fourth member with
// Join (the member add done by Start), and brings the stopped member back
// with a wiped data directory, which Join replaces.
func TestThreeMemberCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("needs embedded etcd servers (skipped with -short)")
	}
	caDir := t.TempDir()
	if _, err := pki.EnsureEtcd(caDir, pki.EtcdOptions{}); err != nil {
		t.Fatal(err)
	}
	names := []string{"m1", "m2", "m3"}
	cfgs := make([]etcd.Config, 3)
	var initial []string
	for i, n := range names {
		ip := loopbackHost(t, i)
		cfgs[i] = memberConfig(t, caDir, n, ip)
		initial = append(initial, n+"=https://"+ip+":2380")
	}
	for i := range cfgs {
		cfgs[i].Cluster.InitialCluster = strings.Join(initial, ",")
	}
	backends := make([]*etcd.Backend, 3)
	errs := make([]error, 3)
	var wg sync.WaitGroup
	for i := range cfgs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			backends[i], errs[i] = etcd.Start(context.Background(), cfgs[i])
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("start %s: %v", names[i], err)
		}
	}
	closed := make([]bool, 4)
	t.Cleanup(func() {
		for i, b := range backends {
			if b != nil && !closed[i] {
				b.Close()
			}
		}
	})
	// Every member's client knows every member's client URL.
	if eps := backends[0].Client().Endpoints(); len(eps) != 3 {
		t.Errorf("member m1's client endpoints = %v, want the 3 members'", eps)
	}
	cput(t, backends[0].Client(), "/k/1", "one")
	if v := cget(t, backends[2].Client(), "/k/1"); v != "one" {
		t.Fatalf("read through m3 = %q, want %q", v, "one")
	}

	// Stop the leader; the other two keep a quorum.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := backends[1].Client().Status(ctx, backends[1].Endpoints()[0])
	if err != nil {
		t.Fatal(err)
	}
	leader := -1
	for i, b := range backends {
		if s, err := b.Client().Status(ctx, b.Endpoints()[0]); err == nil && s.Header.MemberId == st.Leader {
			leader = i
		}
	}
	if leader < 0 {
		t.Fatalf("no member is the leader %x", st.Leader)
	}
	t.Logf("stopping the leader %s", names[leader])
	backends[leader].Close()
	closed[leader] = true
	live := []int{}
	for i := range backends {
		if i != leader {
			live = append(live, i)
		}
	}
	for j := range 20 {
		cput(t, backends[live[j%2]].Client(), fmt.Sprintf("/k/after/%d", j), "v")
	}
	if v := cget(t, backends[live[1]].Client(), "/k/after/18"); v != "v" {
		t.Fatalf("read after the leader stopped = %q", v)
	}

	// The stopped member comes back wiped: Join replaces its old entry
	// (a member add with a member down would be refused: the cluster
	// would lose its quorum).
	cfgs[leader].DataDir = t.TempDir()
	cfgs[leader].Cluster.InitialCluster = ""
	cfgs[leader].Cluster.Join = []string{backends[live[0]].Endpoints()[0]}
	again, err := etcd.Start(context.Background(), cfgs[leader])
	if err != nil {
		t.Fatalf("re-add wiped %s: %v", names[leader], err)
	}
	backends[leader], closed[leader] = again, false
	cput(t, again.Client(), "/k/readded", "yes")
	if v := cget(t, backends[live[0]].Client(), "/k/readded"); v != "yes" {
		t.Fatalf("read of a write through the re-added member = %q", v)
	}
	if v := cget(t, again.Client(), "/k/1"); v != "one" {
		t.Fatalf("the re-added member misses the first write: %q", v)
	}
	ml, err := again.Client().MemberList(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(ml.Members) != 3 {
		t.Fatalf("members after the re-add: %d, want 3 (the old entry replaced)", len(ml.Members))
	}

	// A fourth member joins through a live member's client URL.
	ip4 := loopbackHost(t, 3)
	cfg4 := memberConfig(t, caDir, "m4", ip4)
	cfg4.Cluster.Join = []string{backends[live[1]].Endpoints()[0]}
	b4, err := etcd.Start(context.Background(), cfg4)
	if err != nil {
		t.Fatalf("join m4: %v", err)
	}
	backends = append(backends, b4)
	if v := cget(t, b4.Client(), "/k/after/19"); v != "v" {
		t.Fatalf("read through the joined member = %q", v)
	}
	if ml, err = b4.Client().MemberList(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(ml.Members) != 4 {
		t.Fatalf("members after the join: %d, want 4", len(ml.Members))
	}
	// A machine given a live member's peer URL by mistake does not
	// replace that member: the join refuses, the members stay.
	impostor := cfgs[live[1]]
	impostor.DataDir = t.TempDir()
	impostor.Cluster.InitialCluster = ""
	impostor.Cluster.Join = []string{backends[live[0]].Endpoints()[0]}
	if b, err := etcd.Start(context.Background(), impostor); err == nil || !strings.Contains(err.Error(), "refusing to replace a live member") {
		if b != nil {
			b.Close()
		}
		t.Fatalf("join with the peer URL of live %s: %v, want a refusal", names[live[1]], err)
	}
	if ml, err = b4.Client().MemberList(context.Background()); err != nil || len(ml.Members) != 4 {
		t.Fatalf("members after the refused join: %v %v, want 4", ml, err)
	}
	if v := cget(t, backends[live[1]].Client(), "/k/readded"); v != "yes" {
		t.Fatalf("the live member after the refused join: %q", v)
	}
	// Restarted with its data, a joined member ignores Join.
	b4.Close()
	if b4, err = etcd.Start(context.Background(), cfg4); err != nil {
		t.Fatalf("restart m4: %v", err)
	}
	backends[3] = b4
	if v := cget(t, b4.Client(), "/k/readded"); v != "yes" {
		t.Fatalf("read through the restarted member = %q", v)
	}
}

// TestParseInitialCluster checks the NAME=URL list's errors.
func TestParseInitialCluster(t *testing.T) {
	m, err := etcd.ParseInitialCluster("a=https://10.0.0.1:2380, b=https://b:2380")
	if err != nil || len(m) != 2 || m["b"][0] != "https://b:2380" {
		t.Fatalf("got %v, %v", m, err)
	}
	for _, bad := range []string{"", "a", "=https://x:1", "a=ftp://x:1", "a=https://x"} {
		if _, err := etcd.ParseInitialCluster(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
