// Package runtime is the kubelet's only door to containerd: it pulls images,
// sets up pod sandboxes (by default a network namespace of the pod's own,
// bind-mounted under /var/run/netns and recorded as a task-less containerd
// container; optionally a pause container), runs app containers joining
// them, writes their output to CRI log files, executes commands in them,
// and reads their state back from containerd labels and tasks so a
// restarted kubelet can re-adopt what is running.
package runtime
