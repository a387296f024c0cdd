package app

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/pflag"
)

// TestRunFirewall: the NetworkPolicy enforcer runs beside the service
// proxy by default (--run-firewall, kube-router's flag), and with the
// credentials the apiserver writes for kube-proxy it may read what it
// watches: every Pod, Namespace and NetworkPolicy.
func TestRunFirewall(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "network policy"},
		{[]string{"--run-firewall=false"}, "network policy cleanup"},
	} {
		o := DefaultNetworkOptions()
		fs := pflag.NewFlagSet("proxy", pflag.ContinueOnError)
		o.AddFlags(fs)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		o.ProxyMode, o.PodRoutes = "none", false
		runners, err := o.networkRunners(nil, "node-a", prometheus.NewRegistry(), slog.Default())
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := runners[tc.want]; !ok || len(runners) != 1 {
			t.Errorf("%v: runners %v, want only %q", tc.args, keys(runners), tc.want)
		}
	}

	s := apiservertest.Start(t, apiservertest.WithTLS)
	o := DefaultNetworkOptions()
	o.Kubeconfig = s.PKI().Path("kube-proxy.kubeconfig")
	c, err := o.client()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := client.Resource[api.NetworkPolicy](c).List(ctx, client.ListOptions{}); err != nil {
		t.Errorf("kube-proxy lists network policies: %v", err)
	}
	if _, err := client.Resource[api.Namespace](c).List(ctx, client.ListOptions{}); err != nil {
		t.Errorf("kube-proxy lists namespaces: %v", err)
	}
	if _, err := client.Resource[api.Pod](c).List(ctx, client.ListOptions{}); err != nil {
		t.Errorf("kube-proxy lists pods: %v", err)
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
