package quota

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/labels"
	"github.com/minik8s/minik8s/api/resource"
)

// Quota resource names with a meaning of their own.
const (
	Pods                   api.ResourceName = "pods"
	Services               api.ResourceName = "services"
	ServicesNodePorts      api.ResourceName = "services.nodeports"
	ServicesLoadBalancers  api.ResourceName = "services.loadbalancers"
	PersistentVolumeClaims api.ResourceName = "persistentvolumeclaims"
	RequestsStorage        api.ResourceName = "requests.storage"
	RequestsCPU            api.ResourceName = "requests.cpu"
	RequestsMemory         api.ResourceName = "requests.memory"
	RequestsEphemeral      api.ResourceName = "requests.ephemeral-storage"
	LimitsCPU              api.ResourceName = "limits.cpu"
	LimitsMemory           api.ResourceName = "limits.memory"
	LimitsEphemeral        api.ResourceName = "limits.ephemeral-storage"

	requestsPrefix     = "requests."
	hugePagesPrefix    = "hugepages-"
	storageClassSuffix = ".storageclass.storage.k8s.io/"
)

// Scopes, as ResourceQuotaSpec.scopes and scopeSelector name them.
const (
	ScopeTerminating               = "Terminating"
	ScopeNotTerminating            = "NotTerminating"
	ScopeBestEffort                = "BestEffort"
	ScopeNotBestEffort             = "NotBestEffort"
	ScopePriorityClass             = "PriorityClass"
	ScopeCrossNamespacePodAffinity = "CrossNamespacePodAffinity"
	ScopeVolumeAttributesClass     = "VolumeAttributesClass"
)

// GroupResource names a resource.
type GroupResource struct{ Group, Resource string }

// ObjectCountName is the "count/RESOURCE[.GROUP]" name of gr.
func ObjectCountName(gr GroupResource) api.ResourceName {
	if gr.Group == "" {
		return api.ResourceName("count/" + gr.Resource)
	}
	return api.ResourceName("count/" + gr.Resource + "." + gr.Group)
}

// legacyCountNames are the object counts that predate count/*.
var legacyCountNames = map[string]api.ResourceName{
	"configmaps": "configmaps", "secrets": "secrets",
	"replicationcontrollers": "replicationcontrollers", "resourcequotas": "resourcequotas",
}

var (
	podResources = []api.ResourceName{
		api.ResourceCPU, api.ResourceMemory, api.ResourceEphemeralStorage, RequestsCPU, RequestsMemory,
		RequestsEphemeral, LimitsCPU, LimitsMemory, LimitsEphemeral, Pods,
	}
	serviceResources = []api.ResourceName{Services, ServicesNodePorts, ServicesLoadBalancers}
	claimResources   = []api.ResourceName{PersistentVolumeClaims, RequestsStorage}
	// explicitRequired are what a quota makes each container state, a
	// Kubernetes compatibility rule kept only for cpu and memory.
	explicitRequired = []api.ResourceName{api.ResourceCPU, api.ResourceMemory, RequestsCPU, RequestsMemory, LimitsCPU, LimitsMemory}
)

// Tracked reports whether the admission plugin charges quota for an
// operation ("CREATE" or "UPDATE") on gr's subresource sub: creates of
// every resource; updates of services and claims, and of pods whose
// Terminating scope changed or that are resized.
func Tracked(gr GroupResource, op, sub string, obj, old api.Object) bool {
	core := gr.Group == ""
	switch {
	case core && gr.Resource == "pods":
		switch sub {
		case "":
			if op == "UPDATE" {
				p, ok1 := obj.(*api.Pod)
				o, ok2 := old.(*api.Pod)
				return ok1 && ok2 && isTerminating(p) != isTerminating(o)
			}
			return op == "CREATE"
		case "resize":
			return op == "UPDATE"
		}
		return false
	case core && (gr.Resource == "services" || gr.Resource == "persistentvolumeclaims"):
		return sub == "" && (op == "CREATE" || op == "UPDATE")
	}
	return sub == "" && op == "CREATE"
}

