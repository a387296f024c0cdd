// Package cri is the kubelet's runtime driver over the Container Runtime
// Interface (CRI v1, k8s.io/cri-api): pod sandboxes, containers, images,
// exec and attach through a runtime's RuntimeService and ImageService on a
// unix socket, as kube's kuberuntime drives them. It runs pods on
// containerd's CRI plugin (unix:///run/containerd/containerd.sock, the
// "k8s.io" namespace) or CRI-O.
//
// The runtime owns the pod network: it attaches each sandbox with the CNI
// configuration the kubelet writes (kubelet/network) and reports the pod
// IP in the sandbox status, so the driver implements runtime.NetworkOwner
// and the pod manager does no CNI calls of its own.
//
// Sandboxes and containers carry kube's labels (io.kubernetes.pod.name,
// .namespace, .uid, io.kubernetes.container.name) and annotations
// (io.kubernetes.container.hash, .restartCount); what minik8s needs beyond
// them to rebuild a runtime.Container after a kubelet restart (init,
// ephemeral, the pod's image string) is in io.minik8s.* annotations. Logs
// are the runtime's: the sandbox's log_directory is
// PODLOGS/NAMESPACE_NAME_UID and each container's log_path
// NAME/RESTARTCOUNT.log under it, in the CRI log format.
//
// CRI has no exit notification in containerd 1.6 (GetContainerEvents came
// later), so a relist loop, like kube's generic PLEG, reports exits to
// OnExit. Exec without stdin or a terminal (probes, hooks) is ExecSync;
// interactive exec and attach go through the runtime's streaming server
// (the URL Exec/Attach return) with client-go's SPDY remotecommand, as
// crictl does.
package cri
