package api

import (
	"encoding/json"
	"strings"

	"github.com/minik8s/minik8s/api/resource"
)

// Pod (core/v1) is a group of containers scheduled together on one node.
type Pod struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata"`
	Spec       PodSpec   `json:"spec,omitzero"`
	Status     PodStatus `json:"status,omitzero"`
}

// PodList is a list of Pods.
type PodList = List[Pod]

// MirrorPodAnnotationKey marks a mirror pod: the apiserver's copy of a
// kubelet's static pod.
const MirrorPodAnnotationKey = "kubernetes.io/config.mirror"

// PodTemplateSpec describes the pods a controller creates.
type PodTemplateSpec struct {
	ObjectMeta `json:"metadata"` // written even when empty, as kube does
	Spec       PodSpec           `json:"spec,omitzero"`
}

// PodSpec is the desired state of a pod.
type PodSpec struct {
	Volumes                       []Volume               `json:"volumes,omitempty"`
	InitContainers                []Container            `json:"initContainers,omitempty"`
	Containers                    []Container            `json:"containers"`
	EphemeralContainers           []EphemeralContainer   `json:"ephemeralContainers,omitempty"`
	RestartPolicy                 RestartPolicy          `json:"restartPolicy,omitempty"`
	TerminationGracePeriodSeconds *int64                 `json:"terminationGracePeriodSeconds,omitempty"`
	ActiveDeadlineSeconds         *int64                 `json:"activeDeadlineSeconds,omitempty"`
	DNSPolicy                     DNSPolicy              `json:"dnsPolicy,omitempty"`
	NodeSelector                  map[string]string      `json:"nodeSelector,omitempty"`
	ServiceAccountName            string                 `json:"serviceAccountName,omitempty"`
	DeprecatedServiceAccount      string                 `json:"serviceAccount,omitempty"`
	AutomountServiceAccountToken  *bool                  `json:"automountServiceAccountToken,omitempty"`
	NodeName                      string                 `json:"nodeName,omitempty"`
	HostNetwork                   bool                   `json:"hostNetwork,omitempty"`
	HostPID                       bool                   `json:"hostPID,omitempty"`
	HostIPC                       bool                   `json:"hostIPC,omitempty"`
	ShareProcessNamespace         *bool                  `json:"shareProcessNamespace,omitempty"`
	SecurityContext               *PodSecurityContext    `json:"securityContext,omitempty"`
	ImagePullSecrets              []LocalObjectReference `json:"imagePullSecrets,omitempty"`
	Hostname                      string                 `json:"hostname,omitempty"`
	Subdomain                     string                 `json:"subdomain,omitempty"`
	Affinity                      *Affinity              `json:"affinity,omitempty"`
	SchedulerName                 string                 `json:"schedulerName,omitempty"`
	Tolerations                   []Toleration           `json:"tolerations,omitempty"`
	HostAliases                   []HostAlias            `json:"hostAliases,omitempty"`
	PriorityClassName             string                 `json:"priorityClassName,omitempty"`
	Priority                      *int32                 `json:"priority,omitempty"`
	DNSConfig                     *PodDNSConfig          `json:"dnsConfig,omitempty"`
	ReadinessGates                []PodReadinessGate     `json:"readinessGates,omitempty"`
	RuntimeClassName              *string                `json:"runtimeClassName,omitempty"`
	EnableServiceLinks            *bool                  `json:"enableServiceLinks,omitempty"`
	PreemptionPolicy              *PreemptionPolicy      `json:"preemptionPolicy,omitempty"`
	Overhead                      ResourceList           `json:"overhead,omitempty"`
	// TopologySpreadConstraints are kept and validated for shape; the
	// scheduler decides whether it honours them.
	TopologySpreadConstraints []TopologySpreadConstraint `json:"topologySpreadConstraints,omitempty"`
	SetHostnameAsFQDN         *bool                      `json:"setHostnameAsFQDN,omitempty"`
	OS                        *PodOS                     `json:"os,omitempty"`
	HostUsers                 *bool                      `json:"hostUsers,omitempty"`
	SchedulingGates           []PodSchedulingGate        `json:"schedulingGates,omitempty"`
	ResourceClaims            []PodResourceClaim         `json:"resourceClaims,omitempty"`
	// Resources are pod-level requests and limits (cpu, memory,
	// hugepages-*).
	Resources          *ResourceRequirements `json:"resources,omitempty"`
	HostnameOverride   *string               `json:"hostnameOverride,omitempty"`
	SchedulingGroup    *PodSchedulingGroup   `json:"schedulingGroup,omitempty"`
	EvictionResponders []EvictionResponder   `json:"evictionResponders,omitempty"`
}

// PodResourceClaim names a ResourceClaim, or a ResourceClaimTemplate to
// make one from, that the pod's containers may use.
type PodResourceClaim struct {
	Name                      string  `json:"name"`
	ResourceClaimName         *string `json:"resourceClaimName,omitempty"`
	ResourceClaimTemplateName *string `json:"resourceClaimTemplateName,omitempty"`
}

// PodSchedulingGroup names the PodGroup the pod is scheduled with.
type PodSchedulingGroup struct {
	PodGroupName *string `json:"podGroupName,omitempty"`
}

// EvictionResponder is a controller that reacts to the pod's eviction
// requests, chosen by priority.
type EvictionResponder struct {
	Name     string `json:"name"`
	Priority *int32 `json:"priority"`
}

// Container is one container of a pod.
type Container struct {
	Name       string          `json:"name"`
	Image      string          `json:"image,omitempty"`
	Command    []string        `json:"command,omitempty"`
	Args       []string        `json:"args,omitempty"`
	WorkingDir string          `json:"workingDir,omitempty"`
	Ports      []ContainerPort `json:"ports,omitempty"`
	EnvFrom    []EnvFromSource `json:"envFrom,omitempty"`
	Env        []EnvVar        `json:"env,omitempty"`
	// Always written, "resources": {} when empty, as kube writes it.
	Resources ResourceRequirements `json:"resources"`
	// ResizePolicy says, per resource, whether an in-place resize restarts
	// the container.
	ResizePolicy []ContainerResizePolicy `json:"resizePolicy,omitempty"`
	// RestartPolicy may only be set, to Always, on init containers: it makes
	// them sidecars that keep running beside the main containers.
	RestartPolicy *ContainerRestartPolicy `json:"restartPolicy,omitempty"`
	// RestartPolicyRules override the pod's restart policy for this
	// container on the exit codes they match.
	RestartPolicyRules       []ContainerRestartRule   `json:"restartPolicyRules,omitempty"`
	VolumeMounts             []VolumeMount            `json:"volumeMounts,omitempty"`
	VolumeDevices            []VolumeDevice           `json:"volumeDevices,omitempty"`
	LivenessProbe            *Probe                   `json:"livenessProbe,omitempty"`
	ReadinessProbe           *Probe                   `json:"readinessProbe,omitempty"`
	StartupProbe             *Probe                   `json:"startupProbe,omitempty"`
	Lifecycle                *Lifecycle               `json:"lifecycle,omitempty"`
	TerminationMessagePath   string                   `json:"terminationMessagePath,omitempty"`
	TerminationMessagePolicy TerminationMessagePolicy `json:"terminationMessagePolicy,omitempty"`
	ImagePullPolicy          PullPolicy               `json:"imagePullPolicy,omitempty"`
	SecurityContext          *SecurityContext         `json:"securityContext,omitempty"`
	Stdin                    bool                     `json:"stdin,omitempty"`
	StdinOnce                bool                     `json:"stdinOnce,omitempty"`
	TTY                      bool                     `json:"tty,omitempty"`
}