// MatchingResources are the names among names that gr's objects consume.
func MatchingResources(gr GroupResource, names []api.ResourceName) []api.ResourceName {
	var out []api.ResourceName
	count := ObjectCountName(gr)
	for _, n := range names {
		if n == count {
			out = append(out, n)
			continue
		}
		if gr.Group != "" {
			continue
		}
		switch gr.Resource {
		case "pods":
			if slices.Contains(podResources, n) || strings.HasPrefix(string(n), hugePagesPrefix) ||
				strings.HasPrefix(string(n), requestsPrefix+hugePagesPrefix) || isExtendedQuotaName(n) {
				out = append(out, n)
			}
		case "services":
			if slices.Contains(serviceResources, n) {
				out = append(out, n)
			}
		case "persistentvolumeclaims":
			if slices.Contains(claimResources, n) {
				out = append(out, n)
				continue
			}
			for _, r := range claimResources {
				if strings.HasSuffix(string(n), storageClassSuffix+string(r)) {
					out = append(out, n)
					break
				}
			}
		default:
			if legacy, ok := legacyCountNames[gr.Resource]; ok && n == legacy {
				out = append(out, n)
			}
		}
	}
	return out
}

// Usage is what obj, of resource gr, consumes at now.
func Usage(gr GroupResource, obj api.Object, now time.Time) api.ResourceList {
	out := api.ResourceList{ObjectCountName(gr): one()}
	if gr.Group != "" {
		return out
	}
	switch o := obj.(type) {
	case *api.Pod:
		if gr.Resource == "pods" && Counted(o, now) {
			maps.Copy(out, podUsage(o))
		}
	case *api.Service:
		maps.Copy(out, serviceUsage(o))
	case *api.PersistentVolumeClaim:
		maps.Copy(out, claimUsage(o))
	default:
		if legacy, ok := legacyCountNames[gr.Resource]; ok {
			out[legacy] = one()
		}
	}
	return out
}

func one() resource.Quantity { return resource.MustParse("1") }

func count(n int) resource.Quantity {
	var q resource.Quantity
	q.Set(int64(n))
	return q
}

// Counted reports whether a pod's compute resources (and "pods") count:
// not once it is terminal, nor once its deletion grace period is over.
func Counted(p *api.Pod, now time.Time) bool {
	if p.Status.Phase == api.PodFailed || p.Status.Phase == api.PodSucceeded {
		return false
	}
	if p.DeletionTimestamp != nil && p.DeletionGracePeriodSeconds != nil {
		end := p.DeletionTimestamp.Time.Add(time.Duration(*p.DeletionGracePeriodSeconds) * time.Second)
		if now.After(end) {
			return false
		}
	}
	return true
}

func podUsage(p *api.Pod) api.ResourceList {
	req, lim := PodRequests(p), PodLimits(p)
	out := api.ResourceList{Pods: one()}
	pair := func(from api.ResourceList, name api.ResourceName, names ...api.ResourceName) {
		if q, ok := from[name]; ok {
			for _, n := range names {
				out[n] = q
			}
		}
	}
	pair(req, api.ResourceCPU, api.ResourceCPU, RequestsCPU)
	pair(lim, api.ResourceCPU, LimitsCPU)
	pair(req, api.ResourceMemory, api.ResourceMemory, RequestsMemory)
	pair(lim, api.ResourceMemory, LimitsMemory)
	pair(req, api.ResourceEphemeralStorage, api.ResourceEphemeralStorage, RequestsEphemeral)
	pair(lim, api.ResourceEphemeralStorage, LimitsEphemeral)
	for name, q := range req {
		if strings.HasPrefix(string(name), hugePagesPrefix) {
			out[name] = q
			out[requestsPrefix+name] = q
		}
		if isExtendedResource(name) {
			out[requestsPrefix+name] = q
		}
	}
	return out
}

// PodRequests sums a pod's requests as the scheduler does: its containers
// and restartable (sidecar) init containers, or the largest one-shot init
// container with the sidecars started before it, whichever is larger, plus
// the overhead.
func PodRequests(p *api.Pod) api.ResourceList {
	return podSum(p, func(c *api.Container) api.ResourceList { return c.Resources.Requests }, true)
}

// PodLimits is PodRequests for limits; the overhead is added only to what
// is limited.
func PodLimits(p *api.Pod) api.ResourceList {
	return podSum(p, func(c *api.Container) api.ResourceList { return c.Resources.Limits }, false)
}

func podSum(p *api.Pod, of func(*api.Container) api.ResourceList, overheadAlways bool) api.ResourceList {
	out := api.ResourceList{}
	for i := range p.Spec.Containers {
		out = Add(out, of(&p.Spec.Containers[i]))
	}
	sidecars, initMax := api.ResourceList{}, api.ResourceList{}
	for i := range p.Spec.InitContainers {
		c := &p.Spec.InitContainers[i]
		if c.RestartPolicy != nil && *c.RestartPolicy == api.ContainerRestartPolicyAlways {
			sidecars = Add(sidecars, of(c))
			continue
		}
		initMax = maxOf(initMax, Add(sidecars, of(c)))
	}
	out = maxOf(Add(out, sidecars), initMax)
	for name, q := range p.Spec.Overhead {
		if v, ok := out[name]; ok {
			v.Add(q)
			out[name] = v
		} else if overheadAlways {
			out[name] = q
		}
	}
	return out
}

