package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/apiserver/registry"
)

// The --endpoint-reconciler-type values.
const (
	// LeaseEndpointReconciler: every apiserver keeps a lease key with a
	// TTL in etcd, and the kubernetes Endpoints list the address of every
	// live lease (the default).
	LeaseEndpointReconciler = "lease"
	// MasterCountEndpointReconciler: each apiserver adds its address and
	// keeps at most --apiserver-count of them (deprecated in Kubernetes).
	MasterCountEndpointReconciler = "master-count"
	// NoneEndpointReconciler leaves the kubernetes Endpoints alone.
	NoneEndpointReconciler = "none"
)

// EndpointReconcilerTypes are the values --endpoint-reconciler-type takes.
var EndpointReconcilerTypes = []string{MasterCountEndpointReconciler, LeaseEndpointReconciler, NoneEndpointReconciler}

// kube-apiserver's DefaultEndpointReconcilerInterval and
// DefaultEndpointReconcilerTTL: each apiserver renews its lease every 10 s,
// and a lease not renewed for 15 s expires with its address.
const (
	defaultEndpointReconcilerInterval = 10 * time.Second
	defaultEndpointReconcilerTTL      = 15 * time.Second
)

// masterLeasesDir is the etcd directory of the apiservers' leases, under
// --etcd-prefix (kube-apiserver's "/masterleases/": /registry/masterleases/IP).
const masterLeasesDir = "masterleases"

// labelSkipMirror keeps the EndpointSlice mirroring controller off the
// kubernetes Endpoints: the reconciler writes the EndpointSlice itself.
const labelSkipMirror = "endpointslice.kubernetes.io/skip-mirror"

// errLeaseNotFound is what removing a lease (or, with master-count, an
// address) that is not there returns.
var errLeaseNotFound = errors.New("lease not found")

// endpointReconciler keeps the addresses of the kubernetes Service's
// Endpoints (and EndpointSlice), as kube-apiserver's
// reconcilers.EndpointReconciler.
type endpointReconciler interface {
	// reconcile puts ip among the Endpoints' addresses (and renews what
	// keeps it there); the ports are reset only when reconcilePorts.
	reconcile(ctx context.Context, ip string, ports []api.EndpointPort, reconcilePorts bool) error
	// remove takes ip out; final marks the apiserver's shutdown, after
	// which reconcile does nothing and the last apiserver may empty the
	// Endpoints.
	remove(ctx context.Context, ip string, ports []api.EndpointPort, final bool) error
}

// newEndpointReconciler is the reconciler --endpoint-reconciler-type names.
func (a *APIServer) newEndpointReconciler() endpointReconciler {
	switch a.opts.EndpointReconcilerType {
	case NoneEndpointReconciler:
		return noneEndpointReconciler{}
	case MasterCountEndpointReconciler:
		return &masterCountEndpointReconciler{count: max(a.opts.APIServerCount, 1),
			endpointsWriter: endpointsWriter{eps: a.Store("", "endpoints"), slices: a.Store("discovery.k8s.io", "endpointslices"), log: a.log}}
	default:
		ttl := a.opts.EndpointReconcilerTTL
		if ttl <= 0 {
			ttl = defaultEndpointReconcilerTTL
		}
		return &leaseEndpointReconciler{
			leases:          &masterLeases{client: a.backend.Client(), dir: path.Join("/", a.opts.EtcdPrefix, masterLeasesDir) + "/", ttl: ttl},
			endpointsWriter: endpointsWriter{eps: a.Store("", "endpoints"), slices: a.Store("discovery.k8s.io", "endpointslices"), log: a.log},
		}
	}
}

type noneEndpointReconciler struct{}

func (noneEndpointReconciler) reconcile(context.Context, string, []api.EndpointPort, bool) error {
	return nil
}

func (noneEndpointReconciler) remove(context.Context, string, []api.EndpointPort, bool) error {
	return nil
}