// ContainerRestartPolicy is the restart policy of a single (init) container.
type ContainerRestartPolicy string

// Container-level restart policies: Always makes an init container a
// sidecar; Never and OnFailure go with restartPolicyRules.
const (
	ContainerRestartPolicyAlways    ContainerRestartPolicy = "Always"
	ContainerRestartPolicyNever     ContainerRestartPolicy = "Never"
	ContainerRestartPolicyOnFailure ContainerRestartPolicy = "OnFailure"
)

// ResourceResizeRestartPolicy says what an in-place resize of one resource
// does to the container.
type ResourceResizeRestartPolicy string

// Resize restart policies.
const (
	NotRequired      ResourceResizeRestartPolicy = "NotRequired"
	RestartContainer ResourceResizeRestartPolicy = "RestartContainer"
)

// ContainerResizePolicy is the resize restart policy of one resource
// (cpu, memory) of a container.
type ContainerResizePolicy struct {
	ResourceName  ResourceName                `json:"resourceName"`
	RestartPolicy ResourceResizeRestartPolicy `json:"restartPolicy"`
}

// ContainerRestartRuleAction is what a matching restart rule does.
type ContainerRestartRuleAction string

// Restart rule actions.
const (
	ContainerRestartRuleActionRestart              ContainerRestartRuleAction = "Restart"
	ContainerRestartRuleActionRestartAllContainers ContainerRestartRuleAction = "RestartAllContainers"
)

// ContainerRestartRule restarts a container (or all of the pod's) when its
// exit matches.
type ContainerRestartRule struct {
	Action    ContainerRestartRuleAction       `json:"action,omitempty"`
	ExitCodes *ContainerRestartRuleOnExitCodes `json:"exitCodes,omitempty"`
}

// ContainerRestartRuleOnExitCodesOperator relates an exit code to a set.
type ContainerRestartRuleOnExitCodesOperator string

// Exit code operators.
const (
	ContainerRestartRuleOnExitCodesOpIn    ContainerRestartRuleOnExitCodesOperator = "In"
	ContainerRestartRuleOnExitCodesOpNotIn ContainerRestartRuleOnExitCodesOperator = "NotIn"
)

// ContainerRestartRuleOnExitCodes matches a container's exit code.
type ContainerRestartRuleOnExitCodes struct {
	Operator ContainerRestartRuleOnExitCodesOperator `json:"operator,omitempty"`
	Values   []int32                                 `json:"values,omitempty"`
}

// VolumeDevice maps a raw block volume (a PVC) into a container.
type VolumeDevice struct {
	Name       string `json:"name"`
	DevicePath string `json:"devicePath"`
}

// Protocol is a network protocol.
type Protocol string

// Protocols.
const (
	ProtocolTCP  Protocol = "TCP"
	ProtocolUDP  Protocol = "UDP"
	ProtocolSCTP Protocol = "SCTP"
)

// ContainerPort is a port a container exposes.
type ContainerPort struct {
	Name          string   `json:"name,omitempty"`
	HostPort      int32    `json:"hostPort,omitempty"`
	ContainerPort int32    `json:"containerPort"`
	Protocol      Protocol `json:"protocol,omitempty"`
	HostIP        string   `json:"hostIP,omitempty"`
}

// EnvVar is an environment variable of a container.
type EnvVar struct {
	Name      string        `json:"name"`
	Value     string        `json:"value,omitempty"`
	ValueFrom *EnvVarSource `json:"valueFrom,omitempty"`
}

// EnvVarSource takes an environment variable's value from elsewhere;
// exactly one member is set.
type EnvVarSource struct {
	FieldRef         *ObjectFieldSelector   `json:"fieldRef,omitempty"`
	ResourceFieldRef *ResourceFieldSelector `json:"resourceFieldRef,omitempty"`
	ConfigMapKeyRef  *ConfigMapKeySelector  `json:"configMapKeyRef,omitempty"`
	SecretKeyRef     *SecretKeySelector     `json:"secretKeyRef,omitempty"`
	FileKeyRef       *FileKeySelector       `json:"fileKeyRef,omitempty"`
}

// FileKeySelector selects a key of an env file in a volume of the pod.
type FileKeySelector struct {
	VolumeName string `json:"volumeName"`
	Path       string `json:"path"`
	Key        string `json:"key"`
	Optional   *bool  `json:"optional,omitempty"`
}

// ObjectFieldSelector selects a field of the pod ("metadata.name",
// "status.podIP", ...).
type ObjectFieldSelector struct {
	APIVersion string `json:"apiVersion,omitempty"`
	FieldPath  string `json:"fieldPath"`
}

// ResourceFieldSelector selects a container's resource request or limit.
type ResourceFieldSelector struct {
	ContainerName string            `json:"containerName,omitempty"`
	Resource      string            `json:"resource"`
	Divisor       resource.Quantity `json:"divisor,omitzero"`
}

// ConfigMapKeySelector selects a key of a ConfigMap.
type ConfigMapKeySelector struct {
	LocalObjectReference `json:",inline"`
	Key                  string `json:"key"`
	Optional             *bool  `json:"optional,omitempty"`
}

// SecretKeySelector selects a key of a Secret.
type SecretKeySelector struct {
	LocalObjectReference `json:",inline"`
	Key                  string `json:"key"`
	Optional             *bool  `json:"optional,omitempty"`
}

// EnvFromSource imports every key of a ConfigMap or Secret as variables.
type EnvFromSource struct {
	Prefix       string              `json:"prefix,omitempty"`
	ConfigMapRef *ConfigMapEnvSource `json:"configMapRef,omitempty"`
	SecretRef    *SecretEnvSource    `json:"secretRef,omitempty"`
}

// ConfigMapEnvSource names the ConfigMap of an EnvFromSource.
type ConfigMapEnvSource struct {
	LocalObjectReference `json:",inline"`
	Optional             *bool `json:"optional,omitempty"`
}

// SecretEnvSource names the Secret of an EnvFromSource.
type SecretEnvSource struct {
	LocalObjectReference `json:",inline"`
	Optional             *bool `json:"optional,omitempty"`
}

// ResourceRequirements are a container's (or a pod's) resource requests
// and limits, and the dynamic resource claims it uses.
type ResourceRequirements struct {
	Limits   ResourceList             `json:"limits,omitempty"`
	Requests ResourceList             `json:"requests,omitempty"`
	Claims   []ContainerResourceClaim `json:"claims,omitempty"`
}

// ContainerResourceClaim names an entry of spec.resourceClaims (and optionally one
// request of that claim) a container uses.
type ContainerResourceClaim struct {
	Name    string `json:"name"`
	Request string `json:"request,omitempty"`
}

// VolumeMount mounts a pod volume into a container.
type VolumeMount struct {
	Name     string `json:"name"`
	ReadOnly bool   `json:"readOnly,omitempty"`
	// RecursiveReadOnly (Disabled, IfPossible, Enabled) needs readOnly.
	RecursiveReadOnly *RecursiveReadOnlyMode `json:"recursiveReadOnly,omitempty"`
	MountPath         string                 `json:"mountPath"`
	SubPath           string                 `json:"subPath,omitempty"`
	// MountPropagation is None, HostToContainer or Bidirectional.
	MountPropagation *string  `json:"mountPropagation,omitempty"`
	SubPathExpr      string   `json:"subPathExpr,omitempty"`
	BindMountOptions []string `json:"bindMountOptions,omitempty"`
}

