package clientintegration

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/kubeconfig"
)

// TestKubeconfig reaches the test server through kubeconfig files: one
// written by hand as a user would (YAML, two contexts, the current one
// pointing at the server), and one written by kubeconfig.Write.
func TestKubeconfig(t *testing.T) {
	t.Parallel()
	s := apiservertest.Start(t)
	ctx := testContext(t)
	dir := t.TempDir()

	handWritten := filepath.Join(dir, "config")
	yaml := fmt.Sprintf(`apiVersion: v1
kind: Config
preferences: {}
clusters:
- name: elsewhere
  cluster:
    server: http://127.0.0.1:1
- name: test
  cluster:
    server: %s
users:
- name: dev
  user: {}
contexts:
- name: broken
  context:
    cluster: elsewhere
    user: dev
- name: dev@test
  context:
    cluster: test
    user: dev
    namespace: kube-system
current-context: dev@test
`, s.URL())
	if err := os.WriteFile(handWritten, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	written := filepath.Join(dir, "sub", "admin.conf")
	if err := kubeconfig.Write(written, kubeconfig.NewForCluster(s.URL(), nil, "admin", kubeconfig.AuthInfo{}, "")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path, wantNS string
	}{
		{handWritten, "kube-system"},
		{written, "default"},
	} {
		cfg, err := kubeconfig.LoadDefault(tc.path)
		if err != nil {
			t.Fatalf("load %s: %v", tc.path, err)
		}
		if ns := cfg.Namespace(""); ns != tc.wantNS {
			t.Errorf("%s: namespace %q, want %q", tc.path, ns, tc.wantNS)
		}
		cc, err := cfg.ClientConfig("")
		if err != nil {
			t.Fatalf("%s: client config: %v", tc.path, err)
		}
		if cc.Host != s.URL() {
			t.Errorf("%s: host %q, want %q", tc.path, cc.Host, s.URL())
		}
		c, err := client.New(cc)
		if err != nil {
			t.Fatal(err)
		}
		l, err := client.Resource[api.Namespace](c).List(ctx, client.ListOptions{})
		if err != nil {
			t.Fatalf("%s: list namespaces: %v", tc.path, err)
		}
		var got []string
		for _, ns := range l.Items {
			got = append(got, ns.Name)
			if ns.Status.Phase != api.NamespaceActive {
				t.Errorf("namespace %s phase %q", ns.Name, ns.Status.Phase)
			}
		}
		for _, want := range []string{"default", "kube-system", "kube-public", "kube-node-lease"} {
			if !slices.Contains(got, want) {
				t.Errorf("%s: namespaces %v lack %s", tc.path, got, want)
			}
		}
		// The context's namespace is where namespaced requests go.
		if _, err := client.Resource[api.ConfigMap](c).Namespace(cfg.Namespace("")).Get(ctx, "absent"); !apierrors.IsNotFound(err) {
			t.Errorf("%s: get in the context namespace: %v", tc.path, err)
		}
	}
	// The other context points nowhere: building works, requests fail with
	// a network error, not an API status.
	cfg, err := kubeconfig.Load(handWritten)
	if err != nil {
		t.Fatal(err)
	}
	cc, err := cfg.ClientConfig("broken")
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cc)
	if err != nil {
		t.Fatal(err)
	}
	_, err = client.Resource[api.Namespace](c).List(ctx, client.ListOptions{})
	if err == nil || apierrors.ReasonForError(err) != api.StatusReasonUnknown {
		t.Errorf("list through the broken context: %v", err)
	}
	if _, err := cfg.ClientConfig("missing"); err == nil {
		t.Error("client config of a missing context succeeded")
	}
}
