package defaults

import (
	"bytes"
	"encoding/json"
	"math"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/resource"
)

// Default fills unset fields of obj with Kubernetes' defaults. Kinds without
// defaults (Event, Lease, ...) are left alone. It is idempotent.
func Default(obj api.Object) {
	switch o := obj.(type) {
	case *api.Pod:
		Pod(o)
	case *api.Node:
		Node(o)
	case *api.Service:
		Service(o)
	case *api.Namespace:
		Namespace(o)
	case *api.Secret:
		Secret(o)
	case *api.ConfigMap:
		ConfigMap(o)
	case *api.Endpoints:
		Endpoints(o)
	case *api.EndpointSlice:
		EndpointSlice(o)
	case *api.Deployment:
		Deployment(o)
	case *api.ReplicaSet:
		ReplicaSet(o)
	case *api.Job:
		Job(o)
	case *api.RoleBinding:
		RoleBinding(o)
	case *api.ClusterRoleBinding:
		ClusterRoleBinding(o)
	case *api.CertificateSigningRequest:
		CertificateSigningRequest(o)
	default:
		if !served(obj) {
			admissionRegistration(obj)
		}
	}
}

// DefaultCreate drops the fields of disabled features (DropDisabledFields)
// and applies Default to a new object. What Kubernetes' registry sets only
// on create (a Namespace's "kubernetes" finalizer, a Job's generated
// selector: GenerateJobSelector) is apiserver/registry's, set after the
// field manager recorded what the client sent.
func DefaultCreate(obj api.Object) {
	DropDisabledFields(obj, nil)
	Default(obj)
}

// DefaultUpdate drops the fields of disabled features old does not use
// (DropDisabledFields) and applies Default to obj, an update of old. What
// a Service's registry allocated and a replacement left out is put back
// by the registry after the field manager ran, as Kubernetes' service
// REST does (apiserver/registry's service strategy).
func DefaultUpdate(obj, old api.Object) {
	DropDisabledFields(obj, old)
	Default(obj)
}

// Pod defaults a pod: its spec (see PodSpec) plus what Kubernetes applies
// to Pods only: requests copied from limits when unset, enableServiceLinks
// true, and host ports equal to container ports under hostNetwork.
func Pod(p *api.Pod) {
	PodSpec(&p.Spec)
	for _, cs := range [][]api.Container{p.Spec.Containers, p.Spec.InitContainers} {
		for i := range cs {
			requestsFromLimits(&cs[i].Resources)
			if p.Spec.HostNetwork {
				for j := range cs[i].Ports {
					if cs[i].Ports[j].HostPort == 0 {
						cs[i].Ports[j].HostPort = cs[i].Ports[j].ContainerPort
					}
				}
			}
		}
	}
	if p.Spec.EnableServiceLinks == nil {
		p.Spec.EnableServiceLinks = ptr(true)
	}
}

func requestsFromLimits(r *api.ResourceRequirements) {
	if r.Limits == nil {
		return
	}
	if r.Requests == nil {
		r.Requests = make(api.ResourceList, len(r.Limits))
	}
	for name, limit := range r.Limits {
		if _, ok := r.Requests[name]; !ok {
			r.Requests[name] = limit
		}
	}
}

// PodSpec defaults a pod spec, in a Pod or a template: dnsPolicy
// ClusterFirst, restartPolicy Always, an empty securityContext, a 30s grace
// period, the default scheduler, and the defaults of its containers and
// volumes.
func PodSpec(s *api.PodSpec) {
	// serviceAccount is the deprecated alias of serviceAccountName:
	// Kubernetes reads it when serviceAccountName is empty and always
	// writes it back equal (its v1 conversion).
	if s.ServiceAccountName == "" {
		s.ServiceAccountName = s.DeprecatedServiceAccount
	}
	s.DeprecatedServiceAccount = s.ServiceAccountName
	if s.DNSPolicy == "" {
		s.DNSPolicy = api.DNSClusterFirst
	}
	if s.RestartPolicy == "" {
		s.RestartPolicy = api.RestartPolicyAlways
	}
	if s.SecurityContext == nil {
		s.SecurityContext = &api.PodSecurityContext{}
	}
	if s.TerminationGracePeriodSeconds == nil {
		s.TerminationGracePeriodSeconds = ptr(api.DefaultTerminationGracePeriodSeconds)
	}
	if s.SchedulerName == "" {
		s.SchedulerName = api.DefaultSchedulerName
	}
	for i := range s.Volumes {
		Volume(&s.Volumes[i])
	}
	for i := range s.InitContainers {
		Container(&s.InitContainers[i])
	}
	for i := range s.Containers {
		Container(&s.Containers[i])
	}
	for i := range s.EphemeralContainers {
		Container(&s.EphemeralContainers[i].Container)
	}
	ResourceList(s.Overhead)
}

