package proxy

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
)

// SplitSchemeNamePort splits the name a proxy request addresses: "name",
// "name:port" or "scheme:name:port", the scheme "", "http" or "https".
func SplitSchemeNamePort(id string) (scheme, name, port string, valid bool) {
	parts := strings.Split(id, ":")
	switch len(parts) {
	case 1:
		name = parts[0]
	case 2:
		name, port = parts[0], parts[1]
	case 3:
		scheme, name, port = parts[0], parts[1], parts[2]
	default:
		return "", "", "", false
	}
	if name == "" || (scheme != "" && scheme != "http" && scheme != "https") {
		return "", "", "", false
	}
	return scheme, name, port, true
}

// SubPath is the path a proxy request goes on to: the segments after
// RESOURCE/NAME/proxy (parts), with a leading slash, and a trailing one
// when the request's path has one (kube's getRequestOptions). It is ""
// for ".../proxy", which the handler redirects.
func SubPath(parts []string, requestPath string) string {
	p := ""
	if len(parts) > 3 {
		p = strings.Join(parts[3:], "/")
	}
	if p != "" && !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	if strings.HasSuffix(requestPath, "/") && !strings.HasSuffix(p, "/") {
		p += "/"
	}
	return p
}

// JoinPreservingTrailingSlash is path.Join that keeps the trailing slash
// of the last non-empty element (apimachinery's).
func JoinPreservingTrailingSlash(elem ...string) string {
	result := path.Join(elem...)
	for i := len(elem) - 1; i >= 0; i-- {
		if elem[i] != "" {
			if strings.HasSuffix(elem[i], "/") && !strings.HasSuffix(result, "/") {
				result += "/"
			}
			break
		}
	}
	return result
}

// PodLocation is the URL of pod for a request to "scheme:name:port" (the
// name already looked up): the port asked for, else the first declared
// container port, else none; the host the pod's first IP, which must be
// a global unicast address (never a loopback or link-local one: the
// apiserver's own host is not the client's to reach).
func PodLocation(pod *api.Pod, scheme, port string) (*url.URL, error) {
	if port == "" {
		for _, c := range pod.Spec.Containers {
			if len(c.Ports) > 0 {
				port = strconv.Itoa(int(c.Ports[0].ContainerPort))
				break
			}
		}
	}
	podIP := ""
	if len(pod.Status.PodIPs) > 0 {
		podIP = pod.Status.PodIPs[0].IP
	}
	if ip := net.ParseIP(podIP); ip == nil || !ip.IsGlobalUnicast() {
		return nil, apierrors.NewBadRequest("address not allowed")
	}
	loc := &url.URL{Scheme: scheme, Host: podIP}
	switch {
	case port != "":
		loc.Host = net.JoinHostPort(podIP, port)
	case strings.Contains(podIP, ":"):
		loc.Host = "[" + podIP + "]"
	}
	return loc, nil
}

// ServiceSource reads what a Service's location is made of.
type ServiceSource interface {
	// Service returns the Service or its NotFound error.
	Service(ctx context.Context, ns, name string) (*api.Service, error)
	// EndpointSlices returns the slices labelled
	// kubernetes.io/service-name=name.
	EndpointSlices(ctx context.Context, ns, name string) ([]*api.EndpointSlice, error)
	// Pod returns the pod or an error.
	Pod(ctx context.Context, ns, name string) (*api.Pod, error)
}

// ServiceLocation is the URL for a request to Service "scheme:name:port"
// of namespace ns, as kube's service ResourceLocation finds it: a port
// number is the Service port of that number (by its name), a port name
// is taken as given; the address is a ready endpoint of a slice serving
// that port name, picked at random, whose target is a pod of ns with
// that IP. preferred is the cluster's primary IP family: its slices are
// tried first.
func ServiceLocation(ctx context.Context, src ServiceSource, ns, id string, preferred api.IPFamily) (*url.URL, error) {
	scheme, name, port, ok := SplitSchemeNamePort(id)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("invalid service request %q", id))
	}
	if num, err := strconv.ParseInt(port, 10, 64); err == nil {
		svc, err := src.Service(ctx, ns, name)
		if err != nil {
			return nil, err
		}
		found := false
		for _, sp := range svc.Spec.Ports {
			if int64(sp.Port) == num {
				port, found = sp.Name, true
				break
			}
		}
		if !found {
			return nil, apierrors.NewServiceUnavailable(fmt.Sprintf("no service port %d found for service %q", num, name))
		}
	}
	if ns == "" {
		return nil, apierrors.NewBadRequest("missing required namespace")
	}
	slices, err := src.EndpointSlices(ctx, ns, name)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	if len(slices) == 0 {
		return nil, apierrors.NewServiceUnavailable(fmt.Sprintf("no endpoints available for service %q", name))
	}
	hostPort, err := RandomEndpoint(name, slices, port, preferred, func(ep *api.Endpoint) bool {
		return podOwnsEndpoint(ctx, src, ns, ep) == nil
	})
	if err != nil {
		return nil, err
	}
	return &url.URL{Scheme: scheme, Host: hostPort}, nil
}