// RecursiveReadOnlyMode says whether a read-only mount is read-only below
// its submounts too.
type RecursiveReadOnlyMode string

// Recursive read-only modes.
const (
	RecursiveReadOnlyDisabled   RecursiveReadOnlyMode = "Disabled"
	RecursiveReadOnlyIfPossible RecursiveReadOnlyMode = "IfPossible"
	RecursiveReadOnlyEnabled    RecursiveReadOnlyMode = "Enabled"
)

// Probe is a health check of a container.
type Probe struct {
	ProbeHandler                  `json:",inline"`
	InitialDelaySeconds           int32  `json:"initialDelaySeconds,omitempty"`
	TimeoutSeconds                int32  `json:"timeoutSeconds,omitempty"`
	PeriodSeconds                 int32  `json:"periodSeconds,omitempty"`
	SuccessThreshold              int32  `json:"successThreshold,omitempty"`
	FailureThreshold              int32  `json:"failureThreshold,omitempty"`
	TerminationGracePeriodSeconds *int64 `json:"terminationGracePeriodSeconds,omitempty"`
}

// ProbeHandler is the action of a probe; exactly one member is set.
type ProbeHandler struct {
	Exec      *ExecAction      `json:"exec,omitempty"`
	HTTPGet   *HTTPGetAction   `json:"httpGet,omitempty"`
	TCPSocket *TCPSocketAction `json:"tcpSocket,omitempty"`
	GRPC      *GRPCAction      `json:"grpc,omitempty"`
}

// ExecAction runs a command in the container.
type ExecAction struct {
	Command []string `json:"command,omitempty"`
}

// URIScheme is the scheme of an HTTP probe.
type URIScheme string

// URI schemes.
const (
	URISchemeHTTP  URIScheme = "HTTP"
	URISchemeHTTPS URIScheme = "HTTPS"
)

// HTTPGetAction performs an HTTP GET.
type HTTPGetAction struct {
	Path        string       `json:"path,omitempty"`
	Port        IntOrString  `json:"port"`
	Host        string       `json:"host,omitempty"`
	Scheme      URIScheme    `json:"scheme,omitempty"`
	HTTPHeaders []HTTPHeader `json:"httpHeaders,omitempty"`
	// Protocol is HTTP1 (when nil) or HTTP2 (h2c).
	Protocol *HTTPProtocol `json:"protocol,omitempty"`
}

// HTTPProtocol is the wire protocol of an httpGet action.
type HTTPProtocol string

// HTTP protocols.
const (
	HTTPProtocolHTTP1 HTTPProtocol = "HTTP1"
	HTTPProtocolHTTP2 HTTPProtocol = "HTTP2"
)

// HTTPHeader is a header of an HTTP probe.
type HTTPHeader struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// TCPSocketAction opens a TCP connection.
type TCPSocketAction struct {
	Port IntOrString `json:"port"`
	Host string      `json:"host,omitempty"`
}

// GRPCAction calls the gRPC health service.
type GRPCAction struct {
	Port    int32   `json:"port"`
	Service *string `json:"service,omitempty"`
	// Mode is Plaintext (when nil) or TLS without certificate checks.
	Mode *GRPCProbeMode `json:"mode,omitempty"`
}

// GRPCProbeMode is the connection mode of a gRPC probe.
type GRPCProbeMode string

// gRPC probe modes.
const (
	GRPCProbeModePlaintext GRPCProbeMode = "Plaintext"
	GRPCProbeModeTLS       GRPCProbeMode = "TLS"
)

// Lifecycle holds a container's lifecycle hooks.
type Lifecycle struct {
	PostStart *LifecycleHandler `json:"postStart,omitempty"`
	PreStop   *LifecycleHandler `json:"preStop,omitempty"`
	// StopSignal is the signal that stops the container; it needs
	// spec.os.name.
	StopSignal *Signal `json:"stopSignal,omitempty"`
}

// Signal is a signal's name, as SIGTERM.
type Signal string

// LifecycleHandler is the action of a hook; exactly one member is set.
type LifecycleHandler struct {
	Exec      *ExecAction      `json:"exec,omitempty"`
	HTTPGet   *HTTPGetAction   `json:"httpGet,omitempty"`
	TCPSocket *TCPSocketAction `json:"tcpSocket,omitempty"`
	Sleep     *SleepAction     `json:"sleep,omitempty"`
}

// SleepAction pauses for a number of seconds.
type SleepAction struct {
	Seconds int64 `json:"seconds"`
}

// TerminationMessagePolicy says where a container's termination message
// comes from.
type TerminationMessagePolicy string

// Termination message policies and the default path.
const (
	TerminationMessageReadFile              TerminationMessagePolicy = "File"
	TerminationMessageFallbackToLogsOnError TerminationMessagePolicy = "FallbackToLogsOnError"
	TerminationMessagePathDefault                                    = "/dev/termination-log"
)

// PullPolicy says when to pull a container image.
type PullPolicy string

// Pull policies.
const (
	PullAlways       PullPolicy = "Always"
	PullNever        PullPolicy = "Never"
	PullIfNotPresent PullPolicy = "IfNotPresent"
)

// SecurityContext is the security configuration of a container, every
// field of Kubernetes' v1.37 core/v1 SecurityContext.
type SecurityContext struct {
	Capabilities             *Capabilities                  `json:"capabilities,omitempty"`
	Privileged               *bool                          `json:"privileged,omitempty"`
	SELinuxOptions           *SELinuxOptions                `json:"seLinuxOptions,omitempty"`
	WindowsOptions           *WindowsSecurityContextOptions `json:"windowsOptions,omitempty"`
	RunAsUser                *int64                         `json:"runAsUser,omitempty"`
	RunAsGroup               *int64                         `json:"runAsGroup,omitempty"`
	RunAsNonRoot             *bool                          `json:"runAsNonRoot,omitempty"`
	ReadOnlyRootFilesystem   *bool                          `json:"readOnlyRootFilesystem,omitempty"`
	AllowPrivilegeEscalation *bool                          `json:"allowPrivilegeEscalation,omitempty"`
	// ProcMount is Default or Unmasked (the latter only with hostUsers
	// false).
	ProcMount       *ProcMountType   `json:"procMount,omitempty"`
	SeccompProfile  *SeccompProfile  `json:"seccompProfile,omitempty"`
	AppArmorProfile *AppArmorProfile `json:"appArmorProfile,omitempty"`
}

// ProcMountType is how /proc is mounted in a container.
type ProcMountType string

// Proc mount types.
const (
	DefaultProcMount  ProcMountType = "Default"
	UnmaskedProcMount ProcMountType = "Unmasked"
)

// SELinuxOptions are the SELinux labels of a container or pod.
type SELinuxOptions struct {
	User  string `json:"user,omitempty"`
	Role  string `json:"role,omitempty"`
	Type  string `json:"type,omitempty"`
	Level string `json:"level,omitempty"`
}

// WindowsSecurityContextOptions are the Windows-specific options of a
// container or pod.
type WindowsSecurityContextOptions struct {
	GMSACredentialSpecName *string `json:"gmsaCredentialSpecName,omitempty"`
	GMSACredentialSpec     *string `json:"gmsaCredentialSpec,omitempty"`
	RunAsUserName          *string `json:"runAsUserName,omitempty"`
	HostProcess            *bool   `json:"hostProcess,omitempty"`
}

// AppArmorProfileType is RuntimeDefault, Unconfined or Localhost.
type AppArmorProfileType string

