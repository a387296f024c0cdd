// Package metricsserver is minik8s' metrics server: it scrapes every
// node's kubelet /metrics/resource each resolution period, keeps the last
// two readings of each node and container, and serves the rates as
// metrics.k8s.io/v1beta1 NodeMetrics and PodMetrics through API
// aggregation (an APIService pointing at its Service), the API
// sigs.k8s.io/metrics-server serves and kubectl top and the
// HorizontalPodAutoscaler read.
//
// Like metrics-server, CPU usage is the rise of the cumulative CPU counter
// between two scrapes divided by the time between their readings (the
// window), memory the last working set; a container or node seen once, or
// whose counter went back (a restart), has no metrics yet. Callers are
// authenticated by request-header authentication (the apiserver's
// front-proxy client certificate and X-Remote-User); authorization is
// left to the apiserver, which authorizes every request before proxying
// it (metrics-server delegates it to a SubjectAccessReview instead).
package metricsserver
