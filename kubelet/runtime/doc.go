// Package runtime is the kubelet's driver contract: the driver-neutral
// types of pod sandboxes and containers (Container, State, SandboxConfig,
// ContainerConfig, Security, Mount, TerminalSize), the image reference rules kube
// applies to a pod's images, and the interfaces a container runtime driver
// implements for the pod manager (Runtime, and the optional abilities
// Adopter, Execer, Attacher, ResourceUpdater, CgroupCleaner, ImageMounter
// and NetworkOwner), after Kubernetes' kubecontainer package and Nomad's
// driver plugin. It imports no driver: kubelet/runtime/containerd
// implements it over containerd's Go client, kubelet/runtime/cri over any
// CRI v1 runtime (containerd's CRI plugin, CRI-O), kubelet/runtime/fake in
// memory; only the kubelet's composition root (kubelet/app) and tests
// choose one. A NetworkOwner's runtime attaches pods to the pod network
// itself (CRI), so the pod manager runs no CNI for it.
package runtime
