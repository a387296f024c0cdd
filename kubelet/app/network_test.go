package app

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/kubeconfig"
)

// TestProxyKubeconfig: the pod routes list every Node, which the Node
// authorizer refuses the kubelet's own credentials; --proxy-kubeconfig
// (kube-proxy's, system:kube-proxy, written by the apiserver) may. A bad
// file is refused at start, naming the flag.
func TestProxyKubeconfig(t *testing.T) {
	t.Parallel()
	bad := DefaultNetworkOptions()
	bad.Kubeconfig = filepath.Join(t.TempDir(), "missing")
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "--proxy-kubeconfig") {
		t.Errorf("missing --proxy-kubeconfig file: %v", err)
	}

	s := apiservertest.Start(t, apiservertest.WithTLS)
	write := func(user string, groups ...string) string {
		t.Helper()
		certPEM, keyPEM, err := s.PKI().CA.IssueClient(user, groups, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "kubeconfig")
		cfg := kubeconfig.NewForCluster(s.SecureURL(), s.PKI().CA.CertPEM(), user, kubeconfig.AuthInfo{ClientCertificateData: certPEM, ClientKeyData: keyPEM}, "")
		if err := kubeconfig.Write(path, cfg); err != nil {
			t.Fatal(err)
		}
		return path
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	listNodes := func(path string) error {
		o := DefaultNetworkOptions()
		o.Kubeconfig = path
		if err := o.Validate(); err != nil {
			t.Fatal(err)
		}
		c, err := o.client()
		if err != nil {
			t.Fatal(err)
		}
		_, err = client.Resource[api.Node](c).List(ctx, client.ListOptions{})
		return err
	}
	// The kubeconfig the apiserver writes for kube-proxy, which compose's
	// bootstrap hands the nodes.
	if err := listNodes(s.PKI().Path("kube-proxy.kubeconfig")); err != nil {
		t.Errorf("kube-proxy lists nodes: %v", err)
	}
	if err := listNodes(write("system:node:n1", "system:nodes")); !apierrors.IsForbidden(err) {
		t.Errorf("a node lists nodes: %v, want forbidden", err)
	}
}
