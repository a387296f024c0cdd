// Package runtime is the kubelet's driver contract: the driver-neutral
// types of pod sandboxes and containers (Container, State, SandboxConfig,
// ContainerConfig, Security, Mount, TerminalSize), the image reference rules kube
// applies to a pod's images, and the interfaces a container runtime driver
// implements for the pod manager (Runtime, and the optional abilities
// Adopter, Execer, Attacher and CgroupCleaner), after Kubernetes'
// kubecontainer package and Nomad's driver plugin. It imports no driver:
// kubelet/runtime/containerd implements it over containerd and
// kubelet/runtime/fake in memory; only the kubelet's composition root
// (kubelet/app) and tests choose one.
package runtime
