// Package daemon holds what every minik8s daemon shares around its real
// work. Command is the one command-line skeleton (component-base's, on
// cobra and pflag; the only place daemons use cobra): flags in --help
// sections (FlagSets), the same logging flags (-v/--v, --log-level,
// --logging-format), -h/--help and --version, a versioned --config file
// whose fields set the flags the command line leaves unset (ConfigFile),
// one line on stderr and exit code 2 for a wrong command line, 1 for a bad
// file or a failure, and a context that ends on SIGINT or SIGTERM (a
// second signal exits at once). Besides: the /healthz, /livez, /readyz
// and /metrics HTTP endpoints (ServeAndRun serves them beside a daemon's
// work, InformerSyncCheck holds /readyz until its caches synced),
// listening on sockets inherited from the parent process (Listen), the
// API client flags (--kubeconfig, --master, --kube-api-qps,
// --kube-api-burst) and the leader election flags.
package daemon