// AppArmor profile types.
const (
	AppArmorProfileTypeUnconfined     AppArmorProfileType = "Unconfined"
	AppArmorProfileTypeRuntimeDefault AppArmorProfileType = "RuntimeDefault"
	AppArmorProfileTypeLocalhost      AppArmorProfileType = "Localhost"
)

// The deprecated per-container AppArmor annotation (the key ends with the
// container's name) and its values, still synced to appArmorProfile on
// create as Kubernetes does.
const (
	DeprecatedAppArmorAnnotationKeyPrefix            = "container.apparmor.security.beta.kubernetes.io/"
	DeprecatedAppArmorAnnotationValueLocalhostPrefix = "localhost/"
	DeprecatedAppArmorAnnotationValueRuntimeDefault  = "runtime/default"
	DeprecatedAppArmorAnnotationValueUnconfined      = "unconfined"
)

// AppArmorFieldForAnnotation is the appArmorProfile an AppArmor annotation
// value means, nil for an unknown value or an empty localhost profile.
func AppArmorFieldForAnnotation(annotation string) *AppArmorProfile {
	switch annotation {
	case DeprecatedAppArmorAnnotationValueUnconfined:
		return &AppArmorProfile{Type: AppArmorProfileTypeUnconfined}
	case DeprecatedAppArmorAnnotationValueRuntimeDefault:
		return &AppArmorProfile{Type: AppArmorProfileTypeRuntimeDefault}
	}
	if name, ok := strings.CutPrefix(annotation, DeprecatedAppArmorAnnotationValueLocalhostPrefix); ok && name != "" {
		return &AppArmorProfile{Type: AppArmorProfileTypeLocalhost, LocalhostProfile: &name}
	}
	return nil
}

// AppArmorProfile selects an AppArmor profile.
type AppArmorProfile struct {
	Type AppArmorProfileType `json:"type"`
	// LocalhostProfile is the name of a profile loaded on the node; only
	// with type Localhost.
	LocalhostProfile *string `json:"localhostProfile,omitempty"`
}

// Capability is a Linux capability ("NET_ADMIN").
type Capability string

// Capabilities adds and drops Linux capabilities.
type Capabilities struct {
	Add  []Capability `json:"add,omitempty"`
	Drop []Capability `json:"drop,omitempty"`
}

// SeccompProfile selects a seccomp profile.
type SeccompProfile struct {
	// Type is RuntimeDefault, Unconfined or Localhost.
	Type             string  `json:"type"`
	LocalhostProfile *string `json:"localhostProfile,omitempty"`
}

// PodSecurityContext is the pod-level security configuration, every field
// of Kubernetes' v1.37 core/v1 PodSecurityContext.
type PodSecurityContext struct {
	SELinuxOptions           *SELinuxOptions                `json:"seLinuxOptions,omitempty"`
	WindowsOptions           *WindowsSecurityContextOptions `json:"windowsOptions,omitempty"`
	RunAsUser                *int64                         `json:"runAsUser,omitempty"`
	RunAsGroup               *int64                         `json:"runAsGroup,omitempty"`
	RunAsNonRoot             *bool                          `json:"runAsNonRoot,omitempty"`
	SupplementalGroups       []int64                        `json:"supplementalGroups,omitempty"`
	SupplementalGroupsPolicy *SupplementalGroupsPolicy      `json:"supplementalGroupsPolicy,omitempty"`
	FSGroup                  *int64                         `json:"fsGroup,omitempty"`
	Sysctls                  []Sysctl                       `json:"sysctls,omitempty"`
	FSGroupChangePolicy      *string                        `json:"fsGroupChangePolicy,omitempty"`
	SeccompProfile           *SeccompProfile                `json:"seccompProfile,omitempty"`
	AppArmorProfile          *AppArmorProfile               `json:"appArmorProfile,omitempty"`
	SELinuxChangePolicy      *PodSELinuxChangePolicy        `json:"seLinuxChangePolicy,omitempty"`
}

// SupplementalGroupsPolicy says how a container's supplementary groups are
// computed: Merge (with the image's /etc/group) or Strict (only the pod's).
type SupplementalGroupsPolicy string

// Supplemental groups policies.
const (
	SupplementalGroupsPolicyMerge  SupplementalGroupsPolicy = "Merge"
	SupplementalGroupsPolicyStrict SupplementalGroupsPolicy = "Strict"
)

// PodSELinuxChangePolicy says how volumes get the pod's SELinux label.
type PodSELinuxChangePolicy string

// SELinux change policies.
const (
	SELinuxChangePolicyRecursive   PodSELinuxChangePolicy = "Recursive"
	SELinuxChangePolicyMountOption PodSELinuxChangePolicy = "MountOption"
)

// Sysctl is a namespaced kernel parameter.
type Sysctl struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Volume is a named volume of a pod.
type Volume struct {
	Name         string `json:"name"`
	VolumeSource `json:",inline"`
}

// VolumeSource says where a volume comes from; exactly one member is set.
// The sources minik8s implements are typed; the others are kept verbatim
// (raw JSON) so manifests round-trip and validation still sees one source.
type VolumeSource struct {
	HostPath              *HostPathVolumeSource              `json:"hostPath,omitempty"`
	EmptyDir              *EmptyDirVolumeSource              `json:"emptyDir,omitempty"`
	Secret                *SecretVolumeSource                `json:"secret,omitempty"`
	ConfigMap             *ConfigMapVolumeSource             `json:"configMap,omitempty"`
	PersistentVolumeClaim *PersistentVolumeClaimVolumeSource `json:"persistentVolumeClaim,omitempty"`
	DownwardAPI           *DownwardAPIVolumeSource           `json:"downwardAPI,omitempty"`
	Projected             *ProjectedVolumeSource             `json:"projected,omitempty"`
	NFS                   json.RawMessage                    `json:"nfs,omitempty"`
	CSI                   json.RawMessage                    `json:"csi,omitempty"`
	Ephemeral             json.RawMessage                    `json:"ephemeral,omitempty"`
	Image                 json.RawMessage                    `json:"image,omitempty"`
	GitRepo               json.RawMessage                    `json:"gitRepo,omitempty"`
	ISCSI                 json.RawMessage                    `json:"iscsi,omitempty"`
	FC                    json.RawMessage                    `json:"fc,omitempty"`
	CephFS                json.RawMessage                    `json:"cephfs,omitempty"`
	RBD                   json.RawMessage                    `json:"rbd,omitempty"`
	Glusterfs             json.RawMessage                    `json:"glusterfs,omitempty"`
	// The deprecated in-tree cloud and network volumes, kept as written:
	// minik8s mounts none of them.
	GCEPersistentDisk    json.RawMessage `json:"gcePersistentDisk,omitempty"`
	AWSElasticBlockStore json.RawMessage `json:"awsElasticBlockStore,omitempty"`
	Flocker              json.RawMessage `json:"flocker,omitempty"`
	Cinder               json.RawMessage `json:"cinder,omitempty"`
	Quobyte              json.RawMessage `json:"quobyte,omitempty"`
	FlexVolume           json.RawMessage `json:"flexVolume,omitempty"`
	AzureFile            json.RawMessage `json:"azureFile,omitempty"`
	VsphereVolume        json.RawMessage `json:"vsphereVolume,omitempty"`
	PhotonPersistentDisk json.RawMessage `json:"photonPersistentDisk,omitempty"`
	PortworxVolume       json.RawMessage `json:"portworxVolume,omitempty"`
	AzureDisk            json.RawMessage `json:"azureDisk,omitempty"`
	StorageOS            json.RawMessage `json:"storageos,omitempty"`
	ScaleIO              json.RawMessage `json:"scaleIO,omitempty"`
}

