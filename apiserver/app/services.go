package app

import (
	"context"
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

// kubernetesServiceInterval is how often the "kubernetes" Service and its
// Endpoints are put back if someone changed them (kube-apiserver: 10 s).
const kubernetesServiceInterval = 10 * time.Second

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
// first address, port 443 → the secure port) and its Endpoints (this
// apiserver's address) in place, as kube-apiserver's controller does.
func (a *APIServer) runKubernetesService(ctx context.Context, alloc *servicealloc.Allocator, port int) {
	t := time.NewTicker(kubernetesServiceInterval)
	defer t.Stop()
	for {
		if err := a.ensureKubernetesService(ctx, alloc.FirstIP().String(), port); err != nil && ctx.Err() == nil {
			a.log.Warn("could not reconcile the kubernetes service", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

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
	ip := a.endpointAddress()
	if ip == "" {
		return nil
	}
	eps := a.Store("", "endpoints")
	wantEp := &api.Endpoints{
		ObjectMeta: api.ObjectMeta{Name: "kubernetes", Namespace: api.NamespaceDefault,
			Labels: map[string]string{"endpointslice.kubernetes.io/skip-mirror": "true"}},
		Subsets: []api.EndpointSubset{{
			Addresses: []api.EndpointAddress{{IP: ip}},
			Ports:     []api.EndpointPort{{Name: "https", Port: int32(port), Protocol: api.ProtocolTCP}},
		}},
	}
	curEp, err := eps.Get(ctx, api.NamespaceDefault, "kubernetes")
	switch {
	case apierrors.IsNotFound(err):
		_, err = eps.Create(ctx, api.NamespaceDefault, wantEp, registry.WriteOptions{})
		if apierrors.IsAlreadyExists(err) {
			err = nil
		}
	case err != nil:
	default:
		e := curEp.(*api.Endpoints)
		if len(e.Subsets) != 1 || len(e.Subsets[0].Addresses) != 1 || e.Subsets[0].Addresses[0].IP != ip ||
			len(e.Subsets[0].Ports) != 1 || e.Subsets[0].Ports[0].Port != int32(port) {
			_, err = eps.Mutate(ctx, api.NamespaceDefault, "kubernetes", "", registry.WriteOptions{}, func(cur api.Object) (api.Object, error) {
				e := cur.(*api.Endpoints)
				e.Subsets = wantEp.Subsets
				return e, nil
			})
		}
	}
	if err != nil {
		return err
	}
	return a.ensureKubernetesEndpointSlice(ctx, ip, port)
}

// ensureKubernetesEndpointSlice keeps default/kubernetes's EndpointSlice,
// which service proxies read, as kube-apiserver's endpoint reconciler
// writes it beside the Endpoints (which carry skip-mirror for that reason).
func (a *APIServer) ensureKubernetesEndpointSlice(ctx context.Context, ip string, port int) error {
	slices := a.Store("discovery.k8s.io", "endpointslices")
	if slices == nil {
		return nil
	}
	name, proto, ready := "https", api.ProtocolTCP, true
	want := &api.EndpointSlice{
		ObjectMeta: api.ObjectMeta{Name: "kubernetes", Namespace: api.NamespaceDefault,
			Labels: map[string]string{api.LabelServiceName: "kubernetes"}},
		AddressType: api.AddressTypeIPv4,
		Endpoints:   []api.Endpoint{{Addresses: []string{ip}, Conditions: api.EndpointConditions{Ready: &ready}}},
		Ports:       []api.EndpointSlicePort{{Name: &name, Port: ptrTo(int32(port)), Protocol: &proto}},
	}
	cur, err := slices.Get(ctx, api.NamespaceDefault, "kubernetes")
	switch {
	case apierrors.IsNotFound(err):
		_, err = slices.Create(ctx, api.NamespaceDefault, want, registry.WriteOptions{})
		if apierrors.IsAlreadyExists(err) {
			err = nil
		}
		return err
	case err != nil:
		return err
	}
	s := cur.(*api.EndpointSlice)
	if len(s.Endpoints) == 1 && len(s.Endpoints[0].Addresses) == 1 && s.Endpoints[0].Addresses[0] == ip &&
		len(s.Ports) == 1 && s.Ports[0].Port != nil && *s.Ports[0].Port == int32(port) && s.Labels[api.LabelServiceName] == "kubernetes" {
		return nil
	}
	_, err = slices.Mutate(ctx, api.NamespaceDefault, "kubernetes", "", registry.WriteOptions{}, func(cur api.Object) (api.Object, error) {
		s := cur.(*api.EndpointSlice)
		if s.Labels == nil {
			s.Labels = map[string]string{}
		}
		s.Labels[api.LabelServiceName] = "kubernetes"
		s.AddressType, s.Endpoints, s.Ports = want.AddressType, want.Endpoints, want.Ports
		return s, nil
	})
	return err
}

func ptrTo[T any](v T) *T { return &v }

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