// podOwnsEndpoint says why ep is not a pod of ns that has its address:
// the apiserver proxies to pods only, never to an address an EndpointSlice
// writer chose.
func podOwnsEndpoint(ctx context.Context, src ServiceSource, ns string, ep *api.Endpoint) error {
	if ep.TargetRef == nil {
		return fmt.Errorf("endpoint has no target ref, skipping: %v", ep.Addresses)
	}
	if ep.TargetRef.Namespace != ns {
		return fmt.Errorf("endpoint namespace doesn't match context namespace")
	}
	pod, err := src.Pod(ctx, ns, ep.TargetRef.Name)
	if err != nil {
		return err
	}
	for _, ip := range pod.Status.PodIPs {
		if ip.IP == ep.Addresses[0] {
			return nil
		}
	}
	return fmt.Errorf("pod ip(s) doesn't match endpoint ip, skipping: %v vs %s (%s/%s)", pod.Status.PodIPs, ep.Addresses[0], ns, pod.Name)
}

// RandomEndpoint is "IP:port" of a randomly picked ready endpoint of
// slices serving port name portName, the slices of the preferred family
// first, valid (when not nil) accepting it; else 503 "no endpoints
// available" (apiserver's proxy.RandomEndpoint).
func RandomEndpoint(svcName string, eps []*api.EndpointSlice, portName string, preferred api.IPFamily, valid func(*api.Endpoint) bool) (string, error) {
	if len(eps) > 1 {
		eps = slices.Clone(eps)
		order := rand.Perm(len(eps))
		rank := make(map[*api.EndpointSlice]int, len(eps))
		for i, s := range eps {
			rank[s] = order[i]
		}
		slices.SortFunc(eps, func(a, b *api.EndpointSlice) int {
			if a.AddressType != b.AddressType {
				if string(a.AddressType) == string(preferred) {
					return -1
				}
				if string(b.AddressType) == string(preferred) {
					return 1
				}
			}
			return rank[a] - rank[b]
		})
	}
	for _, s := range eps {
		for _, p := range s.Ports {
			if p.Name == nil || *p.Name != portName || p.Port == nil || len(s.Endpoints) == 0 {
				continue
			}
			offset := rand.IntN(len(s.Endpoints))
			for i := range s.Endpoints {
				ep := &s.Endpoints[(i+offset)%len(s.Endpoints)]
				if ep.Conditions.Ready != nil && !*ep.Conditions.Ready || len(ep.Addresses) == 0 {
					continue
				}
				if valid != nil && !valid(ep) {
					continue
				}
				return net.JoinHostPort(ep.Addresses[0], strconv.Itoa(int(*p.Port))), nil
			}
		}
	}
	return "", apierrors.NewServiceUnavailable(fmt.Sprintf("no endpoints available for service %q", svcName))
}

// Kubelet is how the apiserver reaches one node's kubelet.
type Kubelet struct {
	Scheme, Host, Port string
	// Transport carries the apiserver's kubelet client certificate.
	Transport http.RoundTripper
}

// NodeLocation is the URL and transport for a request to node
// "scheme:name:port" whose kubelet is k (looked up by name): the kubelet's
// own port (no port, or the kubelet's) goes over the kubelet transport,
// any other port over proxyTransport with the scheme asked for. The
// node's address must resolve to global unicast addresses only.
func NodeLocation(ctx context.Context, k Kubelet, scheme, port string, proxyTransport http.RoundTripper) (*url.URL, http.RoundTripper, error) {
	if err := proxyableHost(ctx, k.Host); err != nil {
		return nil, nil, apierrors.NewBadRequest(err.Error())
	}
	if port == "" || port == k.Port {
		return &url.URL{Scheme: k.Scheme, Host: net.JoinHostPort(k.Host, k.Port)}, k.Transport, nil
	}
	return &url.URL{Scheme: scheme, Host: net.JoinHostPort(k.Host, port)}, proxyTransport, nil
}

func proxyableHost(ctx context.Context, host string) error {
	addrs, err := net.DefaultResolver.LookupIPAddr(ctx, host)
	if err != nil {
		return err
	}
	if len(addrs) == 0 {
		return fmt.Errorf("no addresses for hostname")
	}
	for _, a := range addrs {
		if !a.IP.IsGlobalUnicast() {
			return fmt.Errorf("address not allowed")
		}
	}
	return nil
}
