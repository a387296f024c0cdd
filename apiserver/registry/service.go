package registry

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/api/field"
	"github.com/minik8s/minik8s/apiserver/servicealloc"
)

// AllocatingStrategy is implemented by kinds that reserve values shared by
// all objects of the kind outside their own key (a Service's ClusterIP and
// NodePorts). The store calls it after validation and undoes what it did
// when the write does not happen.
type AllocatingStrategy interface {
	// AllocateCreate reserves what obj needs and fills it in. rollback
	// frees it again if obj is not stored.
	AllocateCreate(ctx context.Context, obj api.Object, dryRun bool) (rollback func(), err error)
	// AllocateUpdate reserves what obj needs beyond old. rollback frees the
	// new reservations if the update is not stored; commit frees what old
	// held and obj no longer does, once it is.
	AllocateUpdate(ctx context.Context, obj, old api.Object, dryRun bool) (rollback, commit func(), err error)
	// Release frees everything obj held, after it was removed from storage.
	Release(ctx context.Context, obj api.Object)
}

// allocatingServiceStrategy is the Service strategy that allocates
// ClusterIPs and NodePorts from alloc.
type allocatingServiceStrategy struct {
	serviceStrategy
	alloc *servicealloc.Allocator
}

var _ AllocatingStrategy = allocatingServiceStrategy{}

// goSyntax renders a field value the way Kubernetes' messages show Go
// values: []string{"10.96.0.10"}.
type goSyntax struct{ v any }

func (g goSyntax) String() string { return fmt.Sprintf("%#v", g.v) }

func ownerOf(s *api.Service) servicealloc.Owner {
	return servicealloc.Owner{Namespace: s.Namespace, Name: s.Name, UID: string(s.UID)}
}

func needsClusterIP(s *api.Service) bool {
	return s.Spec.Type != api.ServiceTypeExternalName && s.Spec.ClusterIP != api.ClusterIPNone
}

func needsNodePorts(s *api.Service) bool {
	t := s.Spec.Type
	if t == api.ServiceTypeLoadBalancer {
		return s.Spec.AllocateLoadBalancerNodePorts == nil || *s.Spec.AllocateLoadBalancerNodePorts
	}
	return t == api.ServiceTypeNodePort
}

// heldIP is the ClusterIP s holds, or "".
func heldIP(s *api.Service) string {
	if !needsClusterIP(s) {
		return ""
	}
	return s.Spec.ClusterIP
}

// heldPorts are the NodePorts s holds, its health check node port
// included.
func heldPorts(s *api.Service) map[int32]bool {
	out := map[int32]bool{}
	for _, p := range s.Spec.Ports {
		if p.NodePort != 0 {
			out[p.NodePort] = true
		}
	}
	if needsHealthCheckNodePort(s) && s.Spec.HealthCheckNodePort != 0 {
		out[s.Spec.HealthCheckNodePort] = true
	}
	return out
}

// HeldPorts lists the node ports s holds (its ports' and its health check
// node port), for the allocation repair.
func HeldPorts(s *api.Service) []int {
	var out []int
	for p := range heldPorts(s) {
		out = append(out, int(p))
	}
	return out
}

// allocation collects what one write reserved, to undo it.
type allocation struct {
	alloc *servicealloc.Allocator
	uid   string
	ips   []string
	ports []int32
}

func (a *allocation) undo(ctx context.Context) {
	ctx = context.WithoutCancel(ctx)
	for _, ip := range a.ips {
		_ = a.alloc.ReleaseIP(ctx, ip, a.uid)
	}
	for _, p := range a.ports {
		_ = a.alloc.ReleasePort(ctx, int(p), a.uid)
	}
}

func (st allocatingServiceStrategy) allocateIP(ctx context.Context, s *api.Service, got *allocation, dryRun bool) error {
	var want net.IP
	if s.Spec.ClusterIP != "" {
		if want = net.ParseIP(s.Spec.ClusterIP); want == nil {
			return nil // validation reported it
		}
	}
	ip, err := st.alloc.AllocateIP(ctx, want, ownerOf(s), dryRun)
	var nir *servicealloc.NotInRangeError
	switch {
	case err == nil:
	case errors.As(err, &nir), errors.Is(err, servicealloc.ErrAllocated):
		return apierrors.NewInvalid(apierrors.GroupKind{Kind: "Service"}, s.Name, field.ErrorList{
			field.Invalid(field.NewPath("spec", "clusterIPs"), goSyntax{s.Spec.ClusterIPs}, fmt.Sprintf("failed to allocate IP %s: %v", want, err)),
		})
	default:
		return apierrors.NewInternalError(fmt.Errorf("failed to allocate a serviceIP: %w", err))
	}
	if !dryRun {
		got.ips = append(got.ips, ip.String())
	}
	s.Spec.ClusterIP = ip.String()
	s.Spec.ClusterIPs = []string{ip.String()}
	if len(s.Spec.IPFamilies) == 0 {
		s.Spec.IPFamilies = []api.IPFamily{api.IPv4Protocol}
	}
	return nil
}

