// Package layers holds no code: its tests keep the house's layering rules
// true, and this page draws the layers so the next engineer sees the house
// before reading a file. Arrows point from importer to imported; nothing
// imports upwards.
//
//	 binaries (main.go: flags -> wiring -> Run(ctx))
//	 apiserver   scheduler   controller-manager   kubelet   kubectl-lite
//	     |           |               |               |            |
//	 composition roots: */app (kubectl-lite/cmd/root assembles the verbs)
//	     |           |               |               |            |
//	 apiserver/*  scheduler/*  controller-manager/*  kubelet/*  kubectl-lite/cmd/VERB
//	 registry,    framework,   one package per       pods (core) -> runtime
//	 server,      plugins,     controller, each      interface <- drivers:
//	 storage,     queue,       built on              containerd (production),
//	 admission... cache        controller.Loop       fake (tests, hollow nodes)
//	     |           \              /                    |       libraries beside
//	     |            internal/podplacement              |       cmd/: resource,
//	     |            (node affinity, taints)            |       printers, podselect,
//	     |                                               |       describers...
//	 internal/*: client, informer, cache, workqueue, leaderelection, events,
//	             pki, daemon (health, metrics), httpstream, kubeconfig
//	     |
//	 api/*: the types, the kind table (api/kinds.go), defaulting, validation,
//	        selectors, patches, Status errors — imports nothing internal
//
// The rules the tests check (go list, so a new import that breaks one
// fails make test):
//   - api imports nothing internal;
//   - the kubelet's pod manager links no container runtime driver, and the
//     production kubelet links no test image builder;
//   - nothing under controller-manager links the scheduler: shared
//     predicates live in internal/podplacement;
//   - no kubectl-lite verb imports another verb.
package layers