// HostPathType checks what a hostPath volume points at.
type HostPathType string

// Host path types.
const (
	HostPathUnset             HostPathType = ""
	HostPathDirectoryOrCreate HostPathType = "DirectoryOrCreate"
	HostPathDirectory         HostPathType = "Directory"
	HostPathFileOrCreate      HostPathType = "FileOrCreate"
	HostPathFile              HostPathType = "File"
	HostPathSocket            HostPathType = "Socket"
	HostPathCharDev           HostPathType = "CharDevice"
	HostPathBlockDev          HostPathType = "BlockDevice"
)

// HostPathVolumeSource mounts a path of the node.
type HostPathVolumeSource struct {
	Path string        `json:"path"`
	Type *HostPathType `json:"type,omitempty"`
}

// StorageMedium is the backing of an emptyDir.
type StorageMedium string

// Storage media.
const (
	StorageMediumDefault   StorageMedium = ""
	StorageMediumMemory    StorageMedium = "Memory"
	StorageMediumHugePages StorageMedium = "HugePages"
)

// EmptyDirVolumeSource is a scratch directory living as long as the pod.
type EmptyDirVolumeSource struct {
	Medium    StorageMedium      `json:"medium,omitempty"`
	SizeLimit *resource.Quantity `json:"sizeLimit,omitempty"`
	Mode      *int32             `json:"mode,omitempty"`
}

// KeyToPath projects one key of a ConfigMap or Secret to a file.
type KeyToPath struct {
	Key  string `json:"key"`
	Path string `json:"path"`
	Mode *int32 `json:"mode,omitempty"`
	User *int64 `json:"user,omitempty"`
}

// ConfigMapVolumeSource projects a ConfigMap into files.
type ConfigMapVolumeSource struct {
	LocalObjectReference `json:",inline"`
	Items                []KeyToPath `json:"items,omitempty"`
	DefaultMode          *int32      `json:"defaultMode,omitempty"`
	Optional             *bool       `json:"optional,omitempty"`
	DefaultUser          *int64      `json:"defaultUser,omitempty"`
}

// SecretVolumeSource projects a Secret into files.
type SecretVolumeSource struct {
	SecretName  string      `json:"secretName,omitempty"`
	Items       []KeyToPath `json:"items,omitempty"`
	DefaultMode *int32      `json:"defaultMode,omitempty"`
	Optional    *bool       `json:"optional,omitempty"`
	DefaultUser *int64      `json:"defaultUser,omitempty"`
}

// Default file modes of ConfigMap and Secret volumes.
const (
	ConfigMapVolumeSourceDefaultMode int32 = 0o644
	SecretVolumeSourceDefaultMode    int32 = 0o644
)

// DownwardAPIVolumeSource writes fields of the pod and its containers'
// resources into files.
type DownwardAPIVolumeSource struct {
	Items       []DownwardAPIVolumeFile `json:"items,omitempty"`
	DefaultMode *int32                  `json:"defaultMode,omitempty"`
	DefaultUser *int64                  `json:"defaultUser,omitempty"`
}

// DownwardAPIVolumeFile is one file of a downwardAPI volume or projection:
// exactly one of fieldRef (metadata.name, metadata.namespace, metadata.uid,
// metadata.labels, metadata.annotations) and resourceFieldRef.
type DownwardAPIVolumeFile struct {
	Path             string                 `json:"path"`
	FieldRef         *ObjectFieldSelector   `json:"fieldRef,omitempty"`
	ResourceFieldRef *ResourceFieldSelector `json:"resourceFieldRef,omitempty"`
	Mode             *int32                 `json:"mode,omitempty"`
	User             *int64                 `json:"user,omitempty"`
}

// ProjectedVolumeSource puts several sources (secrets, config maps, the
// downward API, a service account token) into one directory.
type ProjectedVolumeSource struct {
	Sources     []VolumeProjection `json:"sources"`
	DefaultMode *int32             `json:"defaultMode,omitempty"`
	DefaultUser *int64             `json:"defaultUser,omitempty"`
}

// VolumeProjection is one source of a projected volume; exactly one member
// is set.
type VolumeProjection struct {
	Secret              *SecretProjection              `json:"secret,omitempty"`
	DownwardAPI         *DownwardAPIProjection         `json:"downwardAPI,omitempty"`
	ConfigMap           *ConfigMapProjection           `json:"configMap,omitempty"`
	ServiceAccountToken *ServiceAccountTokenProjection `json:"serviceAccountToken,omitempty"`
	ClusterTrustBundle  *ClusterTrustBundleProjection  `json:"clusterTrustBundle,omitempty"`
	PodCertificate      *PodCertificateProjection      `json:"podCertificate,omitempty"`
}

// ClusterTrustBundleProjection projects the PEM trust anchors of one
// ClusterTrustBundle (by name) or of every bundle of a signer whose labels
// match the selector (a nil selector matches none), into one file.
type ClusterTrustBundleProjection struct {
	Name          *string        `json:"name,omitempty"`
	SignerName    *string        `json:"signerName,omitempty"`
	LabelSelector *LabelSelector `json:"labelSelector,omitempty"`
	Optional      *bool          `json:"optional,omitempty"`
	Path          string         `json:"path"`
	User          *int64         `json:"user,omitempty"`
}

// PodCertificateProjection asks the kubelet for a private key and a
// certificate for it issued by a signer through a PodCertificateRequest,
// written as a credential bundle (key then chain) and/or separate files.
type PodCertificateProjection struct {
	SignerName           string            `json:"signerName,omitempty"`
	KeyType              string            `json:"keyType,omitempty"`
	MaxExpirationSeconds *int32            `json:"maxExpirationSeconds,omitempty"`
	CredentialBundlePath string            `json:"credentialBundlePath,omitempty"`
	KeyPath              string            `json:"keyPath,omitempty"`
	CertificateChainPath string            `json:"certificateChainPath,omitempty"`
	UserAnnotations      map[string]string `json:"userAnnotations,omitempty"`
	User                 *int64            `json:"user,omitempty"`
}

// PodCertificateProjectionDefaultMaxExpirationSeconds is the lifetime a
// kubelet asks for when the projection names none (24 hours).
const PodCertificateProjectionDefaultMaxExpirationSeconds int32 = 86400

// SecretProjection projects keys of a Secret.
type SecretProjection struct {
	LocalObjectReference `json:",inline"`
	Items                []KeyToPath `json:"items,omitempty"`
	Optional             *bool       `json:"optional,omitempty"`
}

// ConfigMapProjection projects keys of a ConfigMap.
type ConfigMapProjection struct {
	LocalObjectReference `json:",inline"`
	Items                []KeyToPath `json:"items,omitempty"`
	Optional             *bool       `json:"optional,omitempty"`
}

// DownwardAPIProjection projects pod fields.
type DownwardAPIProjection struct {
	Items []DownwardAPIVolumeFile `json:"items,omitempty"`
}

// ServiceAccountTokenProjection asks the kubelet for a token of the pod's
// service account (TokenRequest, bound to the pod) and keeps it fresh.
type ServiceAccountTokenProjection struct {
	Audience          string `json:"audience,omitempty"`
	ExpirationSeconds *int64 `json:"expirationSeconds,omitempty"`
	Path              string `json:"path"`
	User              *int64 `json:"user,omitempty"`
}

