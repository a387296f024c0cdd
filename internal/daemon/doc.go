// Package daemon holds what every minik8s daemon shares around its real work:
// the /healthz, /livez, /readyz and /metrics HTTP endpoints, the API client
// flags (--kubeconfig, --kube-api-qps, --kube-api-burst), the leader election
// flags, and a context that ends on SIGINT or SIGTERM.
package daemon
