// Package app wires the kubelet: credentials (kubeconfig or bootstrap
// join), the runtime driver (containerd's Go client, or CRI with
// --container-runtime-endpoint), CNI networking, the pod manager,
// node registration and status, the HTTPS streaming server and the health
// and metrics endpoints, and runs them until the context ends. It is the
// kubelet's composition root, the only production package that names a
// runtime driver; the other packages see each other through small
// interfaces it satisfies with adapters (Executor, RuntimeContainers):
//
//	composition root   app: flags, Run; picks the driver, wires the rest
//	       |
//	       v
//	core               pods (workers, sync, status; uses probes, volume,
//	                   token, network), server (logs, exec, attach,
//	                   port-forward, stats), stats, nodestatus (Node,
//	                   Lease), network (CNI; the service proxy, NetworkPolicies and pod routes
//	                   are kube-proxy's, see kube-proxy/app)
//	       |
//	       v  the runtime only through
//	driver contract    runtime: Container, SandboxConfig, ContainerConfig,
//	                   image rules; Runtime + optional Adopter, Execer,
//	                   Attacher, CgroupCleaner, NetworkOwner, ...
//	       ^                        ^                     ^
//	       | implements             | implements          | implements
//	drivers            runtime/containerd   runtime/cri           runtime/fake
//	                   (containerd v2       (CRI v1 over gRPC:    (in memory,
//	                   client, netns, CRI   containerd's CRI      records actions:
//	                   log files)           plugin, CRI-O; owns   unit tests,
//	                                        the pod network)      hollow nodes)
//
// The test image builder (kubelet/testimage) is linked by tests only.
package app