// Volume gives a volume without any source an emptyDir, and fills the
// defaults of its source.
func Volume(v *api.Volume) {
	src := &v.VolumeSource
	if !hasVolumeSource(src) {
		src.EmptyDir = &api.EmptyDirVolumeSource{}
	}
	if src.HostPath != nil && src.HostPath.Type == nil {
		src.HostPath.Type = ptr(api.HostPathUnset)
	}
	if src.Ephemeral != nil {
		src.Ephemeral = ephemeralVolume(src.Ephemeral)
	}
	if src.Secret != nil && src.Secret.DefaultMode == nil {
		src.Secret.DefaultMode = ptr(api.SecretVolumeSourceDefaultMode)
	}
	if src.ConfigMap != nil && src.ConfigMap.DefaultMode == nil {
		src.ConfigMap.DefaultMode = ptr(api.ConfigMapVolumeSourceDefaultMode)
	}
	if d := src.DownwardAPI; d != nil {
		if d.DefaultMode == nil {
			d.DefaultMode = ptr(api.DownwardAPIVolumeSourceDefaultMode)
		}
		downwardAPIFiles(d.Items)
	}
	if p := src.Projected; p != nil {
		if p.DefaultMode == nil {
			p.DefaultMode = ptr(api.ProjectedVolumeSourceDefaultMode)
		}
		for i := range p.Sources {
			s := &p.Sources[i]
			if s.ServiceAccountToken != nil && s.ServiceAccountToken.ExpirationSeconds == nil {
				s.ServiceAccountToken.ExpirationSeconds = ptr(api.ServiceAccountTokenDefaultExpirationSeconds)
			}
			if s.DownwardAPI != nil {
				downwardAPIFiles(s.DownwardAPI.Items)
			}
		}
	}
}

// downwardAPIFiles gives field references without an apiVersion "v1", as
// Kubernetes' defaulting of ObjectFieldSelector does.
func downwardAPIFiles(items []api.DownwardAPIVolumeFile) {
	for i := range items {
		if f := items[i].FieldRef; f != nil && f.APIVersion == "" {
			f.APIVersion = "v1"
		}
	}
}

// VolumeSources lists which sources of v are set, by JSON name; validation
// uses it too.
func VolumeSources(v *api.VolumeSource) []string {
	var set []string
	add := func(ok bool, name string) {
		if ok {
			set = append(set, name)
		}
	}
	add(v.HostPath != nil, "hostPath")
	add(v.EmptyDir != nil, "emptyDir")
	add(v.Secret != nil, "secret")
	add(v.ConfigMap != nil, "configMap")
	add(v.PersistentVolumeClaim != nil, "persistentVolumeClaim")
	add(v.DownwardAPI != nil, "downwardAPI")
	add(v.Projected != nil, "projected")
	add(v.NFS != nil, "nfs")
	add(v.CSI != nil, "csi")
	add(v.Ephemeral != nil, "ephemeral")
	add(v.Image != nil, "image")
	add(v.GitRepo != nil, "gitRepo")
	add(v.ISCSI != nil, "iscsi")
	add(v.FC != nil, "fc")
	add(v.CephFS != nil, "cephfs")
	add(v.RBD != nil, "rbd")
	add(v.Glusterfs != nil, "glusterfs")
	add(v.GCEPersistentDisk != nil, "gcePersistentDisk")
	add(v.AWSElasticBlockStore != nil, "awsElasticBlockStore")
	add(v.Flocker != nil, "flocker")
	add(v.Cinder != nil, "cinder")
	add(v.Quobyte != nil, "quobyte")
	add(v.FlexVolume != nil, "flexVolume")
	add(v.AzureFile != nil, "azureFile")
	add(v.VsphereVolume != nil, "vsphereVolume")
	add(v.PhotonPersistentDisk != nil, "photonPersistentDisk")
	add(v.PortworxVolume != nil, "portworxVolume")
	add(v.AzureDisk != nil, "azureDisk")
	add(v.StorageOS != nil, "storageos")
	add(v.ScaleIO != nil, "scaleIO")
	return set
}

