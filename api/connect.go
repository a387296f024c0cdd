package api

// The options of a CONNECT to a pod's exec, attach, portforward and
// proxy subresources (and to services/proxy and nodes/proxy), decoded from the request's query: admission sees them as
// the object of a CONNECT (a webhook's request.object, a policy's object),
// as in Kubernetes. They have no metadata.

// PodExecOptions is the query of pods/NAME/exec.
type PodExecOptions struct {
	TypeMeta  `json:",inline"`
	Stdin     bool     `json:"stdin,omitempty"`
	Stdout    bool     `json:"stdout,omitempty"`
	Stderr    bool     `json:"stderr,omitempty"`
	TTY       bool     `json:"tty,omitempty"`
	Container string   `json:"container,omitempty"`
	Command   []string `json:"command"`
}

// PodAttachOptions is the query of pods/NAME/attach.
type PodAttachOptions struct {
	TypeMeta  `json:",inline"`
	Stdin     bool   `json:"stdin,omitempty"`
	Stdout    bool   `json:"stdout,omitempty"`
	Stderr    bool   `json:"stderr,omitempty"`
	TTY       bool   `json:"tty,omitempty"`
	Container string `json:"container,omitempty"`
}

// PodPortForwardOptions is the query of pods/NAME/portforward.
type PodPortForwardOptions struct {
	TypeMeta `json:",inline"`
	Ports    []int32 `json:"ports,omitempty"`
}

// PodProxyOptions is the path of pods/NAME/proxy/PATH.
type PodProxyOptions struct {
	TypeMeta `json:",inline"`
	// Path is the URL path the request is proxied to, the part after
	// proxy (with its leading slash).
	Path string `json:"path,omitempty"`
}

// ServiceProxyOptions is the path of services/NAME/proxy/PATH.
type ServiceProxyOptions struct {
	TypeMeta `json:",inline"`
	Path     string `json:"path,omitempty"`
}

// NodeProxyOptions is the path of nodes/NAME/proxy/PATH.
type NodeProxyOptions struct {
	TypeMeta `json:",inline"`
	Path     string `json:"path,omitempty"`
}

// GetObjectMeta implements Object: options have no metadata (nil), so an
// admission objectSelector never matches them, as in Kubernetes.
func (*PodExecOptions) GetObjectMeta() *ObjectMeta { return nil }

// GetObjectMeta implements Object: no metadata.
func (*PodAttachOptions) GetObjectMeta() *ObjectMeta { return nil }

// GetObjectMeta implements Object: no metadata.
func (*PodPortForwardOptions) GetObjectMeta() *ObjectMeta { return nil }

// GetObjectMeta implements Object: no metadata.
func (*PodProxyOptions) GetObjectMeta() *ObjectMeta { return nil }

// GetObjectMeta implements Object: no metadata.
func (*ServiceProxyOptions) GetObjectMeta() *ObjectMeta { return nil }

// GetObjectMeta implements Object: no metadata.
func (*NodeProxyOptions) GetObjectMeta() *ObjectMeta { return nil }