// Default file modes and token lifetime of downwardAPI and projected volumes.
const (
	DownwardAPIVolumeSourceDefaultMode int32 = 0o644
	ProjectedVolumeSourceDefaultMode   int32 = 0o644
	// ServiceAccountTokenDefaultExpirationSeconds is a projected token's
	// default lifetime; the minimum is 600.
	ServiceAccountTokenDefaultExpirationSeconds int64 = 3600
)

// PersistentVolumeClaimVolumeSource references a PersistentVolumeClaim.
// minik8s does not serve claims; the field is kept for manifests.
type PersistentVolumeClaimVolumeSource struct {
	ClaimName string `json:"claimName"`
	ReadOnly  bool   `json:"readOnly,omitempty"`
}

// RestartPolicy is the restart policy of a pod's containers.
type RestartPolicy string

// Restart policies.
const (
	RestartPolicyAlways    RestartPolicy = "Always"
	RestartPolicyOnFailure RestartPolicy = "OnFailure"
	RestartPolicyNever     RestartPolicy = "Never"
)

// DNSPolicy says how a pod's DNS is configured.
type DNSPolicy string

// DNS policies.
const (
	DNSClusterFirstWithHostNet DNSPolicy = "ClusterFirstWithHostNet"
	DNSClusterFirst            DNSPolicy = "ClusterFirst"
	DNSDefault                 DNSPolicy = "Default"
	DNSNone                    DNSPolicy = "None"
)

// DefaultSchedulerName is the scheduler of pods that name none.
const DefaultSchedulerName = "default-scheduler"

// DefaultTerminationGracePeriodSeconds is the default grace period of a pod.
const DefaultTerminationGracePeriodSeconds int64 = 30

// Affinity groups a pod's scheduling constraints.
type Affinity struct {
	NodeAffinity    *NodeAffinity    `json:"nodeAffinity,omitempty"`
	PodAffinity     *PodAffinity     `json:"podAffinity,omitempty"`
	PodAntiAffinity *PodAntiAffinity `json:"podAntiAffinity,omitempty"`
}

// NodeAffinity constrains the nodes a pod may run on.
type NodeAffinity struct {
	RequiredDuringSchedulingIgnoredDuringExecution  *NodeSelector             `json:"requiredDuringSchedulingIgnoredDuringExecution,omitempty"`
	PreferredDuringSchedulingIgnoredDuringExecution []PreferredSchedulingTerm `json:"preferredDuringSchedulingIgnoredDuringExecution,omitempty"`
}

// NodeSelector is a union (OR) of node selector terms.
type NodeSelector struct {
	NodeSelectorTerms []NodeSelectorTerm `json:"nodeSelectorTerms"`
}

// NodeSelectorTerm is an intersection (AND) of requirements on node labels
// (matchExpressions) and node fields (matchFields, only metadata.name).
type NodeSelectorTerm struct {
	MatchExpressions []NodeSelectorRequirement `json:"matchExpressions,omitempty"`
	MatchFields      []NodeSelectorRequirement `json:"matchFields,omitempty"`
}

// NodeSelectorOperator is the operator of a node selector requirement.
type NodeSelectorOperator string

// Node selector operators.
const (
	NodeSelectorOpIn           NodeSelectorOperator = "In"
	NodeSelectorOpNotIn        NodeSelectorOperator = "NotIn"
	NodeSelectorOpExists       NodeSelectorOperator = "Exists"
	NodeSelectorOpDoesNotExist NodeSelectorOperator = "DoesNotExist"
	NodeSelectorOpGt           NodeSelectorOperator = "Gt"
	NodeSelectorOpLt           NodeSelectorOperator = "Lt"
)

// NodeSelectorRequirement is one requirement of a node selector term.
type NodeSelectorRequirement struct {
	Key      string               `json:"key"`
	Operator NodeSelectorOperator `json:"operator"`
	Values   []string             `json:"values,omitempty"`
}

// PreferredSchedulingTerm is a weighted node selector term.
type PreferredSchedulingTerm struct {
	Weight     int32            `json:"weight"`
	Preference NodeSelectorTerm `json:"preference"`
}

// PodAffinity attracts a pod to nodes running matching pods.
type PodAffinity struct {
	RequiredDuringSchedulingIgnoredDuringExecution  []PodAffinityTerm         `json:"requiredDuringSchedulingIgnoredDuringExecution,omitempty"`
	PreferredDuringSchedulingIgnoredDuringExecution []WeightedPodAffinityTerm `json:"preferredDuringSchedulingIgnoredDuringExecution,omitempty"`
}

// PodAntiAffinity repels a pod from nodes running matching pods.
type PodAntiAffinity struct {
	RequiredDuringSchedulingIgnoredDuringExecution  []PodAffinityTerm         `json:"requiredDuringSchedulingIgnoredDuringExecution,omitempty"`
	PreferredDuringSchedulingIgnoredDuringExecution []WeightedPodAffinityTerm `json:"preferredDuringSchedulingIgnoredDuringExecution,omitempty"`
}

// PodAffinityTerm selects pods (in namespaces) whose nodes share the value
// of topologyKey with the candidate node.
type PodAffinityTerm struct {
	LabelSelector     *LabelSelector `json:"labelSelector,omitempty"`
	Namespaces        []string       `json:"namespaces,omitempty"`
	TopologyKey       string         `json:"topologyKey"`
	NamespaceSelector *LabelSelector `json:"namespaceSelector,omitempty"`
	MatchLabelKeys    []string       `json:"matchLabelKeys,omitempty"`
	MismatchLabelKeys []string       `json:"mismatchLabelKeys,omitempty"`
}

// WeightedPodAffinityTerm is a pod affinity term with a weight (1-100).
type WeightedPodAffinityTerm struct {
	Weight          int32           `json:"weight"`
	PodAffinityTerm PodAffinityTerm `json:"podAffinityTerm"`
}

// TolerationOperator is the operator of a toleration.
type TolerationOperator string

// Toleration operators. Lt and Gt compare numerically (a newer Kubernetes
// feature); Exists and Equal are the classic two.
const (
	TolerationOpExists TolerationOperator = "Exists"
	TolerationOpEqual  TolerationOperator = "Equal"
	TolerationOpLt     TolerationOperator = "Lt"
	TolerationOpGt     TolerationOperator = "Gt"
)

// Toleration lets a pod run on nodes with a matching taint.
type Toleration struct {
	Key               string             `json:"key,omitempty"`
	Operator          TolerationOperator `json:"operator,omitempty"`
	Value             string             `json:"value,omitempty"`
	Effect            TaintEffect        `json:"effect,omitempty"`
	TolerationSeconds *int64             `json:"tolerationSeconds,omitempty"`
}

// HostAlias adds an /etc/hosts entry to a pod.
type HostAlias struct {
	IP        string   `json:"ip"`
	Hostnames []string `json:"hostnames,omitempty"`
}

// PodDNSConfig adds to the DNS configuration of a pod.
type PodDNSConfig struct {
	Nameservers []string             `json:"nameservers,omitempty"`
	Searches    []string             `json:"searches,omitempty"`
	Options     []PodDNSConfigOption `json:"options,omitempty"`
}

// PodDNSConfigOption is a resolver option.
type PodDNSConfigOption struct {
	Name  string  `json:"name,omitempty"`
	Value *string `json:"value,omitempty"`
}

// PodReadinessGate adds a condition the pod must have to be Ready.
type PodReadinessGate struct {
	ConditionType PodConditionType `json:"conditionType"`
}