// masterLeases are the apiservers' lease keys: DIR/IP, each holding an
// Endpoints object with that one address and bound to an etcd lease of
// ttl, granted anew at each renewal.
type masterLeases struct {
	client *clientv3.Client
	dir    string
	ttl    time.Duration
}

// update creates or renews ip's key for another ttl.
func (m *masterLeases) update(ctx context.Context, ip string) error {
	secs := int64(m.ttl / time.Second)
	if secs < 1 {
		secs = 1
	}
	lease, err := m.client.Grant(ctx, secs)
	if err != nil {
		return fmt.Errorf("grant a lease of %ds: %w", secs, err)
	}
	v, err := json.Marshal(&api.Endpoints{TypeMeta: api.TypeMeta{Kind: "Endpoints", APIVersion: "v1"},
		Subsets: []api.EndpointSubset{{Addresses: []api.EndpointAddress{{IP: ip}}}}})
	if err != nil {
		return err
	}
	_, err = m.client.Put(ctx, m.dir+ip, string(v), clientv3.WithLease(lease.ID))
	return err
}

// list is the address of every live lease, sorted.
func (m *masterLeases) list(ctx context.Context) ([]string, error) {
	resp, err := m.client.Get(ctx, m.dir, clientv3.WithPrefix())
	if err != nil {
		return nil, err
	}
	ips := make([]string, 0, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		var e api.Endpoints
		if err := json.Unmarshal(kv.Value, &e); err != nil {
			continue
		}
		if len(e.Subsets) > 0 && len(e.Subsets[0].Addresses) > 0 && e.Subsets[0].Addresses[0].IP != "" {
			ips = append(ips, e.Subsets[0].Addresses[0].IP)
		}
	}
	slices.Sort(ips)
	return slices.Compact(ips), nil
}

// remove deletes ip's key; errLeaseNotFound when there was none.
func (m *masterLeases) remove(ctx context.Context, ip string) error {
	resp, err := m.client.Delete(ctx, m.dir+ip)
	if err != nil {
		return err
	}
	if resp.Deleted == 0 {
		return errLeaseNotFound
	}
	return nil
}

// leaseEndpointReconciler is kube-apiserver's lease endpoint reconciler:
// each apiserver renews its lease, then sets the Endpoints' addresses to
// those of every live lease.
type leaseEndpointReconciler struct {
	leases *masterLeases
	endpointsWriter

	mu      sync.Mutex
	stopped bool
}

func (r *leaseEndpointReconciler) reconcile(ctx context.Context, ip string, ports []api.EndpointPort, reconcilePorts bool) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped {
		return nil
	}
	// The lease first, whatever happens below: the other apiservers list
	// this one from it.
	if err := r.leases.update(ctx, ip); err != nil {
		return err
	}
	return r.sync(ctx, ports, reconcilePorts)
}

func (r *leaseEndpointReconciler) remove(ctx context.Context, ip string, ports []api.EndpointPort, final bool) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if final {
		r.stopped = true
	}
	if err := r.leases.remove(ctx, ip); err != nil {
		return err
	}
	return r.sync(ctx, ports, true)
}

