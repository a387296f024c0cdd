package integration

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/apiserver/app"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/pki"
)

// haLoopback is a loopback address of its own per member (all of
// 127.0.0.0/8 is loopback on Linux), so the members' etcd peer URLs are
// known before they start; skips where it cannot be bound.
func haLoopback(t *testing.T, i int) string {
	t.Helper()
	ip := fmt.Sprintf("127.%d.%d.%d", os.Getpid()%200+20, time.Now().Nanosecond()/1000%250+1, i+1)
	l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Skipf("loopback address %s is not usable here: %v", ip, err)
	}
	l.Close()
	return ip
}

// TestHAControlPlane runs three apiservers, each with an embedded etcd
// member of one cluster (stacked as kubeadm stacks etcd), sharing their
// CAs through --shared-cert-dir: a write through one is read through
// another, a watch through the member that is stopped resumes through
// another without a gap, and writes go on with one member down.
func TestHAControlPlane(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: needs embedded etcd (skipped with -short)")
	}
	shared := t.TempDir()
	names := []string{"cp-1", "cp-2", "cp-3"}
	ips := make([]string, 3)
	var initial []string
	for i, n := range names {
		ips[i] = haLoopback(t, i)
		initial = append(initial, n+"=https://"+ips[i]+":2380")
	}
	opts := make([]app.Options, 3)
	for i := range opts {
		o := apiservertest.Options(t.TempDir())
		apiservertest.WithTLS(&o)
		o.SharedCertDir = shared
		o.EtcdClientURL = "https://" + ips[i] + ":2379"
		o.EtcdPeerURL = "https://" + ips[i] + ":2380"
		o.EtcdCluster = app.EmbeddedEtcdCluster{Name: names[i], InitialCluster: strings.Join(initial, ",")}
		if err := o.Validate(); err != nil {
			t.Fatalf("options of %s: %v", names[i], err)
		}
		opts[i] = o
	}
	servers := make([]*app.APIServer, 3)
	cancels := make([]context.CancelFunc, 3)
	errs := make([]error, 3)
	var wg sync.WaitGroup
	for i := range opts {
		var ctx context.Context
		ctx, cancels[i] = context.WithCancel(context.Background())
		servers[i] = app.New(opts[i], opts[i].SecureListener, apiservertest.Logger())
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = servers[i].Start(ctx)
		}()
	}
	wg.Wait()
	stopped := make([]bool, 3)
	stop := func(i int) {
		if !stopped[i] {
			stopped[i] = true
			cancels[i]()
			servers[i].Wait()
		}
	}
	t.Cleanup(func() {
		for i := range servers {
			stop(i)
		}
	})
	for i, err := range errs {
		if err != nil {
			t.Fatalf("start %s: %v", names[i], err)
		}
	}
	// One cluster CA: every member's copy is the first one's.
	ca0, _ := os.ReadFile(filepath.Join(opts[0].CertDir, pki.CACertFile))
	for i := 1; i < 3; i++ {
		ca, _ := os.ReadFile(filepath.Join(opts[i].CertDir, pki.CACertFile))
		if len(ca0) == 0 || !bytes.Equal(ca, ca0) {
			t.Fatalf("%s's ca.crt differs from %s's", names[i], names[0])
		}
	}
	clients := make([]*client.Client, 3)
	for i := range servers {
		clients[i] = (&apiservertest.Server{APIServer: servers[i], Options: opts[i]}).AdminClient(t)
	}
	cms := func(i int) *client.ResourceClient[api.ConfigMap, *api.ConfigMap] {
		return client.Resource[api.ConfigMap](clients[i]).Namespace("default")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	create := func(i int, name string) string {
		t.Helper()
		var err error
		for try := 0; try < 20; try++ {
			var cm *api.ConfigMap
			cm, err = cms(i).Create(ctx, &api.ConfigMap{ObjectMeta: api.ObjectMeta{Name: name}, Data: map[string]string{"k": name}})
			if err == nil {
				return cm.ResourceVersion
			}
			time.Sleep(250 * time.Millisecond)
		}
		t.Fatalf("create %s through %s: %v", name, names[i], err)
		return ""
	}
	rv0 := create(0, "first")
	if cm, err := cms(2).Get(ctx, "first"); err != nil || cm.Data["k"] != "first" {
		t.Fatalf("read through %s of a write through %s: %v %v", names[2], names[0], cm, err)
	}

	// The etcd leader's apiserver is the one stopped.
	leader := -1
	st, err := servers[1].Backend().Client().Status(ctx, servers[1].Backend().Endpoints()[0])
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range servers {
		if s2, err := s.Backend().Client().Status(ctx, s.Backend().Endpoints()[0]); err == nil && s2.Header.MemberId == st.Leader {
			leader = i
		}
	}
	if leader < 0 {
		t.Fatalf("no member is the etcd leader %x", st.Leader)
	}
	others := []int{(leader + 1) % 3, (leader + 2) % 3}
	t.Logf("etcd leader: %s", names[leader])

	w, err := cms(leader).Watch(ctx, client.ListOptions{ResourceVersion: rv0})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	lastRV := rv0
	want := map[string]bool{}
	for j := range 5 {
		want[create(leader, fmt.Sprintf("before-%d", j))] = true
	}
	for len(seen) < 5 {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("watch through %s ended early", names[leader])
			}
			seen[ev.Object.ResourceVersion] = true
			lastRV = ev.Object.ResourceVersion
		case <-ctx.Done():
			t.Fatal("watch: no event")
		}
	}
	stop(leader)
	w.Stop()

	// Writes go on through the two others, the watch resumes through one
	// of them after the last version seen.
	for j := range 10 {
		want[create(others[j%2], fmt.Sprintf("after-%d", j))] = true
	}
	w2, err := cms(others[0]).Watch(ctx, client.ListOptions{ResourceVersion: lastRV})
	if err != nil {
		t.Fatalf("resume the watch through %s: %v", names[others[0]], err)
	}
	defer w2.Stop()
	for len(seen) < len(want) {
		select {
		case ev, ok := <-w2.ResultChan():
			if !ok {
				t.Fatalf("resumed watch ended")
			}
			if ev.Type != "ADDED" {
				t.Fatalf("resumed watch: %s event %+v", ev.Type, ev.Status)
			}
			seen[ev.Object.ResourceVersion] = true
		case <-ctx.Done():
			t.Fatalf("resumed watch: saw %d of %d versions", len(seen), len(want))
		}
	}
	for rv := range want {
		if !seen[rv] {
			t.Errorf("resourceVersion %s was acknowledged but never watched", rv)
		}
	}
	list, err := cms(others[1]).List(ctx, client.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(list.Items); n != 16 {
		t.Errorf("list through %s: %d configmaps, want 16", names[others[1]], n)
	}
	// Versions are etcd revisions, one sequence across members.
	if a, _ := strconv.ParseInt(lastRV, 10, 64); a <= 0 {
		t.Errorf("last resourceVersion %q", lastRV)
	}
}
