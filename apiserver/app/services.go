package app

import (
	"context"
	"errors"
	"net"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/apiserver/registry"
	"github.com/minik8s/minik8s/apiserver/servicealloc"
)

// startServiceControllers runs the allocation repair and the "kubernetes"
// Service reconciler. The Service's target port is the secure port (the
// plain-HTTP port when only that one serves, as in tests).
func (a *APIServer) startServiceControllers(ctx context.Context, alloc *servicealloc.Allocator) {
	l := a.secureListener
	if l == nil {
		l = a.listener
	}
	port := l.Addr().(*net.TCPAddr).Port
	a.wg.Add(2)
	go func() {
		defer a.wg.Done()
		a.runServiceRepair(ctx, alloc)
	}()
	go func() {
		defer a.wg.Done()
		a.runKubernetesService(ctx, alloc, port)
	}()
}

// repairInterval is how often ClusterIP and NodePort allocations are
// reconciled with the Services that exist (kube-apiserver: 3 minutes).
const repairInterval = 3 * time.Minute

// runServiceRepair frees allocations of Services that no longer exist and
// restores missing ones, at start and every repairInterval.
func (a *APIServer) runServiceRepair(ctx context.Context, alloc *servicealloc.Allocator) {
	svcs := a.Store("", "services")
	t := time.NewTicker(repairInterval)
	defer t.Stop()
	for {
		list, err := svcs.List(ctx, "", registry.ListOptions{})
		if err == nil {
			var held []servicealloc.Held
			for _, it := range list.Items {
				s := it.Object.(*api.Service)
				h := servicealloc.Held{Owner: servicealloc.Owner{Namespace: s.Namespace, Name: s.Name, UID: string(s.UID)}}
				if s.Spec.Type != api.ServiceTypeExternalName && s.Spec.ClusterIP != "" && s.Spec.ClusterIP != api.ClusterIPNone {
					h.IPs = append(h.IPs, s.Spec.ClusterIP)
				}
				h.Ports = registry.HeldPorts(s)
				held = append(held, h)
			}
			res, rerr := alloc.Repair(ctx, held, time.Minute)
			if rerr != nil {
				err = rerr
			} else if res.Freed > 0 || res.Restored > 0 {
				a.log.Info("repaired service allocations", "freed", res.Freed, "restored", res.Restored)
			}
		}
		if err != nil && ctx.Err() == nil {
			a.log.Warn("service allocation repair failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// runKubernetesService keeps default/kubernetes (ClusterIP = the range's
// first address, port 443 → the secure port) in place and, through the
// endpoint reconciler, its Endpoints and EndpointSlice (the addresses of
// the live apiservers), as kube-apiserver's kubernetesservice controller:
// at start it removes a lease this address may have left behind, and on
// shutdown it removes its lease and its address.
func (a *APIServer) runKubernetesService(ctx context.Context, alloc *servicealloc.Allocator, port int) {
	interval := a.opts.EndpointReconcilerInterval
	if interval <= 0 {
		interval = defaultEndpointReconcilerInterval
	}
	rec := a.newEndpointReconciler()
	ip := a.endpointAddress()
	ports := []api.EndpointPort{{Name: "https", Port: int32(port), Protocol: api.ProtocolTCP}}
	if ip != "" {
		switch err := rec.remove(ctx, ip, ports, false); {
		case err == nil:
			a.log.Info("found stale data, removed previous endpoints on kubernetes service, apiserver didn't exit successfully previously")
		case !errors.Is(err, errLeaseNotFound):
			a.log.Warn("could not remove old endpoints from the kubernetes service", "err", err)
		}
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if err := a.ensureKubernetesService(ctx, alloc.FirstIP().String(), port); err != nil && ctx.Err() == nil {
			a.log.Warn("could not reconcile the kubernetes service", "err", err)
		}
		if ip != "" {
			if err := rec.reconcile(ctx, ip, ports, false); err != nil && ctx.Err() == nil {
				a.log.Warn("could not reconcile the kubernetes service endpoints", "err", err)
			}
		}
		select {
		case <-ctx.Done():
			if ip != "" {
				// Bounded as kube-apiserver bounds it: an unreachable etcd
				// does not hold the shutdown.
				rctx, cancel := context.WithTimeout(context.Background(), 2*interval)
				err := rec.remove(rctx, ip, ports, true)
				cancel()
				if err != nil && !errors.Is(err, errLeaseNotFound) {
					a.log.Warn("unable to remove endpoints from the kubernetes service", "err", err)
				}
			}
			return
		case <-t.C:
		}
	}
}

// ensureKubernetesService creates default/kubernetes, and puts its port
// back if someone changed it.
func (a *APIServer) ensureKubernetesService(ctx context.Context, clusterIP string, port int) error {
	svcs := a.Store("", "services")
	want := &api.Service{
		ObjectMeta: api.ObjectMeta{Name: "kubernetes", Namespace: api.NamespaceDefault,
			Labels: map[string]string{"component": "apiserver", "provider": "kubernetes"}},
		Spec: api.ServiceSpec{
			ClusterIP: clusterIP,
			Ports:     []api.ServicePort{{Name: "https", Port: 443, Protocol: api.ProtocolTCP, TargetPort: api.FromInt(int32(port))}},
		},
	}
	cur, err := svcs.Get(ctx, api.NamespaceDefault, "kubernetes")
	switch {
	case apierrors.IsNotFound(err):
		if _, err := svcs.Create(ctx, api.NamespaceDefault, want, registry.WriteOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	case err != nil:
		return err
	default:
		s := cur.(*api.Service)
		if len(s.Spec.Ports) != 1 || s.Spec.Ports[0].Port != 443 || s.Spec.Ports[0].TargetPort != api.FromInt(int32(port)) {
			_, err := svcs.Mutate(ctx, api.NamespaceDefault, "kubernetes", "", registry.WriteOptions{}, func(cur api.Object) (api.Object, error) {
				s := cur.(*api.Service)
				s.Spec.Ports = want.Spec.Ports
				return s, nil
			})
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// endpointAddress is the address pods reach this apiserver on (the
// kubernetes Endpoints): the advertise address, "" when there is none.
func (a *APIServer) endpointAddress() string {
	if ip := a.advertiseIP(); ip != nil {
		return ip.String()
	}
	return ""
}

// advertiseIP is the address this apiserver is known by to pods and peers,
// resolved once as kube-apiserver defaults --advertise-address: the flag
// when it names an address, else a specific --bind-address, else the first
// IPv4 address of an interface that is up and not loopback; nil when there
// is none. The kubernetes Endpoints, the serving certificate and the OIDC
// discovery document's jwks_uri all name it.
func (a *APIServer) advertiseIP() net.IP {
	a.advOnce.Do(func() { a.adv = resolveAdvertiseIP(a.opts.AdvertiseAddress, a.opts.BindAddress) })
	return a.adv
}

func resolveAdvertiseIP(advertise, bind string) net.IP {
	for _, s := range []string{advertise, bind} {
		if ip := net.ParseIP(s); ip != nil && !ip.IsUnspecified() {
			return ip
		}
	}
	ifaces, err := net.Interfaces()
	if err != nil {
		return nil
	}
	for _, ifc := range ifaces {
		if ifc.Flags&net.FlagUp == 0 || ifc.Flags&net.FlagLoopback != 0 {
			continue
		}
		addrs, _ := ifc.Addrs()
		for _, ad := range addrs {
			if n, ok := ad.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLinkLocalUnicast() {
				return n.IP.To4()
			}
		}
	}
	return nil
}
