// Package endpoints is kube's endpoints controller: for every Service with
// a selector it keeps an Endpoints object of the same name listing the
// matching pods' IPs as ready or not-ready addresses (with node name and
// target reference) and the service's ports resolved per pod, by number or
// by named container port.
package endpoints
