// Package ingress is minik8s' built-in ingress controller: it serves the
// networking.k8s.io/v1 Ingresses of its IngressClass over HTTP and HTTPS,
// proxying each request with net/http/httputil.ReverseProxy to a ready
// endpoint of the backend Service.
//
// Which Ingresses: those whose spec.ingressClassName names an IngressClass
// whose spec.controller is the controller's (--controller-class,
// "minik8s.io/ingress-controller"); those without that field whose
// deprecated kubernetes.io/ingress.class annotation names --ingress-class
// or an IngressClass of the controller; and those with neither when the
// default IngressClass (annotation ingressclass.kubernetes.io/is-default-class
// "true", the newest when several, as the DefaultIngressClass admission
// plugin picks) is the controller's. Others are left alone.
//
// Routing follows the Ingress API: a request's Host (port and trailing dot
// dropped, lower case) selects the rules of that exact host, else of the
// wildcard host "*.suffix" matching exactly one more label, else the rules
// without a host. Among that host's paths the longest match wins and Exact
// beats Prefix at equal length; Prefix matches element by element on "/"
// (/foo matches /foo, /foo/ and /foo/bar, not /foobar; a trailing slash of
// the rule is ignored); ImplementationSpecific is matched as Prefix here.
// Rules of several Ingresses for the same host are merged, the oldest
// Ingress first. A host whose paths do not match goes to the
// spec.defaultBackend of the oldest Ingress with rules for it that has one,
// as ingress-nginx does; a request of no host rule goes to the host-less
// rules, then to the oldest Ingress' spec.defaultBackend. Nothing left
// answers 404; a backend Service that is missing, lacks the port, or has no
// ready endpoint answers 503. Backends are resolved from EndpointSlices to
// the ready endpoints (ready unset counts as ready) and picked round-robin;
// an ExternalName Service proxies to its name. Resource backends are not
// supported (503).
//
// TLS: spec.tls entries name kubernetes.io/tls Secrets of the Ingress'
// namespace; a ClientHello's server name gets the certificate listed for
// that exact host, else for the wildcard host, else one of an entry without
// hosts whose certificate is valid for the name, else a self-signed
// certificate made at start. HTTPS requests are then routed as HTTP ones.
//
// Every Ingress, IngressClass, Service, EndpointSlice and TLS Secret
// change, seen through shared informers, rebuilds an immutable routing
// table that is swapped atomically: a request uses the table it started
// with, so an update never drops one in flight, and servers never restart.
// The status.loadBalancer.ingress of each owned Ingress is set to the
// --publish-address values (an IP as ip, a name as hostname) through the
// status subresource, only when it differs. /healthz, /livez, /readyz and
// /metrics (ingress_controller_requests_total by namespace, ingress,
// service and status) are served over HTTPS on --secure-port (10254,
// ingress-nginx's port of them), each request authenticated and
// authorized by delegation to the apiserver as kube-scheduler's are
// (internal/secureserving): the health paths are open to anyone, /metrics
// needs get on the non-resource URL /metrics.
package ingress