// allocatePorts gives every port of s a NodePort, keeping those in keep
// (already held by the old object).
func (st allocatingServiceStrategy) allocatePorts(ctx context.Context, s *api.Service, keep map[int32]bool, got *allocation, dryRun bool) error {
	var errs field.ErrorList
	// One NodePort may serve the same port number over TCP and UDP.
	claimed := map[int32]bool{}
	// The ports that ask for a NodePort claim theirs first, as in
	// Kubernetes: a dynamic one must not take a port another asks for.
	var order []int
	for pass := range 2 {
		for i, p := range s.Spec.Ports {
			if (p.NodePort != 0) == (pass == 0) {
				order = append(order, i)
			}
		}
	}
	for _, i := range order {
		p := &s.Spec.Ports[i]
		if p.NodePort != 0 && (keep[p.NodePort] || claimed[p.NodePort]) {
			continue
		}
		port, err := st.alloc.AllocatePort(ctx, int(p.NodePort), ownerOf(s), dryRun)
		var nir *servicealloc.NotInRangeError
		switch {
		case err == nil:
		case errors.As(err, &nir), errors.Is(err, servicealloc.ErrPortAllocated):
			errs = append(errs, field.Invalid(field.NewPath("spec", "ports").Index(i).Child("nodePort"), p.NodePort, err.Error()))
			continue
		default:
			got.undo(ctx)
			return apierrors.NewInternalError(fmt.Errorf("failed to allocate a nodePort: %w", err))
		}
		if !dryRun {
			got.ports = append(got.ports, int32(port))
		}
		p.NodePort = int32(port)
		claimed[p.NodePort] = true
	}
	if len(errs) > 0 {
		got.undo(ctx)
		return apierrors.NewInvalid(apierrors.GroupKind{Kind: "Service"}, s.Name, errs)
	}
	return nil
}

// allocateHealthCheckPort gives a LoadBalancer Service with
// externalTrafficPolicy Local the node port its load balancer checks, the
// one asked for or the next free, as kube-apiserver's
// allocHealthCheckNodePort (a failure is its internal error).
func (st allocatingServiceStrategy) allocateHealthCheckPort(ctx context.Context, s *api.Service, got *allocation, dryRun bool) error {
	want := s.Spec.HealthCheckNodePort
	port, err := st.alloc.AllocatePort(ctx, int(want), ownerOf(s), dryRun)
	if err != nil {
		if want != 0 {
			return apierrors.NewInternalError(fmt.Errorf("failed to allocate requested HealthCheck NodePort %v: %v", want, err))
		}
		return apierrors.NewInternalError(fmt.Errorf("failed to allocate a HealthCheck NodePort %v: %v", port, err))
	}
	if !dryRun {
		got.ports = append(got.ports, int32(port))
	}
	s.Spec.HealthCheckNodePort = int32(port)
	return nil
}

// dropInternalTrafficPolicy clears an ExternalName Service's
// internalTrafficPolicy once it passed validation. Kubernetes stores the
// field and drops it on every read (defaultOnReadInternalTrafficPolicy: it
// once defaulted it for ExternalName by mistake); what clients see is the
// same.
func dropInternalTrafficPolicy(s *api.Service) {
	if s.Spec.Type == api.ServiceTypeExternalName {
		s.Spec.InternalTrafficPolicy = nil
	}
}

func (st allocatingServiceStrategy) AllocateCreate(ctx context.Context, obj api.Object, dryRun bool) (func(), error) {
	s := obj.(*api.Service)
	dropInternalTrafficPolicy(s)
	got := &allocation{alloc: st.alloc, uid: string(s.UID)}
	if needsClusterIP(s) {
		if err := st.allocateIP(ctx, s, got, dryRun); err != nil {
			return nil, err
		}
	}
	if needsNodePorts(s) {
		if err := st.allocatePorts(ctx, s, nil, got, dryRun); err != nil {
			got.undo(ctx)
			return nil, err
		}
	}
	if needsHealthCheckNodePort(s) {
		if err := st.allocateHealthCheckPort(ctx, s, got, dryRun); err != nil {
			got.undo(ctx)
			return nil, err
		}
	}
	return func() { got.undo(ctx) }, nil
}

