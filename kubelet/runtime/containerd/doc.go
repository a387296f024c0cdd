// Package containerd is the kubelet's container runtime driver over
// containerd, and the kubelet's only door to it: it implements
// kubelet/runtime's Runtime (with Adopter, Execer, Attacher and
// CgroupCleaner) with the containerd v2 Go client. It pulls images, sets up
// pod sandboxes (by default a network namespace of the pod's own,
// bind-mounted under /var/run/netns and recorded as a task-less containerd
// container; optionally a pause container), runs app containers joining
// them with their security context applied as containerd's CRI plugin
// applies it (user and groups, capabilities, privileged, no_new_privs,
// read-only root, seccomp, AppArmor, masked paths), writes their output to CRI log files, executes commands in and
// attaches to them, and reads their state back from containerd labels and
// tasks so a restarted kubelet can re-adopt what is running. Within this
// package the containerd client is imported under its usual name,
// containerd, as in containerd's own documentation.
package containerd