func hasVolumeSource(v *api.VolumeSource) bool { return len(VolumeSources(v)) > 0 }

// Container defaults a container: imagePullPolicy from the image tag, the
// termination message path and policy, port protocols, probe timings, and
// resource amounts rounded up to milli-units.
func Container(c *api.Container) {
	if c.ImagePullPolicy == "" {
		c.ImagePullPolicy = ImagePullPolicy(c.Image)
	}
	if c.TerminationMessagePath == "" {
		c.TerminationMessagePath = api.TerminationMessagePathDefault
	}
	if c.TerminationMessagePolicy == "" {
		c.TerminationMessagePolicy = api.TerminationMessageReadFile
	}
	for i := range c.Ports {
		if c.Ports[i].Protocol == "" {
			c.Ports[i].Protocol = api.ProtocolTCP
		}
	}
	for i := range c.Env {
		if vf := c.Env[i].ValueFrom; vf != nil && vf.FieldRef != nil && vf.FieldRef.APIVersion == "" {
			vf.FieldRef.APIVersion = "v1"
		}
		if vf := c.Env[i].ValueFrom; vf != nil && vf.FileKeyRef != nil && vf.FileKeyRef.Optional == nil {
			vf.FileKeyRef.Optional = ptr(false)
		}
	}
	for _, p := range []*api.Probe{c.LivenessProbe, c.ReadinessProbe, c.StartupProbe} {
		if p != nil {
			Probe(p)
		}
	}
	if c.Lifecycle != nil {
		for _, h := range []*api.LifecycleHandler{c.Lifecycle.PostStart, c.Lifecycle.PreStop} {
			if h != nil && h.HTTPGet != nil {
				httpGet(h.HTTPGet)
			}
		}
	}
	ResourceList(c.Resources.Limits)
	ResourceList(c.Resources.Requests)
}

// ImagePullPolicy is the default pull policy for image: Always when the tag
// is "latest" or there is neither tag nor digest, IfNotPresent otherwise
// (including images that do not parse; validation reports those).
func ImagePullPolicy(image string) api.PullPolicy {
	if tag, ok := imageTag(image); ok && tag == "latest" {
		return api.PullAlways
	}
	return api.PullIfNotPresent
}

// Probe fills a probe's timings (timeout 1s, period 10s, success 1,
// failure 3), its HTTP defaults (path "/", scheme HTTP) and a gRPC
// probe's service ("").
func Probe(p *api.Probe) {
	if p.TimeoutSeconds == 0 {
		p.TimeoutSeconds = 1
	}
	if p.PeriodSeconds == 0 {
		p.PeriodSeconds = 10
	}
	if p.SuccessThreshold == 0 {
		p.SuccessThreshold = 1
	}
	if p.FailureThreshold == 0 {
		p.FailureThreshold = 3
	}
	if p.HTTPGet != nil {
		httpGet(p.HTTPGet)
	}
	if p.GRPC != nil && p.GRPC.Service == nil {
		p.GRPC.Service = ptr("")
	}
}

func httpGet(h *api.HTTPGetAction) {
	if h.Path == "" {
		h.Path = "/"
	}
	if h.Scheme == "" {
		h.Scheme = api.URISchemeHTTP
	}
}

