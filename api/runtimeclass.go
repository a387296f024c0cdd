package api

// node.k8s.io/v1 RuntimeClasses, with every field of k8s.io/api v0.37.2.
// They are served and validated; the kubelet does not select a runtime
// handler by them yet.

// RuntimeClass defines a class of container runtime supported in the cluster.
type RuntimeClass struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata"`
	Handler    string      `json:"handler"`
	Overhead   *Overhead   `json:"overhead,omitempty"`
	Scheduling *Scheduling `json:"scheduling,omitempty"`
}

// Overhead structure represents the resource overhead associated with running
// a pod.
type Overhead struct {
	PodFixed ResourceList `json:"podFixed,omitempty"`
}

// Scheduling specifies the scheduling constraints for nodes supporting a
// RuntimeClass.
type Scheduling struct {
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`
	Tolerations  []Toleration      `json:"tolerations,omitempty"`
}
