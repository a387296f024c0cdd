// Package proxy is the apiserver's HTTP proxy to pods, services and
// kubelets: the proxy subresources pods/NAME/proxy, services/NAME/proxy
// and nodes/NAME/proxy, as kube-apiserver serves them.
//
// location.go turns the addressed object ("name", "name:port" or
// "scheme:name:port") into the URL the request goes to, with kube's
// checks and messages: a pod by its first pod IP (a global unicast one
// only) and its first declared port unless one is named, a Service by
// a ready endpoint of its EndpointSlices that is a pod of that IP, a node
// by its kubelet (the kubelet's transport, client certificate included,
// for the kubelet's port; the plain proxy transport for any other).
// handler.go proxies one request there: every method, upgrades
// (WebSocket, SPDY) spliced through, ".../proxy" redirected to
// ".../proxy/" for GET and HEAD, and the answer's Location header and
// the links of an HTML answer rewritten to go through the apiserver again
// (rewrite.go); any other body passes through unchanged.
package proxy
