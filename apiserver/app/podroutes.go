package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"

	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/podroutes"
)

// startPodRoutes keeps, with --pod-routes, a route to every Node's pod CIDR
// via its InternalIP in this process's network namespace: the apiserver of
// the compose cluster runs in a container that is not a node, and without
// them it reaches no pod IP, so a webhook or an APIService whose Service
// selects pods on the pod network is unreachable (the serviceresolver and
// the aggregator dial a ready endpoint). On a kubeadm control-plane node
// the CNI does this. The Nodes are watched through the secure port as the
// cluster administrator, the loopback client kube-apiserver's own
// controllers use.
func (a *APIServer) startPodRoutes(ctx context.Context) error {
	if !a.opts.PodRoutes {
		return nil
	}
	if a.secureListener == nil || a.pki == nil {
		return errors.New("--pod-routes needs the secure port")
	}
	host := "127.0.0.1"
	if ip := a.secureListener.Addr().(*net.TCPAddr).IP; ip != nil && !ip.IsUnspecified() {
		host = ip.String()
	}
	port := a.secureListener.Addr().(*net.TCPAddr).Port
	c, err := client.New(&client.Config{
		Host:      "https://" + net.JoinHostPort(host, strconv.Itoa(port)),
		CAData:    a.pki.CA.CertPEM(),
		CertData:  a.pki.AdminCertPEM,
		KeyData:   a.pki.AdminKeyPEM,
		UserAgent: "kube-apiserver/pod-routes",
	})
	if err != nil {
		return fmt.Errorf("--pod-routes: client: %w", err)
	}
	s := podroutes.New(podroutes.Config{Client: c, Logger: a.log.With("component", "pod-routes")})
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		if err := s.Run(ctx); err != nil && ctx.Err() == nil {
			a.log.Error("pod routes stopped", "err", err)
		}
	}()
	return nil
}
