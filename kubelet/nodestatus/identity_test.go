package nodestatus_test

import (
	"context"
	"errors"
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/kubeconfig"
	"github.com/minik8s/minik8s/internal/pki"
	"github.com/minik8s/minik8s/kubelet/bootstrap"
	"github.com/minik8s/minik8s/kubelet/nodestatus"
)

// TestAsNodeIdentity runs the node side as a joined kubelet does: with the
// system:node:NAME certificate from the bootstrap join, over TLS, so the
// Node authorizer and NodeRestriction admission check every write.
func TestAsNodeIdentity(t *testing.T) {
	s := apiservertest.Start(t, apiservertest.WithTLS)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	kc, err := kubeconfig.Load(s.Options.WriteKubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	acc, err := kc.ClientConfig("")
	if err != nil {
		t.Fatal(err)
	}
	admin, err := client.New(acc)
	if err != nil {
		t.Fatal(err)
	}
	id, secret := pki.GenerateBootstrapToken()
	sec, _ := pki.BootstrapTokenSecret(id, secret, time.Hour, []string{pki.BootstrapDefaultNodeGroup}, time.Now())
	if _, err := client.Resource[api.Secret](admin).Namespace("kube-system").Create(ctx, sec); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	j, err := bootstrap.LoadOrJoin(ctx, bootstrap.Config{Kubeconfig: filepath.Join(root, "kubelet.kubeconfig"), RootDir: root,
		NodeName: "worker-1", Server: s.SecureURL(), Token: id + "." + secret, CACertHash: s.PKI().CA.Hash(), Logger: apiservertest.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	j.Client.QPS = -1
	c, err := client.New(j.Client)
	if err != nil {
		t.Fatal(err)
	}
	// The node's Node exists already (a re-join after a reinstall), with a
	// podCIDR from nodeipam.
	pre := &api.Node{ObjectMeta: api.ObjectMeta{Name: "worker-1", Labels: map[string]string{"kubernetes.io/hostname": "old"}},
		Spec: api.NodeSpec{PodCIDR: "10.244.7.0/24", PodCIDRs: []string{"10.244.7.0/24"}}}
	if _, err := client.Resource[api.Node](admin).Create(ctx, pre); err != nil {
		t.Fatal(err)
	}
	m := start(t, ctx, nodestatus.Config{
		Client: c, NodeName: "worker-1", NodeIP: net.ParseIP("127.0.0.1"), Labels: map[string]string{"node.kubernetes.io/pool": "blue"},
		RootDir: root, RuntimeVersion: func() (string, error) { return "containerd://1.6.20", nil }, Logger: apiservertest.Logger(),
		LeaseRenewInterval: 200 * time.Millisecond, StatusUpdateFrequency: 100 * time.Millisecond,
	})
	n, err := m.WaitForNode(ctx, func(n *api.Node) bool {
		return n.Labels["kubernetes.io/hostname"] == "worker-1" && len(n.Status.Conditions) > 0
	})
	if err != nil {
		t.Fatal(err)
	}
	if n.Spec.PodCIDR != "10.244.7.0/24" {
		t.Errorf("podCIDR lost: %+v", n.Spec)
	}
	leases := client.Resource[api.Lease](admin).Namespace("kube-node-lease")
	var first time.Time
	poll(t, ctx, "lease as the node", func() error {
		l, err := leases.Get(ctx, "worker-1")
		if err != nil {
			return err
		}
		if first.IsZero() {
			first = l.Spec.RenewTime.Time
			return errors.New("wait for a renewal")
		}
		if !l.Spec.RenewTime.After(first) {
			return errors.New("renewTime has not advanced")
		}
		return nil
	})
}