func (st allocatingServiceStrategy) AllocateUpdate(ctx context.Context, obj, old api.Object, dryRun bool) (func(), func(), error) {
	s, o := obj.(*api.Service), old.(*api.Service)
	dropInternalTrafficPolicy(s)
	got := &allocation{alloc: st.alloc, uid: string(o.UID)}
	if needsClusterIP(s) && heldIP(o) == "" {
		// ExternalName (or headless, which validation keeps) to ClusterIP.
		if err := st.allocateIP(ctx, s, got, dryRun); err != nil {
			return nil, nil, err
		}
	}
	if !needsNodePorts(s) && needsNodePorts(o) {
		// NodePort to ClusterIP: the node ports go, as in Kubernetes.
		for i := range s.Spec.Ports {
			s.Spec.Ports[i].NodePort = 0
		}
	}
	if needsNodePorts(s) {
		if err := st.allocatePorts(ctx, s, heldPorts(o), got, dryRun); err != nil {
			got.undo(ctx)
			return nil, nil, err
		}
	}
	// A health check node port newly needed (or asked to change) is
	// allocated; one no longer needed is freed with the old ports below.
	if needsHealthCheckNodePort(s) && !(needsHealthCheckNodePort(o) && o.Spec.HealthCheckNodePort != 0 && s.Spec.HealthCheckNodePort == o.Spec.HealthCheckNodePort) {
		if err := st.allocateHealthCheckPort(ctx, s, got, dryRun); err != nil {
			got.undo(ctx)
			return nil, nil, err
		}
	}
	rollback := func() { got.undo(ctx) }
	commit := func() {
		if dryRun {
			return
		}
		free := &allocation{alloc: st.alloc, uid: string(o.UID)}
		if ip := heldIP(o); ip != "" && ip != heldIP(s) {
			free.ips = append(free.ips, ip)
		}
		now := heldPorts(s)
		for p := range heldPorts(o) {
			if !now[p] {
				free.ports = append(free.ports, p)
			}
		}
		free.undo(ctx)
	}
	return rollback, commit, nil
}

func (st allocatingServiceStrategy) Release(ctx context.Context, obj api.Object) {
	s := obj.(*api.Service)
	free := &allocation{alloc: st.alloc, uid: string(s.UID)}
	if ip := heldIP(s); ip != "" {
		free.ips = append(free.ips, ip)
	}
	for p := range heldPorts(s) {
		free.ports = append(free.ports, p)
	}
	free.undo(ctx)
}

// family is the IP family of the cluster's service range (IPv4 without an
// allocator).
func (st serviceStrategy) family() api.IPFamily {
	if st.primaryFamily == "" {
		return api.IPv4Protocol
	}
	return st.primaryFamily
}

// PrepareForCreate resets the status, puts clusterIP into clusterIPs and
// initializes the IP families and their policy, as kube's service REST does
// when it begins a create: after the field manager recorded what the
// client sent, so no client owns what the server chose.
func (st serviceStrategy) PrepareForCreate(ctx context.Context, obj api.Object) {
	st.BaseStrategy.PrepareForCreate(ctx, obj)
	s := obj.(*api.Service)
	normalizeClusterIPs(s, nil)
	initIPFamilies(s, nil, st.family())
}

// PrepareForUpdate puts back what the server allocated and a replacement
// left out, and initializes the IP families, as kube's service REST when
// it begins an update; then it drops what only the old type needed,
// unless the client changed it itself (then validation reports it):
// Kubernetes' dropTypeDependentFields. Turning a NodePort Service into a
// ClusterIP one, or any Service into an ExternalName one, then just works
// with the object the client read; AllocateUpdate's commit frees what was
// dropped.
func (st serviceStrategy) PrepareForUpdate(ctx context.Context, obj, old api.Object) {
	s, o := obj.(*api.Service), old.(*api.Service)
	patchAllocatedValues(s, o)
	normalizeClusterIPs(s, o)
	initIPFamilies(s, o, st.family())
	dropTypeDependentFields(s, o)
}

