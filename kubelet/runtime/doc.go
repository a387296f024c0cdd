// Package runtime is the kubelet's only door to containerd: it pulls images,
// runs pod sandboxes (a pause container owning the pod's network, IPC and UTS
// namespaces) and app containers joining them, writes their output to CRI log
// files, executes commands in them, and reads their state back from
// containerd so a restarted kubelet can re-adopt what is running.
package runtime