// PreemptionPolicy says whether a pod may preempt lower-priority pods.
type PreemptionPolicy string

// Preemption policies.
const (
	PreemptLowerPriority PreemptionPolicy = "PreemptLowerPriority"
	PreemptNever         PreemptionPolicy = "Never"
)

// UnsatisfiableConstraintAction says what to do with an unsatisfiable
// topology spread constraint.
type UnsatisfiableConstraintAction string

// Unsatisfiable constraint actions.
const (
	DoNotSchedule  UnsatisfiableConstraintAction = "DoNotSchedule"
	ScheduleAnyway UnsatisfiableConstraintAction = "ScheduleAnyway"
)

// NodeInclusionPolicy says whether node affinity or taints count when
// computing topology spread.
type NodeInclusionPolicy string

// Node inclusion policies.
const (
	NodeInclusionPolicyIgnore NodeInclusionPolicy = "Ignore"
	NodeInclusionPolicyHonor  NodeInclusionPolicy = "Honor"
)

// TopologySpreadConstraint spreads matching pods across topology domains.
type TopologySpreadConstraint struct {
	MaxSkew            int32                         `json:"maxSkew"`
	TopologyKey        string                        `json:"topologyKey"`
	WhenUnsatisfiable  UnsatisfiableConstraintAction `json:"whenUnsatisfiable"`
	LabelSelector      *LabelSelector                `json:"labelSelector,omitempty"`
	MinDomains         *int32                        `json:"minDomains,omitempty"`
	NodeAffinityPolicy *NodeInclusionPolicy          `json:"nodeAffinityPolicy,omitempty"`
	NodeTaintsPolicy   *NodeInclusionPolicy          `json:"nodeTaintsPolicy,omitempty"`
	MatchLabelKeys     []string                      `json:"matchLabelKeys,omitempty"`
}

// PodOS names the operating system a pod needs.
type PodOS struct {
	Name string `json:"name"`
}

// PodSchedulingGate holds a pod back from scheduling while present.
type PodSchedulingGate struct {
	Name string `json:"name"`
}

// PodPhase is the high-level summary of a pod's lifecycle.
type PodPhase string

// Pod phases.
const (
	PodPending   PodPhase = "Pending"
	PodRunning   PodPhase = "Running"
	PodSucceeded PodPhase = "Succeeded"
	PodFailed    PodPhase = "Failed"
	PodUnknown   PodPhase = "Unknown"
)

// PodConditionType is the type of a pod condition.
type PodConditionType string

// Pod condition types.
const (
	PodScheduled              PodConditionType = "PodScheduled"
	PodInitialized            PodConditionType = "Initialized"
	ContainersReady           PodConditionType = "ContainersReady"
	PodReady                  PodConditionType = "Ready"
	PodReadyToStartContainers PodConditionType = "PodReadyToStartContainers"
	DisruptionTarget          PodConditionType = "DisruptionTarget"
)

// Reasons of the PodScheduled condition.
const (
	PodReasonUnschedulable   = "Unschedulable"
	PodReasonSchedulingGated = "SchedulingGated"
	// PodReasonPreemptionByScheduler is the reason of the DisruptionTarget
	// condition a scheduler sets on the pods it preempts.
	PodReasonPreemptionByScheduler = "PreemptionByScheduler"
)

// PodQOSClass is the quality-of-service class of a pod.
type PodQOSClass string

// QoS classes.
const (
	PodQOSGuaranteed PodQOSClass = "Guaranteed"
	PodQOSBurstable  PodQOSClass = "Burstable"
	PodQOSBestEffort PodQOSClass = "BestEffort"
)

// ComputePodQOS is a pod's quality-of-service class, as Kubernetes v1.37
// computes it: per container (init containers included), cpu and memory
// each requested exactly as limited (or neither set) make it Guaranteed
// (both set) or BestEffort (neither), anything else Burstable; a container
// with no requests or limits at all is BestEffort. The pod is Burstable as
// soon as one container is, or when its containers disagree.
func ComputePodQOS(pod *Pod) PodQOSClass {
	var podQOS PodQOSClass
	for _, cs := range [][]Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range cs {
			q := containerQOS(&cs[i].Resources)
			switch {
			case q == PodQOSBurstable:
				return q
			case podQOS == "":
				podQOS = q
			case podQOS != q:
				return PodQOSBurstable
			}
		}
	}
	if podQOS == "" {
		return PodQOSBestEffort
	}
	return podQOS
}

func containerQOS(r *ResourceRequirements) PodQOSClass {
	if len(r.Requests) == 0 && len(r.Limits) == 0 {
		return PodQOSBestEffort
	}
	var qos PodQOSClass
	for _, name := range []ResourceName{ResourceCPU, ResourceMemory} {
		req, lim := r.Requests[name], r.Limits[name]
		q := PodQOSGuaranteed
		if !req.Equal(lim) {
			return PodQOSBurstable
		} else if req.IsZero() {
			q = PodQOSBestEffort
		}
		if qos == "" {
			qos = q
		} else if qos != q {
			return PodQOSBurstable
		}
	}
	return qos
}

// PodStatus is the observed state of a pod, written by the kubelet (and the
// scheduler for PodScheduled).
type PodStatus struct {
	ObservedGeneration    int64             `json:"observedGeneration,omitempty"`
	Phase                 PodPhase          `json:"phase,omitempty"`
	Conditions            []PodCondition    `json:"conditions,omitempty"`
	Message               string            `json:"message,omitempty"`
	Reason                string            `json:"reason,omitempty"`
	NominatedNodeName     string            `json:"nominatedNodeName,omitempty"`
	HostIP                string            `json:"hostIP,omitempty"`
	HostIPs               []HostIP          `json:"hostIPs,omitempty"`
	PodIP                 string            `json:"podIP,omitempty"`
	PodIPs                []PodIP           `json:"podIPs,omitempty"`
	StartTime             *Time             `json:"startTime,omitempty"`
	InitContainerStatuses []ContainerStatus `json:"initContainerStatuses,omitempty"`
	ContainerStatuses     []ContainerStatus `json:"containerStatuses,omitempty"`
	QOSClass              PodQOSClass       `json:"qosClass,omitempty"`
	// EphemeralContainerStatuses report the containers kubectl debug added.
	EphemeralContainerStatuses []ContainerStatus `json:"ephemeralContainerStatuses,omitempty"`
	// Resize is deprecated (the PodResizePending and PodResizeInProgress
	// conditions replace it) but still served.
	Resize                               PodResizeStatus                      `json:"resize,omitempty"`
	ResourceClaimStatuses                []PodResourceClaimStatus             `json:"resourceClaimStatuses,omitempty"`
	ExtendedResourceClaimStatus          *PodExtendedResourceClaimStatus      `json:"extendedResourceClaimStatus,omitempty"`
	AllocatedResources                   ResourceList                         `json:"allocatedResources,omitempty"`
	Resources                            *ResourceRequirements                `json:"resources,omitempty"`
	NodeAllocatableResourceClaimStatuses []NodeAllocatableResourceClaimStatus `json:"nodeAllocatableResourceClaimStatuses,omitempty"`
	VolumeHealth                         []PodVolumeHealth                    `json:"volumeHealth,omitempty"`
}

// PodResizeStatus is the state of an in-place resize (deprecated field
// status.resize).
type PodResizeStatus string

// Pod resize states.
const (
	PodResizeStatusInProgress PodResizeStatus = "InProgress"
	PodResizeStatusDeferred   PodResizeStatus = "Deferred"
	PodResizeStatusInfeasible PodResizeStatus = "Infeasible"
)

