package integration

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/apiserver/app"
	"github.com/minik8s/minik8s/apiserver/etcd"
)

// TestHealthChecksProbeEtcd runs an apiserver on an etcd of its own and
// stops that etcd: /livez/etcd, /readyz/etcd and /readyz/etcd-readiness
// answer "ok" while it serves and 500 once it is gone, /readyz and
// /healthz fail with [-]etcd (as kube-apiserver's, whose etcd check reads
// PREFIX/health with a 2 s timeout), and /livez/ping still answers. The
// single checks need kube's system:monitoring (RBAC grants /livez/* and
// the like there only): a user outside it gets 403 on them and 200 on
// /livez, one in it gets the check's answer.
func TestHealthChecksProbeEtcd(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	ext, err := etcd.Start(context.Background(), etcd.Config{DataDir: t.TempDir(), Logger: apiservertest.Logger()})
	if err != nil {
		t.Fatalf("start etcd: %v", err)
	}
	t.Cleanup(func() { _ = ext.Close() })
	s := apiservertest.Start(t, func(o *app.Options) {
		o.EtcdServers, o.DataDir = ext.Endpoints(), ""
		// Its shutdown would wait for etcd to take its lease away.
		o.EndpointReconcilerType = app.NoneEndpointReconciler
	})
	c := newClient(t, s)
	for _, p := range []string{"/livez/etcd", "/readyz/etcd", "/readyz/etcd-readiness", "/healthz/etcd", "/livez/ping"} {
		if r := c.do("GET", p, nil, ""); r.Code != 200 || string(r.Body) != "ok" {
			t.Fatalf("GET %s with etcd up: %d %q", p, r.Code, r.Body)
		}
	}
	for _, tc := range []struct {
		path   string
		groups []string
		want   int
	}{
		{"/livez", nil, 200},
		{"/readyz", nil, 200},
		{"/healthz", nil, 200},
		{"/livez/etcd", nil, 403},
		{"/readyz/etcd", nil, 403},
		{"/healthz/etcd", nil, 403},
		{"/livez/ping", nil, 403},
		{"/livez/etcd", []string{"system:monitoring"}, 200},
		{"/readyz/etcd-readiness", []string{"system:monitoring"}, 200},
		{"/healthz/etcd", []string{"system:monitoring"}, 200},
	} {
		if code := c.doAs("watcher", tc.groups, tc.path); code != tc.want {
			t.Errorf("GET %s as watcher in %v: %d, want %d", tc.path, tc.groups, code, tc.want)
		}
	}
	r := c.do("GET", "/readyz?verbose", nil, "")
	if r.Code != 200 || !strings.Contains(string(r.Body), "[+]etcd ok\n") || !strings.Contains(string(r.Body), "[+]etcd-readiness ok\n") {
		t.Fatalf("GET /readyz?verbose with etcd up: %d %s", r.Code, r.Body)
	}

	if err := ext.Close(); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	var got response
	for time.Since(stopped) < 15*time.Second {
		if got = c.do("GET", "/livez/etcd", nil, ""); got.Code == 500 {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if got.Code != 500 || !strings.HasPrefix(string(got.Body), "internal server error: error getting data from etcd") {
		t.Fatalf("GET /livez/etcd with etcd stopped: %d %q", got.Code, got.Body)
	}
	t.Logf("/livez/etcd failed %v after etcd stopped: %s", time.Since(stopped).Round(time.Millisecond), strings.TrimSpace(string(got.Body)))
	for _, p := range []string{"/readyz/etcd", "/readyz/etcd-readiness", "/healthz/etcd"} {
		if r := c.do("GET", p, nil, ""); r.Code != 500 {
			t.Errorf("GET %s with etcd stopped: %d %q", p, r.Code, r.Body)
		}
	}
	r = c.do("GET", "/readyz?verbose", nil, "")
	if r.Code != 500 || !strings.Contains(string(r.Body), "[-]etcd failed: reason withheld\n") ||
		!strings.Contains(string(r.Body), "[-]etcd-readiness failed: reason withheld\n") || !strings.HasSuffix(string(r.Body), "readyz check failed\n") {
		t.Errorf("GET /readyz?verbose with etcd stopped: %d %s", r.Code, r.Body)
	}
	if r := c.do("GET", "/livez/ping", nil, ""); r.Code != 200 {
		t.Errorf("GET /livez/ping with etcd stopped: %d %q", r.Code, r.Body)
	}
}

// doAs GETs path as user in groups (impersonated by the admin client) and
// returns the status code.
func (c *tclient) doAs(user string, groups []string, path string) int {
	c.t.Helper()
	req, err := http.NewRequest("GET", c.base+path, nil)
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Impersonate-User", user)
	for _, g := range groups {
		req.Header.Add("Impersonate-Group", g)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		c.t.Fatalf("GET %s as %s: %v", path, user, err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}