// ResourceList rounds every amount up to milli-units, as Kubernetes does
// for API compatibility ("0.1m" becomes "1m").
func ResourceList(rl api.ResourceList) {
	for name, q := range rl {
		if q.RoundUp(resource.Milli) {
			continue
		}
		rl[name] = q
	}
}

// Node defaults a node: allocatable equals capacity when unset.
func Node(n *api.Node) {
	ResourceList(n.Status.Capacity)
	ResourceList(n.Status.Allocatable)
	if n.Status.Allocatable == nil && n.Status.Capacity != nil {
		n.Status.Allocatable = make(api.ResourceList, len(n.Status.Capacity))
		for k, v := range n.Status.Capacity {
			n.Status.Allocatable[k] = v
		}
	}
}

// Service defaults a service: sessionAffinity None (ClientIP gets a 3h
// timeout), type ClusterIP, port protocol TCP, targetPort equal to port,
// externalTrafficPolicy Cluster when externally reachable,
// internalTrafficPolicy Cluster and allocateLoadBalancerNodePorts for load
// balancers, and ipMode VIP for a load balancer's ingress points with an
// IP, as Kubernetes' SetDefaults_Service.
func Service(s *api.Service) {
	spec := &s.Spec
	if spec.SessionAffinity == "" {
		spec.SessionAffinity = api.ServiceAffinityNone
	}
	switch spec.SessionAffinity {
	case api.ServiceAffinityNone:
		spec.SessionAffinityConfig = nil
	case api.ServiceAffinityClientIP:
		if c := spec.SessionAffinityConfig; c == nil || c.ClientIP == nil || c.ClientIP.TimeoutSeconds == nil {
			spec.SessionAffinityConfig = &api.SessionAffinityConfig{
				ClientIP: &api.ClientIPConfig{TimeoutSeconds: ptr(api.DefaultClientIPServiceAffinitySeconds)},
			}
		}
	}
	if spec.Type == "" {
		spec.Type = api.ServiceTypeClusterIP
	}
	for i := range spec.Ports {
		p := &spec.Ports[i]
		if p.Protocol == "" {
			p.Protocol = api.ProtocolTCP
		}
		if (p.TargetPort.Type == api.Int && p.TargetPort.IntVal == 0) ||
			(p.TargetPort.Type == api.String && p.TargetPort.StrVal == "") {
			p.TargetPort = api.FromInt(p.Port)
		}
	}
	externallyAccessible := spec.Type == api.ServiceTypeLoadBalancer || spec.Type == api.ServiceTypeNodePort ||
		(spec.Type == api.ServiceTypeClusterIP && len(spec.ExternalIPs) > 0)
	if externallyAccessible && spec.ExternalTrafficPolicy == "" {
		spec.ExternalTrafficPolicy = api.ServiceExternalTrafficPolicyCluster
	}
	if spec.InternalTrafficPolicy == nil && (spec.Type == api.ServiceTypeClusterIP ||
		spec.Type == api.ServiceTypeNodePort || spec.Type == api.ServiceTypeLoadBalancer) {
		spec.InternalTrafficPolicy = ptr(api.ServiceInternalTrafficPolicyCluster)
	}
	if spec.Type == api.ServiceTypeLoadBalancer && spec.AllocateLoadBalancerNodePorts == nil {
		spec.AllocateLoadBalancerNodePorts = ptr(true)
	}
	if spec.Type == api.ServiceTypeLoadBalancer {
		for i, ing := range s.Status.LoadBalancer.Ingress {
			if ing.IP != "" && ing.IPMode == nil {
				s.Status.LoadBalancer.Ingress[i].IPMode = ptr("VIP")
			}
		}
	}
	// clusterIPs, ipFamilies and ipFamilyPolicy are not defaults in
	// Kubernetes: its service REST sets them when it allocates, after the
	// field manager recorded what the client sent (apiserver/registry's
	// service strategy does the same).
}

// Namespace labels a named namespace with kubernetes.io/metadata.name, as
// Kubernetes does, and defaults its status phase to Active.
func Namespace(n *api.Namespace) {
	if n.Name != "" {
		if n.Labels == nil {
			n.Labels = map[string]string{}
		}
		n.Labels[LabelMetadataName] = n.Name
	}
	if n.Status.Phase == "" {
		n.Status.Phase = api.NamespaceActive
	}
}

