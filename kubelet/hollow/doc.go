// Package hollow runs hollow nodes (Kubernetes' kubemark, or kwok): the
// kubelet's own node status manager and pod manager (kubelet/nodestatus,
// kubelet/pods) over the in-memory runtime (kubelet/runtime/fake) and a
// pod network on paper (Network), so a Node registers, heartbeats its
// Lease every 10 s, reports its status and runs the pods bound to it —
// Running with pod IPs from its podCIDR, probes answered, graceful
// deletion honoured — at the real kubelet's cadences, without
// containerd, CNI, cgroups, iptables or a kubelet server.
//
// What is not real, and why:
//   - containers: the fake runtime starts nothing; a container runs until
//     its pod is deleted (exec and exec probes exit 0);
//   - the network: Network hands out addresses of the node's podCIDR (a
//     /24 of its own while it has none) and attaches nothing;
//   - network probes (httpGet, tcpSocket, grpc): answered by the hollow
//     node, which only checks the probe's port resolves, through
//     probes.WithNetworkProber, so nothing dials an address nobody serves;
//     postStart/preStop httpGet hooks still dial (kubelet/pods does them),
//     so do not give them to pods on hollow nodes; likewise an emptyDir
//     of medium Memory is a real tmpfs mount when the process is root;
//   - the machine: capacity is Config.Capacity (4 CPU, 16Gi memory, 100Gi
//     ephemeral storage by default), never under pressure;
//   - the node address: a loopback address (127.1.0.0/16 and up), so the
//     apiserver's or a metrics scraper's dial to a hollow kubelet ends on
//     this machine.
//
// Each node acts as system:node:NAME in the group system:nodes, so the
// Node authorizer and NodeRestriction admission check it as a kubelet:
// Fleet derives each node's client from one base client (an identity
// allowed to impersonate, such as system:masters) with
// client.Impersonating, so N nodes share one connection pool and one QPS
// budget; their heartbeats (registration, Lease, status) may go through a
// second base client, which the hollow-nodes command builds without a rate
// limit as kube's kubelet builds its heartbeat client. Each pod manager
// keeps the kubelet's informers (its own pods by spec.nodeName, its Node,
// the Services), as a real kubelet would.
//
// Real nodes join a cluster over time; a fleet started at once would send
// every registration, list and watch in the same second. Fleet starts its
// nodes in index order with at most FleetConfig.StartConcurrency (100 by
// default) in their start phase at once, from the node's Run until its
// Node is registered and its pod manager's informers have synced
// (Node.WaitStarted), and optionally at most StartQPS a second.
//
// NewCommand is the hollow-nodes command (internal/cmd/hollow-nodes): N
// hollow nodes in one process, with /healthz, /readyz and /metrics.
package hollow