// patchAllocatedValues keeps what the server allocated when a replacement
// leaves it out (kube's patchAllocatedValues), so "kubectl replace" of the
// original manifest works: the cluster IPs while the Service keeps one,
// node ports by port name while it keeps them (never one another port of
// the new object uses), and the health check node port.
func patchAllocatedValues(s, old *api.Service) {
	hasClusterIP := func(sv *api.Service) bool { return sv.Spec.Type != api.ServiceTypeExternalName }
	if hasClusterIP(old) && hasClusterIP(s) {
		if s.Spec.ClusterIP == "" {
			s.Spec.ClusterIP = old.Spec.ClusterIP
		}
		if len(s.Spec.ClusterIPs) == 0 && len(old.Spec.ClusterIPs) > 0 {
			s.Spec.ClusterIPs = slices.Clone(old.Spec.ClusterIPs)
		}
	}
	if needsNodePorts(old) && needsNodePorts(s) {
		used, now := heldPorts(old), heldPorts(s)
		byName := map[string]int32{}
		for _, p := range old.Spec.Ports {
			byName[p.Name] = p.NodePort
		}
		for i := range s.Spec.Ports {
			p := &s.Spec.Ports[i]
			if v := byName[p.Name]; p.NodePort == 0 && !(used[v] && now[v]) {
				p.NodePort = v
			}
		}
	}
	if needsHealthCheckNodePort(old) && needsHealthCheckNodePort(s) && s.Spec.HealthCheckNodePort == 0 {
		s.Spec.HealthCheckNodePort = old.Spec.HealthCheckNodePort
	}
}

func needsHealthCheckNodePort(s *api.Service) bool {
	return s.Spec.Type == api.ServiceTypeLoadBalancer && s.Spec.ExternalTrafficPolicy == api.ServiceExternalTrafficPolicyLocal
}

// normalizeClusterIPs keeps clusterIPs in step with clusterIP, as kube's
// normalizeClusterIPs: a client that sets only the singular gets the
// plural (never the other way: a client that knows the plural sends
// both); on update, an old client's missing clusterIPs are the old ones,
// and a changed or cleared clusterIP with unchanged clusterIPs changes or
// clears them too. old is nil on create.
func normalizeClusterIPs(s, old *api.Service) {
	if old == nil {
		if s.Spec.ClusterIP != "" && len(s.Spec.ClusterIPs) == 0 {
			s.Spec.ClusterIPs = []string{s.Spec.ClusterIP}
		}
		return
	}
	if len(old.Spec.ClusterIPs) > 0 && len(s.Spec.ClusterIPs) == 0 && old.Spec.ClusterIP == s.Spec.ClusterIP {
		s.Spec.ClusterIPs = old.Spec.ClusterIPs
	}
	if old.Spec.ClusterIP != s.Spec.ClusterIP && slices.Equal(old.Spec.ClusterIPs, s.Spec.ClusterIPs) {
		if old.Spec.ClusterIP != "" && s.Spec.ClusterIP == "" {
			s.Spec.ClusterIPs = nil
		} else {
			s.Spec.ClusterIPs = []string{s.Spec.ClusterIP}
		}
	}
}

// initIPFamilies sets the IP family policy and families a Service left
// out, as kube's allocator (initIPFamilyFields) on a cluster with one
// service IP family: the policy is the old one, or RequireDualStack for a
// headless Service without a selector, or SingleStack; SingleStack trims
// unchanged second cluster IPs and families; families follow the cluster
// IPs, then the cluster's family; a headless Service without a selector
// that is not SingleStack gets both families. Inconsistent input is left
// to validation.
func initIPFamilies(s, old *api.Service, family api.IPFamily) {
	spec := &s.Spec
	if spec.Type == api.ServiceTypeExternalName {
		return
	}
	headlessBare := spec.ClusterIP == api.ClusterIPNone && len(spec.Selector) == 0
	if spec.IPFamilyPolicy == nil {
		policy := api.IPFamilyPolicySingleStack
		switch {
		case old != nil && old.Spec.IPFamilyPolicy != nil:
			policy = *old.Spec.IPFamilyPolicy
		case headlessBare:
			policy = api.IPFamilyPolicyRequireDualStack
		}
		spec.IPFamilyPolicy = &policy
	}
	single := *spec.IPFamilyPolicy == api.IPFamilyPolicySingleStack
	if old != nil && single {
		if slices.Equal(old.Spec.ClusterIPs, spec.ClusterIPs) && len(spec.ClusterIPs) > 1 {
			spec.ClusterIPs = spec.ClusterIPs[:1]
		}
		if slices.Equal(old.Spec.IPFamilies, spec.IPFamilies) && len(spec.IPFamilies) > 1 {
			spec.IPFamilies = spec.IPFamilies[:1]
		}
	}
	for i, ip := range spec.ClusterIPs {
		if ip == api.ClusterIPNone {
			break
		}
		parsed := net.ParseIP(ip)
		if parsed == nil {
			return // validation reports it
		}
		if i >= len(spec.IPFamilies) {
			f := api.IPv6Protocol
			if parsed.To4() != nil {
				f = api.IPv4Protocol
			}
			spec.IPFamilies = append(spec.IPFamilies, f)
		}
	}
	if len(spec.IPFamilies) == 0 {
		spec.IPFamilies = []api.IPFamily{family}
	}
	if headlessBare && !single && len(spec.IPFamilies) == 1 {
		other := api.IPv6Protocol
		if spec.IPFamilies[0] == api.IPv6Protocol {
			other = api.IPv4Protocol
		}
		spec.IPFamilies = append(spec.IPFamilies, other)
	}
}

