// Package layers holds no code: its tests keep the house's layering rules
// true, and this page draws the layers so the next engineer sees the house
// before reading a file. Each layer imports only the layers below it.
//
//	main.go of each binary: flags -> */app (the composition root) -> Run(ctx)
//
//	apiserver/      registry (REST per kind: strategies, storage versions),
//	                server (HTTP, chi), storage + cacher (etcd, watch cache),
//	                admission, authn, authz, openapi, printers, fieldmanager
//	scheduler/      scheduling (the cycle) -> framework <- plugins
//	controller-manager/
//	                one package per controller, each built on
//	                controller.Loop (queue, cache waits, workers, metrics)
//	                or controller.Periodic, with the shared event handlers
//	kubelet/        pods (the pod workers, the core) -> runtime (the driver
//	                interface and its types) <- runtime/containerd (the
//	                production driver, wired in by kubelet/app alone),
//	                runtime/fake (tests, hollow nodes); network (CNI),
//	                probes, volume, nodestatus, server, proxy
//	kubectl-lite/   cmd/root -> cmd/VERB (flags only) -> libraries beside
//	                cmd/: resource, printers, describers, podselect,
//	                attachsession, applyobject, manifest, cli, ...
//
//	internal/       podplacement (node affinity, taints: the scheduler's
//	                plugins and the DaemonSet controller), client, informer,
//	                cache, workqueue, leaderelection, events, pki, daemon
//	                (health, metrics), secureserving (their HTTPS with
//	                delegated authn/authz), httpstream, kubeconfig
//	api/            the types, the kind table (api/kinds.go), defaulting,
//	                validation, selectors, patches, Status errors
//
// The rules the tests check with go list, so that an import breaking one
// fails make test:
//   - api imports nothing internal;
//   - the kubelet's pod manager links no container runtime driver, and the
//     production kubelet links no test image builder;
//   - nothing under controller-manager links the scheduler;
//   - no kubectl-lite verb imports another verb.
package layers