// PodResourceClaimStatus names the ResourceClaim made for a pod's claim
// template.
type PodResourceClaimStatus struct {
	Name              string  `json:"name"`
	ResourceClaimName *string `json:"resourceClaimName,omitempty"`
}

// PodExtendedResourceClaimStatus is the ResourceClaim made for a pod's
// extended resource requests, and which request serves which container.
type PodExtendedResourceClaimStatus struct {
	RequestMappings   []ContainerExtendedResourceRequest `json:"requestMappings"`
	ResourceClaimName string                             `json:"resourceClaimName"`
}

// ContainerExtendedResourceRequest maps a container's extended resource to
// a request of the claim.
type ContainerExtendedResourceRequest struct {
	ContainerName string `json:"containerName"`
	ResourceName  string `json:"resourceName"`
	RequestName   string `json:"requestName"`
}

// NodeAllocatableResourceClaimStatus is how a claim's devices map onto the
// node's allocatable resources for the pod.
type NodeAllocatableResourceClaimStatus struct {
	ResourceClaimName string                             `json:"resourceClaimName"`
	Containers        []string                           `json:"containers,omitempty"`
	Mapping           []NodeAllocatableMappedResources   `json:"mapping,omitempty"`
	Overhead          []NodeAllocatableOverheadResources `json:"overhead,omitempty"`
}

// NodeAllocatableMappedResources is one node resource a claim accounts for.
type NodeAllocatableMappedResources struct {
	Name     ResourceName       `json:"name"`
	Quantity *resource.Quantity `json:"quantity"`
}

// NodeAllocatableOverheadResources is the overhead of one node resource.
type NodeAllocatableOverheadResources struct {
	Name         ResourceName       `json:"name"`
	PerPod       *resource.Quantity `json:"perPod,omitempty"`
	PerContainer *resource.Quantity `json:"perContainer,omitempty"`
}

// PodVolumeHealth is the health of one volume of the pod.
type PodVolumeHealth struct {
	Name               string                  `json:"name"`
	HealthConditions   []VolumeHealthCondition `json:"healthConditions,omitempty"`
	LastTransitionTime Time                    `json:"lastTransitionTime,omitempty"`
}

// VolumeHealthCondition is one health condition of a volume.
type VolumeHealthCondition struct {
	Status  string `json:"status"`
	Reason  string `json:"reason"`
	Message string `json:"message,omitempty"`
}

// EphemeralContainer is a container added to a running pod through the
// pods/ephemeralcontainers subresource, for debugging: it is never
// restarted, has no ports, probes, lifecycle or resources, and with
// TargetContainerName shares that container's process namespace.
type EphemeralContainer struct {
	Container           `json:",inline"`
	TargetContainerName string `json:"targetContainerName,omitempty"`
}

// PodCondition is one condition of a pod.
type PodCondition struct {
	Type               PodConditionType `json:"type"`
	ObservedGeneration int64            `json:"observedGeneration,omitempty"`
	Status             ConditionStatus  `json:"status"`
	LastProbeTime      Time             `json:"lastProbeTime"`      // null when unset, as kube writes it
	LastTransitionTime Time             `json:"lastTransitionTime"` // likewise
	Reason             string           `json:"reason,omitempty"`
	Message            string           `json:"message,omitempty"`
}

// PodIP is one IP of a pod.
type PodIP struct {
	IP string `json:"ip"`
}

// HostIP is one IP of a pod's node.
type HostIP struct {
	IP string `json:"ip"`
}

// ContainerStatus is the observed state of one container.
type ContainerStatus struct {
	Name                 string         `json:"name"`
	State                ContainerState `json:"state"`     // written even when empty, as kube does
	LastTerminationState ContainerState `json:"lastState"` // likewise
	Ready                bool           `json:"ready"`
	RestartCount         int32          `json:"restartCount"`
	Image                string         `json:"image"`
	ImageID              string         `json:"imageID"`
	ContainerID          string         `json:"containerID,omitempty"`
	Started              *bool          `json:"started,omitempty"`
	// AllocatedResources are the resources the node allocated to the
	// container (its requests as admitted, which an in-place resize
	// changes).
	AllocatedResources ResourceList `json:"allocatedResources,omitempty"`
	// Resources are the requests and limits the running container has.
	Resources                *ResourceRequirements `json:"resources,omitempty"`
	VolumeMounts             []VolumeMountStatus   `json:"volumeMounts,omitempty"`
	User                     *ContainerUser        `json:"user,omitempty"`
	AllocatedResourcesStatus []ResourceStatus      `json:"allocatedResourcesStatus,omitempty"`
	StopSignal               *Signal               `json:"stopSignal,omitempty"`
}

// ContainerUser is the identity the container's first process runs as.
type ContainerUser struct {
	Linux *LinuxContainerUser `json:"linux,omitempty"`
}

// LinuxContainerUser is a Linux process's uid, gid and groups.
type LinuxContainerUser struct {
	UID                int64   `json:"uid"`
	GID                int64   `json:"gid"`
	SupplementalGroups []int64 `json:"supplementalGroups,omitempty"`
}

// VolumeMountStatus is a volume mount as the runtime made it.
type VolumeMountStatus struct {
	Name              string                 `json:"name"`
	MountPath         string                 `json:"mountPath"`
	ReadOnly          bool                   `json:"readOnly,omitempty"`
	RecursiveReadOnly *RecursiveReadOnlyMode `json:"recursiveReadOnly,omitempty"`
	VolumeStatus      *VolumeStatus          `json:"volumeStatus,omitempty"`
}

// VolumeStatus is the status of a mounted volume's source.
type VolumeStatus struct {
	Image *ImageVolumeStatus `json:"image,omitempty"`
}

// ImageVolumeStatus is the image an image volume was made from.
type ImageVolumeStatus struct {
	ImageRef string `json:"imageRef,omitempty"`
}

// ResourceStatus is the health of the devices allocated to a container
// for one resource.
type ResourceStatus struct {
	Name      ResourceName     `json:"name"`
	Resources []ResourceHealth `json:"resources,omitempty"`
}

// ResourceHealthStatus is Healthy, Unhealthy or Unknown.
type ResourceHealthStatus string

// ResourceHealth is the health of one allocated device.
type ResourceHealth struct {
	ResourceID string               `json:"resourceID"`
	Health     ResourceHealthStatus `json:"health,omitempty"`
	Message    *string              `json:"message,omitempty"`
}

// ContainerState is the state of a container; at most one member is set
// (none means Waiting).
type ContainerState struct {
	Waiting    *ContainerStateWaiting    `json:"waiting,omitempty"`
	Running    *ContainerStateRunning    `json:"running,omitempty"`
	Terminated *ContainerStateTerminated `json:"terminated,omitempty"`
}

// ContainerStateWaiting is a container not yet running.
type ContainerStateWaiting struct {
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

// ContainerStateRunning is a running container.
type ContainerStateRunning struct {
	StartedAt Time `json:"startedAt,omitzero"`
}

// ContainerStateTerminated is a container that exited.
type ContainerStateTerminated struct {
	ExitCode    int32  `json:"exitCode"`
	Signal      int32  `json:"signal,omitempty"`
	Reason      string `json:"reason,omitempty"`
	Message     string `json:"message,omitempty"`
	StartedAt   Time   `json:"startedAt,omitzero"`
	FinishedAt  Time   `json:"finishedAt,omitzero"`
	ContainerID string `json:"containerID,omitempty"`
}