// sync sets the Endpoints to the live leases' addresses (and the ports
// when reconcilePorts), then the EndpointSlice to the Endpoints.
func (r *leaseEndpointReconciler) sync(ctx context.Context, ports []api.EndpointPort, reconcilePorts bool) error {
	obj, err := r.eps.Get(ctx, api.NamespaceDefault, "kubernetes")
	create := apierrors.IsNotFound(err)
	switch {
	case create && r.stopped:
		return nil
	case create:
		obj = &api.Endpoints{ObjectMeta: api.ObjectMeta{Name: "kubernetes", Namespace: api.NamespaceDefault}}
	case err != nil:
		return err
	}
	ips, err := r.leases.list(ctx)
	if err != nil {
		return err
	}
	// This apiserver has just renewed its own lease: none listed means
	// something is wrong, unless it is the last one stopping.
	if !r.stopped && len(ips) == 0 {
		return errors.New("no API server IP addresses were listed in storage, refusing to erase all endpoints for the kubernetes Service")
	}
	e := obj.(*api.Endpoints)
	if !setLeaseEndpoints(e, ips, ports, reconcilePorts) {
		return r.ensureSlice(ctx, e)
	}
	r.log.Warn("resetting endpoints for the kubernetes service", "ips", ips)
	if create {
		obj, err = r.eps.Create(ctx, api.NamespaceDefault, e, registry.WriteOptions{})
		if apierrors.IsAlreadyExists(err) {
			obj, err = r.eps.Mutate(ctx, api.NamespaceDefault, "kubernetes", "", registry.WriteOptions{}, func(cur api.Object) (api.Object, error) {
				setLeaseEndpoints(cur.(*api.Endpoints), ips, ports, reconcilePorts)
				return cur, nil
			})
		}
	} else {
		obj, err = r.eps.Mutate(ctx, api.NamespaceDefault, "kubernetes", "", registry.WriteOptions{}, func(cur api.Object) (api.Object, error) {
			setLeaseEndpoints(cur.(*api.Endpoints), ips, ports, reconcilePorts)
			return cur, nil
		})
	}
	if err != nil {
		return err
	}
	return r.ensureSlice(ctx, obj.(*api.Endpoints))
}

// setLeaseEndpoints makes e what the lease reconciler wants: the
// skip-mirror label, one subset whose addresses are ips, sorted (none at
// all when ips is empty), and whose ports are ports when reconcilePorts
// (or the subset had to be remade). It reports whether e changed.
func setLeaseEndpoints(e *api.Endpoints, ips []string, ports []api.EndpointPort, reconcilePorts bool) bool {
	changed := false
	if e.Labels[labelSkipMirror] != "true" {
		if e.Labels == nil {
			e.Labels = map[string]string{}
		}
		e.Labels[labelSkipMirror] = "true"
		changed = true
	}
	if len(e.Subsets) != 1 {
		e.Subsets = []api.EndpointSubset{{Ports: ports}}
		changed = true
	}
	sub := &e.Subsets[0]
	if reconcilePorts && !sameJSON(sub.Ports, ports) {
		sub.Ports = ports
		changed = true
	}
	have := make([]string, 0, len(sub.Addresses))
	for _, ad := range sub.Addresses {
		have = append(have, ad.IP)
	}
	slices.Sort(have)
	if len(sub.NotReadyAddresses) > 0 || !slices.Equal(have, ips) {
		sub.Addresses, sub.NotReadyAddresses = nil, nil
		for _, ip := range ips {
			sub.Addresses = append(sub.Addresses, api.EndpointAddress{IP: ip})
		}
		changed = true
	}
	// As RepackSubsets: a subset without addresses is dropped.
	if len(sub.Addresses) == 0 {
		e.Subsets = nil
	}
	return changed
}

// endpointsWriter writes the kubernetes Endpoints and EndpointSlice, as
// kube-apiserver's EndpointsAdapter.
type endpointsWriter struct {
	eps    *registry.Store
	slices *registry.Store
	log    *slog.Logger
}

// ensureSlice makes default/kubernetes's EndpointSlice, which service
// proxies read, say what the Endpoints say, as kube-apiserver's
// EndpointsAdapter: one ready endpoint per address, the same ports.
func (r *endpointsWriter) ensureSlice(ctx context.Context, e *api.Endpoints) error {
	if r.slices == nil {
		return nil
	}
	want := sliceFromEndpoints(e)
	obj, err := r.slices.Get(ctx, api.NamespaceDefault, want.Name)
	switch {
	case apierrors.IsNotFound(err):
		_, err = r.slices.Create(ctx, api.NamespaceDefault, want, registry.WriteOptions{})
		if apierrors.IsAlreadyExists(err) {
			err = nil
		}
		return err
	case err != nil:
		return err
	}
	cur := obj.(*api.EndpointSlice)
	if cur.AddressType != want.AddressType {
		// The address type is immutable: the slice is made anew.
		if _, _, err := r.slices.Delete(ctx, api.NamespaceDefault, want.Name, nil, false); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		_, err = r.slices.Create(ctx, api.NamespaceDefault, want, registry.WriteOptions{})
		return err
	}
	if sameJSON(cur.Endpoints, want.Endpoints) && sameJSON(cur.Ports, want.Ports) && sameJSON(cur.Labels, want.Labels) {
		return nil
	}
	_, err = r.slices.Mutate(ctx, api.NamespaceDefault, want.Name, "", registry.WriteOptions{}, func(cur api.Object) (api.Object, error) {
		s := cur.(*api.EndpointSlice)
		s.Labels, s.Endpoints, s.Ports = want.Labels, want.Endpoints, want.Ports
		return s, nil
	})
	return err
}