func maxOf(a, b api.ResourceList) api.ResourceList {
	out := api.ResourceList{}
	maps.Copy(out, a)
	for k, v := range b {
		if cur, ok := out[k]; !ok || v.Cmp(cur) > 0 {
			out[k] = v
		}
	}
	return out
}

// isNativeResource: no domain, or a kubernetes.io one.
func isNativeResource(name api.ResourceName) bool {
	return !strings.Contains(string(name), "/") || strings.Contains(string(name), "kubernetes.io/")
}

// isExtendedResource is a resource a pod may request that is not native
// (example.com/dongle).
func isExtendedResource(name api.ResourceName) bool {
	return !isNativeResource(name) && !strings.HasPrefix(string(name), requestsPrefix)
}

// isExtendedQuotaName is requests.<extended resource>: extended resources
// cannot be overcommitted, so only their requests are quota'd.
func isExtendedQuotaName(name api.ResourceName) bool {
	return strings.HasPrefix(string(name), requestsPrefix) && !isNativeResource(name)
}

func serviceUsage(s *api.Service) api.ResourceList {
	out := api.ResourceList{Services: one(), ServicesLoadBalancers: count(0), ServicesNodePorts: count(0)}
	switch s.Spec.Type {
	case api.ServiceTypeNodePort:
		out[ServicesNodePorts] = count(len(s.Spec.Ports))
	case api.ServiceTypeLoadBalancer:
		n := len(s.Spec.Ports)
		if a := s.Spec.AllocateLoadBalancerNodePorts; a != nil && !*a {
			n = 0
			for _, p := range s.Spec.Ports {
				if p.NodePort != 0 {
					n++
				}
			}
		}
		out[ServicesNodePorts] = count(n)
		out[ServicesLoadBalancers] = one()
	}
	return out
}

func claimUsage(c *api.PersistentVolumeClaim) api.ResourceList {
	out := api.ResourceList{PersistentVolumeClaims: one()}
	class := ""
	if c.Spec.StorageClassName != nil {
		class = *c.Spec.StorageClassName
	} else if v, ok := c.Annotations["volume.beta.kubernetes.io/storage-class"]; ok {
		class = v
	}
	if class != "" {
		out[api.ResourceName(class+storageClassSuffix+string(PersistentVolumeClaims))] = one()
	}
	if q, ok := c.Spec.Resources.Requests[api.ResourceStorage]; ok {
		// Counted in whole bytes, as quota values are.
		q.RoundUp(0)
		if a, ok := c.Status.AllocatedResources[api.ResourceStorage]; ok && a.Cmp(q) > 0 {
			a.RoundUp(0)
			q = a
		}
		out[RequestsStorage] = q
		if class != "" {
			out[api.ResourceName(class+storageClassSuffix+string(RequestsStorage))] = q
		}
	}
	return out
}

// Constraints is what a quota restricting required demands of obj: a pod
// whose containers do not each state the cpu and memory requests and
// limits the quota restricts is refused ("must specify ...").
func Constraints(gr GroupResource, required []api.ResourceName, obj api.Object) error {
	p, ok := obj.(*api.Pod)
	if !ok || gr.Group != "" || gr.Resource != "pods" {
		return nil
	}
	var need []api.ResourceName
	for _, r := range required {
		if slices.Contains(explicitRequired, r) {
			need = append(need, r)
		}
	}
	if len(need) == 0 {
		return nil
	}
	missing := map[api.ResourceName][]string{}
	for _, cs := range [][]api.Container{p.Spec.Containers, p.Spec.InitContainers} {
		for i := range cs {
			c := &cs[i]
			has := podUsage(&api.Pod{Spec: api.PodSpec{Containers: []api.Container{{Resources: c.Resources}}}})
			for _, r := range need {
				if _, ok := has[r]; !ok && !slices.Contains(missing[r], c.Name) {
					missing[r] = append(missing[r], c.Name)
				}
			}
		}
	}
	if len(missing) == 0 {
		return nil
	}
	names := make([]string, 0, len(missing))
	for r := range missing {
		names = append(names, string(r))
	}
	sort.Strings(names)
	parts := make([]string, 0, len(names))
	for _, r := range names {
		cs := missing[api.ResourceName(r)]
		sort.Strings(cs)
		parts = append(parts, fmt.Sprintf("%s for: %s", r, strings.Join(cs, ",")))
	}
	return fmt.Errorf("must specify %s", strings.Join(parts, "; "))
}

