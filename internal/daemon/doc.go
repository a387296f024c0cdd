// Package daemon holds what every minik8s daemon shares around its real work:
// the command line (Command.Main: parse, validate, run; one line on stderr
// and exit code 2 for a wrong flag, 1 for a failure), the /healthz, /livez,
// /readyz and /metrics HTTP endpoints, listening on sockets inherited from
// the parent process (Listen), the API client flags (--kubeconfig,
// --kube-api-qps, --kube-api-burst), the leader election flags, and a
// context that ends on SIGINT or SIGTERM.
package daemon
