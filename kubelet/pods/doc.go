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
// reach its containers. A persistentVolumeClaim volume is resolved as kube's
// volume manager does (claim Bound and not being deleted, its volume bound
// back to it; else FailedMount "Unable to attach or mount volumes" and the
// pod waits), then its hostPath or local PersistentVolume is used in place
// on the node: the volume's node affinity must admit the node, a hostPath
// is checked (or created) by its type, a local path must exist, and only
// local volumes take the fsGroup, as in kube. It knows no driver: it sees
// the runtime only through kubelet/runtime's interfaces (the kubelet wires in the containerd
// driver, its unit tests kubelet/runtime/fake) and the pod network through
// its own Network interface.
//
// Static pods (kubelet/staticpods, given through SetStaticPods) run
// through the same workers, also before and without the apiserver; each
// gets a mirror pod in the API (config.mirror = its hash, owned by the
// Node) that carries its status, is created again when deleted, replaced
// when the manifest changes and deleted with it. Mirror pods from the API
// are never run.
package pods