// ScopeSelectors are a quota's scopes (each an Exists requirement) and
// its scopeSelector's expressions.
func ScopeSelectors(q *api.ResourceQuota) []api.ScopedResourceSelectorRequirement {
	var out []api.ScopedResourceSelectorRequirement
	for _, s := range q.Spec.Scopes {
		out = append(out, api.ScopedResourceSelectorRequirement{ScopeName: s, Operator: "Exists"})
	}
	if q.Spec.ScopeSelector != nil {
		out = append(out, q.Spec.ScopeSelector.MatchExpressions...)
	}
	return out
}

// Matches reports whether quota q covers obj of resource gr: q restricts
// (in status.hard) something obj consumes, and obj is in every one of q's
// scopes.
func Matches(q *api.ResourceQuota, gr GroupResource, obj api.Object) (bool, error) {
	if len(MatchingResources(gr, ResourceNames(q.Status.Hard))) == 0 {
		return false, nil
	}
	for _, s := range ScopeSelectors(q) {
		ok, err := matchesScope(s, gr, obj)
		if err != nil || !ok {
			return false, err
		}
	}
	return true, nil
}

func matchesScope(s api.ScopedResourceSelectorRequirement, gr GroupResource, obj api.Object) (bool, error) {
	switch o := obj.(type) {
	case *api.Pod:
		if gr.Group != "" || gr.Resource != "pods" {
			return false, nil
		}
		switch s.ScopeName {
		case ScopeTerminating:
			return isTerminating(o), nil
		case ScopeNotTerminating:
			return !isTerminating(o), nil
		case ScopeBestEffort:
			return api.ComputePodQOS(o) == api.PodQOSBestEffort, nil
		case ScopeNotBestEffort:
			return api.ComputePodQOS(o) != api.PodQOSBestEffort, nil
		case ScopePriorityClass:
			if s.Operator == "Exists" {
				return o.Spec.PriorityClassName != "", nil
			}
			var set labels.Set
			if o.Spec.PriorityClassName != "" {
				set = labels.Set{ScopePriorityClass: o.Spec.PriorityClassName}
			}
			return selectorMatches(s, set)
		case ScopeCrossNamespacePodAffinity:
			return crossNamespaceAffinity(o), nil
		}
	case *api.PersistentVolumeClaim:
		if s.ScopeName != ScopeVolumeAttributesClass {
			return false, nil
		}
		class := ""
		if o.Spec.VolumeAttributesClassName != nil {
			class = *o.Spec.VolumeAttributesClassName
		}
		if s.Operator == "Exists" {
			return class != "", nil
		}
		var set labels.Set
		if class != "" {
			set = labels.Set{ScopeVolumeAttributesClass: class}
		}
		return selectorMatches(s, set)
	}
	return false, nil
}

func selectorMatches(s api.ScopedResourceSelectorRequirement, set labels.Set) (bool, error) {
	var op labels.Operator
	switch s.Operator {
	case "In":
		op = labels.OpIn
	case "NotIn":
		op = labels.OpNotIn
	case "Exists":
		op = labels.OpExists
	case "DoesNotExist":
		op = labels.OpDoesNotExist
	default:
		return false, fmt.Errorf("%q is not a valid scope selector operator", s.Operator)
	}
	req, err := labels.NewRequirement(s.ScopeName, op, s.Values)
	if err != nil {
		return false, err
	}
	return req.Matches(set), nil
}

func isTerminating(p *api.Pod) bool {
	return p.Spec.ActiveDeadlineSeconds != nil && *p.Spec.ActiveDeadlineSeconds >= 0
}

func crossNamespaceAffinity(p *api.Pod) bool {
	a := p.Spec.Affinity
	if a == nil {
		return false
	}
	cross := func(t *api.PodAffinityTerm) bool { return len(t.Namespaces) != 0 || t.NamespaceSelector != nil }
	var req []api.PodAffinityTerm
	var pref []api.WeightedPodAffinityTerm
	if a.PodAffinity != nil {
		req = append(req, a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution...)
		pref = append(pref, a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution...)
	}
	if a.PodAntiAffinity != nil {
		req = append(req, a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution...)
		pref = append(pref, a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution...)
	}
	for i := range req {
		if cross(&req[i]) {
			return true
		}
	}
	for i := range pref {
		if cross(&pref[i].PodAffinityTerm) {
			return true
		}
	}
	return false
}
