// Package pods is the kubelet's pod manager: it watches the pods bound to
// its node, runs one worker per pod that makes the container runtime match
// the pod (volumes and sandbox and network, init containers in order, app
// containers with restart policy and CrashLoopBackOff, image pulls with
// ImagePullBackOff, probes, graceful deletion) and reports the pod's status
// through /status. Each container's securityContext is
// merged with the pod's as kube's kuberuntime does and handed to the
// runtime (runAsNonRoot is checked first: CreateContainerConfigError);
// volumes belong to the pod's fsGroup. Volumes are set up before the sandbox (FailedMount
// keeps a pod ContainerCreating), a subPath is bind-mounted from a
// kubelet-owned target that cannot lead out of its volume (kubelet/subpath)
// and the API-backed ones (kubelet/volume)
// are written again every VolumeResyncPeriod while the pod runs, which is
// how edited ConfigMaps and refreshed service account tokens (kubelet/token)
// reach its containers. It knows no driver: it sees the runtime only
// through kubelet/runtime's interfaces (the kubelet wires in the containerd
// driver, its unit tests kubelet/runtime/fake) and the pod network through
// its own Network interface.
package pods
