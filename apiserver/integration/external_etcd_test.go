package integration

import (
	"context"
	"strconv"
	"testing"

	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/apiserver/app"
	"github.com/minik8s/minik8s/apiserver/etcd"
)

// TestExternalEtcd runs an etcd server of its own, points an apiserver at it
// with --etcd-servers, and checks the objects live in that etcd under
// /registry/RESOURCE/NAMESPACE/NAME with resourceVersion = mod revision.
func TestExternalEtcd(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("integration test")
	}
	ctx := context.Background()
	ext, err := etcd.Start(ctx, etcd.Config{DataDir: t.TempDir(), Logger: apiservertest.Logger()})
	if err != nil {
		t.Fatalf("start etcd: %v", err)
	}
	t.Cleanup(func() { _ = ext.Close() })
	s := apiservertest.Start(t, func(o *app.Options) { o.EtcdServers = ext.Endpoints(); o.DataDir = "" })
	if s.Backend().Embedded() {
		t.Fatal("apiserver started an embedded etcd despite --etcd-servers")
	}
	c := newClient(t, s)
	o := c.must(201, "POST", cms, configMap("ext", nil, map[string]string{"a": "b"}))
	resp, err := ext.Client().Get(ctx, "/registry/configmaps/default/ext")
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("key not in external etcd: %v %v", err, resp)
	}
	if got := resp.Kvs[0].ModRevision; rv(o) != strconv.FormatInt(got, 10) {
		t.Fatalf("resourceVersion %s, etcd mod revision %d", rv(o), got)
	}
}