// LabelMetadataName is the label every namespace carries with its own name.
const LabelMetadataName = "kubernetes.io/metadata.name"

// Secret defaults a secret's type to Opaque and merges stringData into
// data (stringData wins), as Kubernetes' conversion does: stringData is a
// write-only convenience and is never stored or returned.
func Secret(s *api.Secret) {
	if s.Type == "" {
		s.Type = api.SecretTypeOpaque
	}
	if len(s.StringData) > 0 {
		if s.Data == nil {
			s.Data = make(map[string][]byte, len(s.StringData))
		}
		for k, v := range s.StringData {
			s.Data[k] = []byte(v)
		}
	}
	s.StringData = nil
}

// ConfigMap gives a config map a non-nil data map, as Kubernetes does.
func ConfigMap(c *api.ConfigMap) {
	if c.Data == nil {
		c.Data = map[string]string{}
	}
}

// Endpoints defaults endpoint port protocols to TCP.
func Endpoints(e *api.Endpoints) {
	for i := range e.Subsets {
		for j := range e.Subsets[i].Ports {
			if e.Subsets[i].Ports[j].Protocol == "" {
				e.Subsets[i].Ports[j].Protocol = api.ProtocolTCP
			}
		}
	}
}

// EndpointSlice defaults slice ports: name "" and protocol TCP.
func EndpointSlice(e *api.EndpointSlice) {
	for i := range e.Ports {
		if e.Ports[i].Name == nil {
			e.Ports[i].Name = ptr("")
		}
		if e.Ports[i].Protocol == nil {
			e.Ports[i].Protocol = ptr(api.ProtocolTCP)
		}
	}
}

// Deployment defaults a deployment: 1 replica, RollingUpdate with 25%
// maxUnavailable and 25% maxSurge, a revision history of 10, a 600s
// progress deadline, and its pod template.
func Deployment(d *api.Deployment) {
	if d.Spec.Replicas == nil {
		d.Spec.Replicas = ptr(int32(1))
	}
	st := &d.Spec.Strategy
	if st.Type == "" {
		st.Type = api.RollingUpdateDeploymentStrategyType
	}
	if st.Type == api.RollingUpdateDeploymentStrategyType {
		if st.RollingUpdate == nil {
			st.RollingUpdate = &api.RollingUpdateDeployment{}
		}
		if st.RollingUpdate.MaxUnavailable == nil {
			st.RollingUpdate.MaxUnavailable = ptr(api.FromString("25%"))
		}
		if st.RollingUpdate.MaxSurge == nil {
			st.RollingUpdate.MaxSurge = ptr(api.FromString("25%"))
		}
	}
	if d.Spec.RevisionHistoryLimit == nil {
		d.Spec.RevisionHistoryLimit = ptr(int32(10))
	}
	if d.Spec.ProgressDeadlineSeconds == nil {
		d.Spec.ProgressDeadlineSeconds = ptr(int32(600))
	}
	PodSpec(&d.Spec.Template.Spec)
}

// ReplicaSet defaults a replica set: 1 replica and its pod template.
func ReplicaSet(r *api.ReplicaSet) {
	if r.Spec.Replicas == nil {
		r.Spec.Replicas = ptr(int32(1))
	}
	PodSpec(&r.Spec.Template.Spec)
}

