package framework

import (
	"github.com/minik8s/minik8s/api"
)

// Defaults the scoring plugins assume for a container that requests no cpu
// or memory, so best-effort pods still spread (kube's
// DefaultMilliCPURequest and DefaultMemoryRequest).
const (
	DefaultMilliCPURequest int64 = 100               // 0.1 core
	DefaultMemoryRequest   int64 = 200 * 1024 * 1024 // 200 MiB
)

// Resource is an amount of compute resources in integer units: millicores,
// bytes, pod slots, and scalar (extended) resources by name.
type Resource struct {
	MilliCPU         int64
	Memory           int64
	EphemeralStorage int64
	AllowedPodNumber int64
	Scalar           map[api.ResourceName]int64
}

// NewResource converts a ResourceList.
func NewResource(rl api.ResourceList) Resource {
	var r Resource
	r.Add(rl)
	return r
}

// Add adds the amounts of rl.
func (r *Resource) Add(rl api.ResourceList) {
	for name, q := range rl {
		switch name {
		case api.ResourceCPU:
			r.MilliCPU += q.MilliValue()
		case api.ResourceMemory:
			r.Memory += q.Value()
		case api.ResourceEphemeralStorage:
			r.EphemeralStorage += q.Value()
		case api.ResourcePods:
			r.AllowedPodNumber += q.Value()
		default:
			if isScalar(name) {
				if r.Scalar == nil {
					r.Scalar = map[api.ResourceName]int64{}
				}
				r.Scalar[name] += q.Value()
			}
		}
	}
}

// isScalar reports whether name is an extended or hugepages resource the
// scheduler accounts for (kube: domain-prefixed names and hugepages-*).
func isScalar(name api.ResourceName) bool {
	s := string(name)
	if len(s) > 10 && s[:10] == "hugepages-" {
		return true
	}
	for i := 0; i < len(s); i++ {
		if s[i] == '/' {
			return s[:i] != "kubernetes.io" && s[:i] != "requests.kubernetes.io"
		}
	}
	return false
}

// AddResource adds o to r.
func (r *Resource) AddResource(o Resource) {
	r.MilliCPU += o.MilliCPU
	r.Memory += o.Memory
	r.EphemeralStorage += o.EphemeralStorage
	r.AllowedPodNumber += o.AllowedPodNumber
	for k, v := range o.Scalar {
		if r.Scalar == nil {
			r.Scalar = map[api.ResourceName]int64{}
		}
		r.Scalar[k] += v
	}
}

// SubResource subtracts o from r.
func (r *Resource) SubResource(o Resource) {
	r.MilliCPU -= o.MilliCPU
	r.Memory -= o.Memory
	r.EphemeralStorage -= o.EphemeralStorage
	r.AllowedPodNumber -= o.AllowedPodNumber
	for k, v := range o.Scalar {
		if r.Scalar != nil {
			r.Scalar[k] -= v
		}
	}
}

// Clone returns a deep copy.
func (r Resource) Clone() Resource {
	if r.Scalar != nil {
		m := make(map[api.ResourceName]int64, len(r.Scalar))
		for k, v := range r.Scalar {
			m[k] = v
		}
		r.Scalar = m
	}
	return r
}

// maxResource sets r to the element-wise maximum of r and o.
func (r *Resource) maxResource(o Resource) {
	r.MilliCPU = max(r.MilliCPU, o.MilliCPU)
	r.Memory = max(r.Memory, o.Memory)
	r.EphemeralStorage = max(r.EphemeralStorage, o.EphemeralStorage)
	for k, v := range o.Scalar {
		if r.Scalar == nil {
			r.Scalar = map[api.ResourceName]int64{}
		}
		r.Scalar[k] = max(r.Scalar[k], v)
	}
}

// PodRequests computes what a pod asks of a node the way the kubelet admits
// it: the sum of its containers and restartable (sidecar) init containers,
// or the largest one-shot init container plus the sidecars started before
// it, whichever is larger, plus the pod overhead. nonZero is the same with
// cpu and memory defaulted per container (DefaultMilliCPURequest,
// DefaultMemoryRequest) for scoring.
func PodRequests(pod *api.Pod) (req, nonZero Resource) {
	add := func(r, nz *Resource, c *api.Container) {
		cr := NewResource(c.Resources.Requests)
		r.AddResource(cr)
		if _, ok := c.Resources.Requests[api.ResourceCPU]; !ok {
			cr.MilliCPU = DefaultMilliCPURequest
		}
		if _, ok := c.Resources.Requests[api.ResourceMemory]; !ok {
			cr.Memory = DefaultMemoryRequest
		}
		nz.AddResource(cr)
	}
	for i := range pod.Spec.Containers {
		add(&req, &nonZero, &pod.Spec.Containers[i])
	}
	var sidecars, sidecarsNZ Resource
	var initMax, initMaxNZ Resource
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		if c.RestartPolicy != nil && *c.RestartPolicy == api.ContainerRestartPolicyAlways {
			add(&sidecars, &sidecarsNZ, c)
			continue
		}
		var one, oneNZ Resource
		add(&one, &oneNZ, c)
		one.AddResource(sidecars)
		oneNZ.AddResource(sidecarsNZ)
		initMax.maxResource(one)
		initMaxNZ.maxResource(oneNZ)
	}
	req.AddResource(sidecars)
	nonZero.AddResource(sidecarsNZ)
	req.maxResource(initMax)
	nonZero.maxResource(initMaxNZ)
	if pod.Spec.Overhead != nil {
		o := NewResource(pod.Spec.Overhead)
		req.AddResource(o)
		nonZero.AddResource(o)
	}
	return req, nonZero
}