// sliceFromEndpoints is kube-apiserver's endpointSliceFromEndpoints: the
// first subset's addresses (ready) and not-ready addresses, of the
// address family they all share (IPv4 unless every one is IPv6).
func sliceFromEndpoints(e *api.Endpoints) *api.EndpointSlice {
	s := &api.EndpointSlice{
		ObjectMeta:  api.ObjectMeta{Name: e.Name, Namespace: e.Namespace, Labels: map[string]string{api.LabelServiceName: e.Name}},
		AddressType: api.AddressTypeIPv4,
		Endpoints:   []api.Endpoint{},
	}
	if len(e.Subsets) == 0 {
		return s
	}
	sub := e.Subsets[0]
	for i := range sub.Ports {
		p := sub.Ports[i]
		s.Ports = append(s.Ports, api.EndpointSlicePort{Name: &p.Name, Port: &p.Port, Protocol: &p.Protocol})
	}
	all := slices.Concat(sub.Addresses, sub.NotReadyAddresses)
	if len(all) > 0 && !slices.ContainsFunc(all, func(ad api.EndpointAddress) bool { return !isIPv6(ad.IP) }) {
		s.AddressType = api.AddressTypeIPv6
	}
	add := func(addrs []api.EndpointAddress, ready bool) {
		for _, ad := range addrs {
			if isIPv6(ad.IP) != (s.AddressType == api.AddressTypeIPv6) {
				continue
			}
			s.Endpoints = append(s.Endpoints, api.Endpoint{Addresses: []string{ad.IP}, Conditions: api.EndpointConditions{Ready: &ready}})
		}
	}
	add(sub.Addresses, true)
	add(sub.NotReadyAddresses, false)
	return s
}

func isIPv6(s string) bool {
	ip := net.ParseIP(s)
	return ip != nil && ip.To4() == nil && strings.Contains(s, ":")
}

func sameJSON(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}

// masterCountEndpointReconciler is kube-apiserver's deprecated
// master-count reconciler: every apiserver adds its own address and, past
// count addresses, drops those sorted after its own (wrapping around), so
// that count apiservers agree on one list.
type masterCountEndpointReconciler struct {
	count int
	endpointsWriter

	mu      sync.Mutex
	stopped bool
}

func (r *masterCountEndpointReconciler) reconcile(ctx context.Context, ip string, ports []api.EndpointPort, reconcilePorts bool) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped {
		return nil
	}
	obj, err := r.eps.Get(ctx, api.NamespaceDefault, "kubernetes")
	switch {
	case apierrors.IsNotFound(err):
		e := &api.Endpoints{ObjectMeta: api.ObjectMeta{Name: "kubernetes", Namespace: api.NamespaceDefault,
			Labels: map[string]string{labelSkipMirror: "true"}},
			Subsets: []api.EndpointSubset{{Addresses: []api.EndpointAddress{{IP: ip}}, Ports: ports}}}
		if obj, err = r.eps.Create(ctx, api.NamespaceDefault, e, registry.WriteOptions{}); err != nil {
			return err
		}
		return r.ensureSlice(ctx, obj.(*api.Endpoints))
	case err != nil:
		return err
	}
	if !setMasterCountEndpoints(obj.(*api.Endpoints), ip, ports, r.count, reconcilePorts) {
		return r.ensureSlice(ctx, obj.(*api.Endpoints))
	}
	obj, err = r.eps.Mutate(ctx, api.NamespaceDefault, "kubernetes", "", registry.WriteOptions{}, func(cur api.Object) (api.Object, error) {
		setMasterCountEndpoints(cur.(*api.Endpoints), ip, ports, r.count, reconcilePorts)
		return cur, nil
	})
	if err != nil {
		return err
	}
	r.log.Warn("reset endpoints for the kubernetes service", "subsets", obj.(*api.Endpoints).Subsets)
	return r.ensureSlice(ctx, obj.(*api.Endpoints))
}