// Job defaults a job: completions and parallelism 1 when both are unset
// (parallelism 1 when only it is), backoffLimit 6 (unlimited with a
// per-index limit), the job's labels from its template when it has none,
// completionMode NonIndexed, suspend false, pod failure policy condition
// status True, podReplacementPolicy, and its pod template.
func Job(j *api.Job) {
	s := &j.Spec
	if s.Completions == nil && s.Parallelism == nil {
		s.Completions = ptr(int32(1))
		s.Parallelism = ptr(int32(1))
	}
	if s.Parallelism == nil {
		s.Parallelism = ptr(int32(1))
	}
	if s.BackoffLimit == nil {
		if s.BackoffLimitPerIndex != nil {
			s.BackoffLimit = ptr(int32(math.MaxInt32))
		} else {
			s.BackoffLimit = ptr(int32(6))
		}
	}
	if s.Template.Labels != nil && len(j.Labels) == 0 {
		j.Labels = make(map[string]string, len(s.Template.Labels))
		for k, v := range s.Template.Labels {
			j.Labels[k] = v
		}
	}
	if s.CompletionMode == nil {
		s.CompletionMode = ptr(api.NonIndexedCompletion)
	}
	if s.Suspend == nil {
		s.Suspend = ptr(false)
	}
	if s.ManualSelector == nil {
		s.ManualSelector = ptr(false)
	}
	if s.PodFailurePolicy != nil {
		for i := range s.PodFailurePolicy.Rules {
			for k := range s.PodFailurePolicy.Rules[i].OnPodConditions {
				if s.PodFailurePolicy.Rules[i].OnPodConditions[k].Status == "" {
					s.PodFailurePolicy.Rules[i].OnPodConditions[k].Status = api.ConditionTrue
				}
			}
		}
	}
	if s.PodReplacementPolicy == nil {
		if s.PodFailurePolicy != nil {
			s.PodReplacementPolicy = ptr("Failed")
		} else {
			s.PodReplacementPolicy = ptr("TerminatingOrFailed")
		}
	}
	PodSpec(&s.Template.Spec)
}

// GenerateJobSelector gives a job the selector and template labels
// Kubernetes generates when manualSelector is not true: the template gets
// the job-name and controller-uid labels (new and legacy names) unless the
// user set them, and the selector matches controller-uid. It needs
// metadata.uid; without one it does nothing and validation reports the
// missing selector.
func GenerateJobSelector(j *api.Job) {
	if j.UID == "" {
		return
	}
	t := &j.Spec.Template
	if t.Labels == nil {
		t.Labels = map[string]string{}
	}
	for _, k := range []string{api.LegacyJobNameLabel, api.JobNameLabel} {
		if _, ok := t.Labels[k]; !ok {
			t.Labels[k] = j.Name
		}
	}
	for _, k := range []string{api.LegacyJobControllerUIDLabel, api.JobControllerUIDLabel} {
		if _, ok := t.Labels[k]; !ok {
			t.Labels[k] = string(j.UID)
		}
	}
	if j.Spec.Selector == nil {
		j.Spec.Selector = &api.LabelSelector{}
	}
	if j.Spec.Selector.MatchLabels == nil {
		j.Spec.Selector.MatchLabels = map[string]string{}
	}
	if _, ok := j.Spec.Selector.MatchLabels[api.JobControllerUIDLabel]; !ok {
		j.Spec.Selector.MatchLabels[api.JobControllerUIDLabel] = string(j.UID)
	}
}

func ptr[T any](v T) *T { return &v }

// ephemeralTemplate is a generic ephemeral volume's source as defaulting
// sees it: the claim template's metadata stays as written.
type ephemeralTemplate struct {
	VolumeClaimTemplate *struct {
		Metadata json.RawMessage               `json:"metadata,omitempty"`
		Spec     api.PersistentVolumeClaimSpec `json:"spec"`
	} `json:"volumeClaimTemplate,omitempty"`
}

// ephemeralVolume defaults the claim template of a generic ephemeral
// volume as kube's SetDefaults_PersistentVolumeClaimSpec does inside a pod
// (volumeMode Filesystem). The source is kept as raw JSON in the pod type;
// one that does not decode, or needs nothing, is returned unchanged, for
// validation to judge.
func ephemeralVolume(raw json.RawMessage) json.RawMessage {
	var e ephemeralTemplate
	d := json.NewDecoder(bytes.NewReader(raw))
	if err := d.Decode(&e); err != nil || e.VolumeClaimTemplate == nil || e.VolumeClaimTemplate.Spec.VolumeMode != nil {
		return raw
	}
	e.VolumeClaimTemplate.Spec.VolumeMode = ptr(api.PersistentVolumeFilesystem)
	out, err := json.Marshal(e)
	if err != nil {
		return raw
	}
	return out
}
