package pods

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/informer"
	"github.com/minik8s/minik8s/kubelet/podcertificate"
)

// certSources serve the clusterTrustBundle and podCertificate sources of
// projected volumes: a ClusterTrustBundle informer started at the first
// volume that needs one (as kube's lazy ClusterTrustBundle manager), and
// the pod certificate manager.
type certSources struct {
	mu      sync.Mutex
	bundles *informer.Informer[api.ClusterTrustBundle]
	certs   *podcertificate.Manager
}

// trustBundleSyncWait bounds how long a volume set-up waits for the
// ClusterTrustBundle informer's first list.
const trustBundleSyncWait = 10 * time.Second

func (m *Manager) certSources() (*informer.Informer[api.ClusterTrustBundle], *podcertificate.Manager) {
	s := &m.certs
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.bundles == nil {
		m.mu.Lock()
		ctx := m.ctx
		m.mu.Unlock()
		if ctx == nil {
			ctx = context.Background()
		}
		s.bundles = informer.New[api.ClusterTrustBundle](informer.For[api.ClusterTrustBundle](m.client, "", client.ListOptions{}),
			informer.Options[api.ClusterTrustBundle]{Logger: m.log})
		go s.bundles.Run(ctx)
		s.certs = podcertificate.NewManager(podCertificateClient{m}, m.rec, m.log)
	}
	return s.bundles, s.certs
}

// trustBundles returns the synced ClusterTrustBundle informer.
func (m *Manager) trustBundles(ctx context.Context) (*informer.Informer[api.ClusterTrustBundle], error) {
	inf, _ := m.certSources()
	deadline := time.Now().Add(trustBundleSyncWait)
	for !inf.HasSynced() {
		if time.Now().After(deadline) {
			return nil, errors.New("ClusterTrustBundle informer has not yet synced")
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return inf, nil
}

func (g volumeGetter) ClusterTrustBundle(ctx context.Context, name string) (*api.ClusterTrustBundle, error) {
	inf, err := g.m.trustBundles(ctx)
	if err != nil {
		return nil, err
	}
	return inf.Lister().Get(name)
}

func (g volumeGetter) ClusterTrustBundles(ctx context.Context) ([]*api.ClusterTrustBundle, error) {
	inf, err := g.m.trustBundles(ctx)
	if err != nil {
		return nil, err
	}
	return inf.Store().List(), nil
}

func (g volumeGetter) PodCertificate(ctx context.Context, pod *api.Pod, volume string, index int, src *api.PodCertificateProjection) ([]byte, []byte, error) {
	_, certs := g.m.certSources()
	return certs.PodCertificate(ctx, pod, volume, index, src)
}

// forgetCertificates drops the pod certificates of a pod that is gone.
func (m *Manager) forgetCertificates(uid string) {
	s := &m.certs
	s.mu.Lock()
	certs := s.certs
	s.mu.Unlock()
	if certs != nil {
		certs.Forget(api.UID(uid))
	}
}

// podCertificateClient is the pod certificate manager's apiserver: the
// kubelet's client, and its Node from the informer.
type podCertificateClient struct{ m *Manager }

var _ podcertificate.Client = podCertificateClient{}

func (c podCertificateClient) ServiceAccount(ctx context.Context, ns, name string) (*api.ServiceAccount, error) {
	return client.Resource[api.ServiceAccount](c.m.client).Namespace(ns).Get(ctx, name)
}

func (c podCertificateClient) Node(ctx context.Context) (*api.Node, error) {
	if c.m.nodes != nil {
		if n, err := c.m.nodes.Lister().Get(c.m.opts.NodeName); err == nil {
			return n, nil
		}
	}
	return client.Resource[api.Node](c.m.client).Get(ctx, c.m.opts.NodeName)
}

func (c podCertificateClient) CreateRequest(ctx context.Context, req *api.PodCertificateRequest) (*api.PodCertificateRequest, error) {
	return client.Resource[api.PodCertificateRequest](c.m.client).Namespace(req.Namespace).Create(ctx, req)
}

func (c podCertificateClient) Request(ctx context.Context, ns, name string) (*api.PodCertificateRequest, error) {
	return client.Resource[api.PodCertificateRequest](c.m.client).Namespace(ns).Get(ctx, name)
}