// setMasterCountEndpoints makes e hold ip among at most count addresses,
// as kube-apiserver's masterCountEndpointReconciler; it reports whether e
// changed.
func setMasterCountEndpoints(e *api.Endpoints, ip string, ports []api.EndpointPort, count int, reconcilePorts bool) bool {
	changed := false
	if e.Labels[labelSkipMirror] != "true" {
		if e.Labels == nil {
			e.Labels = map[string]string{}
		}
		e.Labels[labelSkipMirror] = "true"
		changed = true
	}
	if len(e.Subsets) != 1 {
		// Something is egregiously wrong: remade with this address only.
		e.Subsets = []api.EndpointSubset{{Addresses: []api.EndpointAddress{{IP: ip}}, Ports: ports}}
		return true
	}
	sub := &e.Subsets[0]
	if reconcilePorts && !sameJSON(sub.Ports, ports) {
		sub.Ports = ports
		changed = true
	}
	i := slices.IndexFunc(sub.Addresses, func(ad api.EndpointAddress) bool { return ad.IP == ip })
	if i >= 0 && len(sub.Addresses) <= count {
		return changed
	}
	if i < 0 {
		sub.Addresses = append(sub.Addresses, api.EndpointAddress{IP: ip})
	}
	slices.SortFunc(sub.Addresses, func(a, b api.EndpointAddress) int { return strings.Compare(a.IP, b.IP) })
	sub.Addresses = slices.CompactFunc(sub.Addresses, func(a, b api.EndpointAddress) bool { return a.IP == b.IP })
	// Too many: drop those after this one, wrapping around.
	for len(sub.Addresses) > count {
		i := slices.IndexFunc(sub.Addresses, func(ad api.EndpointAddress) bool { return ad.IP == ip })
		next := (i + 1) % len(sub.Addresses)
		sub.Addresses = slices.Delete(sub.Addresses, next, next+1)
	}
	return true
}

func (r *masterCountEndpointReconciler) remove(ctx context.Context, ip string, _ []api.EndpointPort, final bool) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if final {
		r.stopped = true
	}
	obj, err := r.eps.Get(ctx, api.NamespaceDefault, "kubernetes")
	if apierrors.IsNotFound(err) {
		return errLeaseNotFound
	}
	if err != nil {
		return err
	}
	has := func(e *api.Endpoints) bool {
		return len(e.Subsets) > 0 && slices.ContainsFunc(e.Subsets[0].Addresses, func(ad api.EndpointAddress) bool { return ad.IP == ip })
	}
	if !has(obj.(*api.Endpoints)) {
		return errLeaseNotFound
	}
	obj, err = r.eps.Mutate(ctx, api.NamespaceDefault, "kubernetes", "", registry.WriteOptions{}, func(cur api.Object) (api.Object, error) {
		e := cur.(*api.Endpoints)
		if has(e) {
			e.Subsets[0].Addresses = slices.DeleteFunc(e.Subsets[0].Addresses, func(ad api.EndpointAddress) bool { return ad.IP == ip })
			if len(e.Subsets[0].Addresses) == 0 && len(e.Subsets[0].NotReadyAddresses) == 0 {
				e.Subsets = nil
			}
		}
		return e, nil
	})
	if err != nil {
		return err
	}
	return r.ensureSlice(ctx, obj.(*api.Endpoints))
}