// dropTypeDependentFields drops what only old's type needed and the client
// left as it was (Kubernetes' dropTypeDependentFields).
func dropTypeDependentFields(s, o *api.Service) {
	policy := func(sv *api.Service) api.IPFamilyPolicy {
		if sv.Spec.IPFamilyPolicy == nil {
			return ""
		}
		return *sv.Spec.IPFamilyPolicy
	}
	// Even "None" is a ClusterIP value: only ExternalName has none.
	hasClusterIP := func(sv *api.Service) bool { return sv.Spec.Type != api.ServiceTypeExternalName }
	if hasClusterIP(o) && !hasClusterIP(s) {
		if s.Spec.ClusterIP == o.Spec.ClusterIP && slices.Equal(s.Spec.ClusterIPs, o.Spec.ClusterIPs) {
			s.Spec.ClusterIP, s.Spec.ClusterIPs = "", nil
		}
		if slices.Equal(s.Spec.IPFamilies, o.Spec.IPFamilies) {
			s.Spec.IPFamilies = nil
		}
		// An unset policy and an empty one are the same to Kubernetes here.
		if policy(s) == policy(o) {
			s.Spec.IPFamilyPolicy = nil
		}
	}
	// Kubernetes asks the type alone here, not allocateLoadBalancerNodePorts.
	hasNodePorts := func(sv *api.Service) bool {
		return sv.Spec.Type == api.ServiceTypeNodePort || sv.Spec.Type == api.ServiceTypeLoadBalancer
	}
	if hasNodePorts(o) && !hasNodePorts(s) && sameNodePorts(s, o) {
		for i := range s.Spec.Ports {
			s.Spec.Ports[i].NodePort = 0
		}
	}
	hasHealthCheckPort := func(sv *api.Service) bool {
		return sv.Spec.Type == api.ServiceTypeLoadBalancer && sv.Spec.ExternalTrafficPolicy == api.ServiceExternalTrafficPolicyLocal
	}
	if hasHealthCheckPort(o) && !hasHealthCheckPort(s) && s.Spec.HealthCheckNodePort == o.Spec.HealthCheckNodePort {
		s.Spec.HealthCheckNodePort = 0
	}
	if o.Spec.Type == api.ServiceTypeLoadBalancer && s.Spec.Type != api.ServiceTypeLoadBalancer {
		if s.Spec.AllocateLoadBalancerNodePorts != nil && o.Spec.AllocateLoadBalancerNodePorts != nil &&
			*s.Spec.AllocateLoadBalancerNodePorts == *o.Spec.AllocateLoadBalancerNodePorts {
			s.Spec.AllocateLoadBalancerNodePorts = nil
		}
		if ptrEqual(s.Spec.LoadBalancerClass, o.Spec.LoadBalancerClass) {
			s.Spec.LoadBalancerClass = nil
		}
	}
	external := func(sv *api.Service) bool {
		t := sv.Spec.Type
		return t == api.ServiceTypeNodePort || t == api.ServiceTypeLoadBalancer ||
			(t == api.ServiceTypeClusterIP && len(sv.Spec.ExternalIPs) > 0)
	}
	if external(o) && !external(s) && s.Spec.ExternalTrafficPolicy == o.Spec.ExternalTrafficPolicy {
		s.Spec.ExternalTrafficPolicy = ""
	}
	if s.Spec.Type != api.ServiceTypeLoadBalancer {
		s.Status.LoadBalancer = api.LoadBalancerStatus{}
	}
}

// ptrEqual reports whether a and b are both nil or point to equal values.
func ptrEqual[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// sameNodePorts reports whether every port of s that has a NodePort kept
// the one it had in o (or has none).
func sameNodePorts(s, o *api.Service) bool {
	old := heldPorts(o)
	for _, p := range s.Spec.Ports {
		if p.NodePort != 0 && !old[p.NodePort] {
			return false
		}
	}
	return true
}

// familyOf is the IP family of a service range.
func familyOf(cidr *net.IPNet) api.IPFamily {
	if cidr != nil && cidr.IP.To4() == nil {
		return api.IPv6Protocol
	}
	return api.IPv4Protocol
}
