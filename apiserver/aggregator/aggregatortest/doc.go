// Package aggregatortest registers a test extension apiserver with a real
// apiserver: an HTTPS server on a host address with its own CA, a Service and an
// EndpointSlice pointing at it, and an APIService for its group/version,
// so tests exercise the aggregator's proxy, discovery and availability
// exactly as an extension apiserver in a cluster would.
package aggregatortest
