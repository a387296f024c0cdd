package validation

import (
	"strings"
	"testing"

	"github.com/minik8s/minik8s/api"
)

func TestValidatePod(t *testing.T) {
	t.Parallel()
	c0 := "spec.containers[0]"
	tests := []struct {
		name   string
		mutate func(*api.Pod)
		want   []string
	}{
		{"valid", func(*api.Pod) {}, nil},
		{"no containers", func(p *api.Pod) { p.Spec.Containers = nil }, []string{"spec.containers: Required value"}},
		{"container name missing and image missing", func(p *api.Pod) {
			p.Spec.Containers[0].Name = ""
			p.Spec.Containers[0].Image = ""
		}, []string{c0 + ".name: Required value", c0 + ".image: Required value"}},
		{"container name not a DNS label", func(p *api.Pod) { p.Spec.Containers[0].Name = "Nginx_1" }, []string{
			c0 + `.name: Invalid value: "Nginx_1": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`,
		}},
		{"duplicate container names", func(p *api.Pod) {
			p.Spec.Containers = append(p.Spec.Containers, p.Spec.Containers[0])
			p.Spec.Containers[1].Ports = nil
		}, []string{`spec.containers[1].name: Duplicate value: "nginx"`}},
		{"init container name collides", func(p *api.Pod) {
			ic := p.Spec.Containers[0]
			ic.Ports, ic.ReadinessProbe = nil, nil
			p.Spec.InitContainers = []api.Container{ic}
		}, []string{`spec.initContainers[0].name: Duplicate value: "nginx"`}},
		{"image with whitespace", func(p *api.Pod) { p.Spec.Containers[0].Image = " nginx" }, []string{
			c0 + `.image: Invalid value: " nginx": must not have leading or trailing whitespace`}},
		{"requests above limits", func(p *api.Pod) {
			p.Spec.Containers[0].Resources.Requests[api.ResourceCPU] = q("2")
		}, []string{c0 + `.resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1`}},
		{"negative request and unknown resource", func(p *api.Pod) {
			p.Spec.Containers[0].Resources.Requests[api.ResourceMemory] = q("-1")
			p.Spec.Containers[0].Resources.Limits["gpu"] = q("1")
		}, []string{
			c0 + `.resources.requests[memory]: Invalid value: "-1": must be greater than or equal to 0`,
			c0 + `.resources.limits[gpu]: Invalid value: "gpu": must be a standard resource type or fully qualified`,
			c0 + `.resources.limits[gpu]: Invalid value: "gpu": must be a standard resource for containers`,
		}},
		{"extended resource must be whole and not overcommitted", func(p *api.Pod) {
			p.Spec.Containers[0].Resources.Limits["example.com/gpu"] = q("1500m")
			p.Spec.Containers[0].Resources.Requests["example.com/fpga"] = q("1")
		}, []string{
			c0 + `.resources.limits[example.com/gpu]: Invalid value: "1500m": must be an integer`,
			c0 + `.resources.limits: Required value: Limit must be set for non overcommitable resources`,
		}},
		{"ports", func(p *api.Pod) {
			p.Spec.Containers[0].Ports = []api.ContainerPort{
				{Name: "http", ContainerPort: 80, Protocol: "TCP"},
				{Name: "http", ContainerPort: 70000, Protocol: "ICMP"},
				{Name: "BAD", ContainerPort: 0, Protocol: "TCP"},
			}
		}, []string{
			c0 + `.ports[1].name: Duplicate value: "http"`,
			c0 + `.ports[1].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive`,
			c0 + `.ports[1].protocol: Unsupported value: "ICMP": supported values: "SCTP", "TCP", "UDP"`,
			c0 + `.ports[2].name: Invalid value: "BAD": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)`,
			c0 + `.ports[2].name: Invalid value: "BAD": must contain at least one letter (a-z)`,
			c0 + `.ports[2].containerPort: Required value`,
		}},
		{"host port conflict", func(p *api.Pod) {
			p.Spec.Containers[0].Ports = []api.ContainerPort{{ContainerPort: 80, HostPort: 8080, Protocol: "TCP"}, {ContainerPort: 81, HostPort: 8080, Protocol: "TCP"}}
		}, []string{c0 + `.ports[1].hostPort: Duplicate value: "TCP//8080"`}},
		{"env", func(p *api.Pod) {
			p.Spec.Containers[0].Env = []api.EnvVar{
				{Name: ""},
				{Name: "A=B"},
				{Name: "X", Value: "v", ValueFrom: &api.EnvVarSource{FieldRef: &api.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.name"}}},
				{Name: "Y", ValueFrom: &api.EnvVarSource{}},
				{Name: "Z", ValueFrom: &api.EnvVarSource{FieldRef: &api.ObjectFieldSelector{APIVersion: "v1", FieldPath: "spec.restartPolicy"}}},
				{Name: "W", ValueFrom: &api.EnvVarSource{FieldRef: &api.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.foo"}}},
				{Name: "L", ValueFrom: &api.EnvVarSource{FieldRef: &api.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.labels['app']"}}},
				{Name: "S", ValueFrom: &api.EnvVarSource{SecretKeyRef: &api.SecretKeySelector{LocalObjectReference: api.LocalObjectReference{Name: "s"}, Key: "bad key"}}},
			}
		}, []string{
			c0 + ".env[0].name: Required value",
			c0 + `.env[1].name: Invalid value: "A=B": ...`,
			c0 + `.env[2].valueFrom: Invalid value: "": may not be specified when ` + "`value`" + ` is not empty`,
			c0 + `.env[3].valueFrom: Invalid value: "": must specify one of: ` + "`fieldRef`, `resourceFieldRef`, `configMapKeyRef`, `secretKeyRef` or `fileKeyRef`",
			c0 + `.env[4].valueFrom.fieldRef.fieldPath: Unsupported value: "spec.restartPolicy": supported values: "metadata.name", "metadata.namespace", "metadata.uid", "spec.nodeName", "spec.serviceAccountName", "status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs"`,
			c0 + `.env[5].valueFrom.fieldRef.fieldPath: Invalid value: "metadata.foo": error converting fieldPath: field label not supported: metadata.foo`,
			c0 + `.env[7].valueFrom.secretKeyRef.key: Invalid value: "bad key": a valid config key must consist of alphanumeric characters, '-', '_' or '.' ...`,
		}},
		{"volume mount to unknown volume, duplicate path", func(p *api.Pod) {
			p.Spec.Containers[0].VolumeMounts = []api.VolumeMount{{Name: "data", MountPath: "/data"}, {Name: "cache", MountPath: "/data"}}
		}, []string{
			c0 + `.volumeMounts[1].name: Not found: "cache"`,
			c0 + `.volumeMounts[1].mountPath: Invalid value: "/data": must be unique`,
		}},
		{"volumes: duplicate, two sources, none", func(p *api.Pod) {
			p.Spec.Volumes = []api.Volume{
				{Name: "data", VolumeSource: api.VolumeSource{EmptyDir: &api.EmptyDirVolumeSource{}}},
				{Name: "data", VolumeSource: api.VolumeSource{EmptyDir: &api.EmptyDirVolumeSource{}}},
				{Name: "two", VolumeSource: api.VolumeSource{EmptyDir: &api.EmptyDirVolumeSource{}, HostPath: &api.HostPathVolumeSource{Path: "/x"}}},
				{Name: "none"},
				{Name: "cm", VolumeSource: api.VolumeSource{ConfigMap: &api.ConfigMapVolumeSource{DefaultMode: ptr(int32(0o1000)),
					Items: []api.KeyToPath{{Key: "k", Path: "../etc"}}}}},
			}
		}, []string{
			`spec.volumes[1].name: Duplicate value: "data"`,
			`spec.volumes[2].hostPath: Forbidden: may not specify more than 1 volume type`,
			`spec.volumes[3]: Required value: must specify a volume type`,
			`spec.volumes[4].configMap.name: Required value`,
			`spec.volumes[4].configMap.defaultMode: Invalid value: 512: must be a number between 0 and 0777 (octal), both inclusive`,
			`spec.volumes[4].configMap.items[0].path: Invalid value: "../etc": must not contain '..'`,
		}},
		{"projected: the service account volume admission adds is valid", func(p *api.Pod) {
			p.Spec.Volumes = append(p.Spec.Volumes, api.Volume{Name: "kube-api-access-x7k2p", VolumeSource: api.VolumeSource{Projected: &api.ProjectedVolumeSource{
				DefaultMode: ptr(int32(420)),
				Sources: []api.VolumeProjection{
					{ServiceAccountToken: &api.ServiceAccountTokenProjection{ExpirationSeconds: ptr(int64(3607)), Path: "token"}},
					{ConfigMap: &api.ConfigMapProjection{LocalObjectReference: api.LocalObjectReference{Name: "kube-root-ca.crt"}, Items: []api.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
					{DownwardAPI: &api.DownwardAPIProjection{Items: []api.DownwardAPIVolumeFile{{Path: "namespace", FieldRef: &api.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}}}},
				},
			}}})
		}, nil},
		{"projected and downwardAPI sources", func(p *api.Pod) {
			p.Spec.Volumes = []api.Volume{
				{Name: "data", VolumeSource: api.VolumeSource{EmptyDir: &api.EmptyDirVolumeSource{}}},
				{Name: "p", VolumeSource: api.VolumeSource{Projected: &api.ProjectedVolumeSource{
					DefaultMode: ptr(int32(0o1000)),
					Sources: []api.VolumeProjection{
						{ServiceAccountToken: &api.ServiceAccountTokenProjection{ExpirationSeconds: ptr(int64(60)), Path: "token"}},
						{ServiceAccountToken: &api.ServiceAccountTokenProjection{ExpirationSeconds: ptr(int64(3600))}},
						{ConfigMap: &api.ConfigMapProjection{Items: []api.KeyToPath{{Key: "a", Path: "token"}, {Key: "b", Path: "x"}}},
							Secret: &api.SecretProjection{LocalObjectReference: api.LocalObjectReference{Name: "s"}, Items: []api.KeyToPath{{Key: "c", Path: "x"}}}},
						{DownwardAPI: &api.DownwardAPIProjection{Items: []api.DownwardAPIVolumeFile{
							{Path: "ip", FieldRef: &api.ObjectFieldSelector{APIVersion: "v1", FieldPath: "status.podIP"}},
							{Path: "/abs"},
						}}},
					},
				}}},
				{Name: "d", VolumeSource: api.VolumeSource{DownwardAPI: &api.DownwardAPIVolumeSource{Items: []api.DownwardAPIVolumeFile{
					{Path: "labels", FieldRef: &api.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.labels"}},
					{Path: "cpu", ResourceFieldRef: &api.ResourceFieldSelector{Resource: "limits.cpu"}},
				}}}},
			}
		}, []string{
			`spec.volumes[1].projected.defaultMode: Invalid value: 512: must be a number between 0 and 0777 (octal), both inclusive`,
			`spec.volumes[1].projected.sources[0].serviceAccountToken.expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes`,
			`spec.volumes[1].projected.path: Required value`,
			`spec.volumes[1].projected.sources[2].configMap.name: Required value`,
			`spec.volumes[1].projected: Invalid value: "": conflicting duplicate paths`,
			`spec.volumes[1].projected.sources[2]: Forbidden: may not specify more than 1 volume type per source`,
			`spec.volumes[1].projected.sources[3].downwardAPI.fieldRef.fieldPath: Unsupported value: "status.podIP": supported values: "metadata.annotations", "metadata.labels", "metadata.name", "metadata.namespace", "metadata.uid"`,
			`spec.volumes[1].projected.sources[3].downwardAPI.path: Invalid value: "/abs": must be a relative path`,
			`spec.volumes[1].projected.sources[3].downwardAPI: Required value: one of fieldRef and resourceFieldRef is required`,
			`spec.volumes[2].downwardAPI.resourceFieldRef.containerName: Required value`,
		}},
		{"v1.37 container fields: resizePolicy, restartPolicyRules, recursiveReadOnly", func(p *api.Pod) {
			p.Spec.RestartPolicy = api.RestartPolicyNever
			c := &p.Spec.Containers[0]
			c.ResizePolicy = []api.ContainerResizePolicy{{ResourceName: "cpu", RestartPolicy: "RestartContainer"},
				{ResourceName: "cpu", RestartPolicy: "NotRequired"}, {ResourceName: "gpu", RestartPolicy: "Sometimes"}}
			c.RestartPolicyRules = []api.ContainerRestartRule{{Action: "Kill", ExitCodes: &api.ContainerRestartRuleOnExitCodes{Operator: "Is"}}, {Action: "Restart"}}
			rro := api.RecursiveReadOnlyEnabled
			p.Spec.Volumes = append(p.Spec.Volumes, api.Volume{Name: "scratch", VolumeSource: api.VolumeSource{EmptyDir: &api.EmptyDirVolumeSource{}}})
			c.VolumeMounts = append(c.VolumeMounts, api.VolumeMount{Name: "scratch", MountPath: "/scratch", RecursiveReadOnly: &rro})
		}, []string{
			c0 + `.resizePolicy: Invalid value: "RestartContainer": must be 'NotRequired' when pod ` + "`restartPolicy`" + ` is 'Never'`,
			c0 + `.resizePolicy[1]: Duplicate value: "cpu"`,
			c0 + `.resizePolicy: Unsupported value: "gpu": supported values: "cpu", "memory"`,
			c0 + `.resizePolicy: Unsupported value: "Sometimes": supported values: "NotRequired", "RestartContainer"`,
			c0 + `.resizePolicy: Invalid value: "Sometimes": must be 'NotRequired' when pod ` + "`restartPolicy`" + ` is 'Never'`,
			c0 + `.restartPolicy: Required value: must specify restartPolicy when restart rules are used`,
			c0 + `.restartPolicyRules[0].action: Unsupported value: "Kill": supported values: "Restart", "RestartAllContainers"`,
			c0 + `.restartPolicyRules[0].exitCodes.operator: Unsupported value: "Is": supported values: "In", "NotIn"`,
			c0 + `.restartPolicyRules[1].exitCodes: Required value: must be specified`,
			c0 + `.volumeMounts.recursiveReadOnly: Forbidden: may only be specified when readOnly is true`,
		}},
		{"policies", func(p *api.Pod) {
			p.Spec.RestartPolicy = "Sometimes"
			p.Spec.DNSPolicy = ""
			p.Spec.Containers[0].ImagePullPolicy = "Maybe"
		}, []string{
			`spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"`,
			`spec.dnsPolicy: Required value`,
			c0 + `.imagePullPolicy: Unsupported value: "Maybe": supported values: "Always", "IfNotPresent", "Never"`,
		}},
		{"probes", func(p *api.Pod) {
			p.Spec.Containers[0].LivenessProbe = &api.Probe{ProbeHandler: api.ProbeHandler{Exec: &api.ExecAction{}, TCPSocket: &api.TCPSocketAction{Port: api.FromInt(80)}},
				SuccessThreshold: 2, PeriodSeconds: -1, FailureThreshold: 3, TimeoutSeconds: 1}
			p.Spec.Containers[0].ReadinessProbe.TerminationGracePeriodSeconds = ptr(int64(5))
			p.Spec.Containers[0].StartupProbe = &api.Probe{SuccessThreshold: 1}
		}, []string{
			c0 + `.livenessProbe.exec.command: Required value`,
			c0 + `.livenessProbe.tcpSocket: Forbidden: may not specify more than 1 handler type`,
			c0 + `.livenessProbe.periodSeconds: Invalid value: -1: must be greater than or equal to 0`,
			c0 + `.livenessProbe.successThreshold: Invalid value: 2: must be 1`,
			c0 + `.readinessProbe.terminationGracePeriodSeconds: Invalid value: 5: must not be set for readinessProbes`,
			c0 + `.startupProbe: Required value: must specify a handler type`,
		}},
		{"init container probes need restartPolicy Always", func(p *api.Pod) {
			p.Spec.InitContainers = []api.Container{{Name: "init", Image: "busybox", ImagePullPolicy: api.PullAlways,
				TerminationMessagePolicy: api.TerminationMessageReadFile, LivenessProbe: p.Spec.Containers[0].ReadinessProbe}}
			// kube v1.37 (ContainerRestartRules, beta) lets any container
			// have Always, Never or OnFailure.
			p.Spec.Containers[0].RestartPolicy = ptr(api.ContainerRestartPolicy("Sometimes"))
		}, []string{
			`spec.initContainers[0].livenessProbe: Forbidden: may not be set for init containers without restartPolicy=Always`,
			c0 + `.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "Never", "OnFailure"`,
		}},
		{"tolerations", func(p *api.Pod) {
			p.Spec.Tolerations = []api.Toleration{
				{Key: "", Operator: api.TolerationOpEqual},
				{Key: "k", Operator: api.TolerationOpExists, Value: "v"},
				{Key: "k", Operator: "Like"},
				{Key: "k", Operator: api.TolerationOpEqual, Value: "v", Effect: "NoRun"},
				{Key: "k", Operator: api.TolerationOpExists, Effect: api.TaintEffectNoSchedule, TolerationSeconds: ptr(int64(5))},
			}
		}, []string{
			`spec.tolerations[0].operator: Invalid value: "Equal": operator must be Exists when ` + "`key`" + ` is empty, which means "match all values and all keys"`,
			`spec.tolerations[1].operator: Invalid value: "v": value must be empty when ` + "`operator`" + ` is 'Exists'`,
			`spec.tolerations[2].operator: Unsupported value: "Like": supported values: "Equal", "Exists"`,
			`spec.tolerations[3].effect: Unsupported value: "NoRun": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"`,
			`spec.tolerations[4].effect: Invalid value: "NoSchedule": effect must be 'NoExecute' when ` + "`tolerationSeconds`" + ` is set`,
		}},
		{"affinity", func(p *api.Pod) {
			p.Spec.Affinity = &api.Affinity{
				NodeAffinity: &api.NodeAffinity{
					RequiredDuringSchedulingIgnoredDuringExecution: &api.NodeSelector{NodeSelectorTerms: []api.NodeSelectorTerm{{
						MatchExpressions: []api.NodeSelectorRequirement{
							{Key: "zone", Operator: "Near", Values: []string{"a"}},
							{Key: "zone", Operator: api.NodeSelectorOpIn},
							{Key: "cores", Operator: api.NodeSelectorOpGt, Values: []string{"1", "2"}},
							{Key: "ssd", Operator: api.NodeSelectorOpExists, Values: []string{"x"}},
						},
						MatchFields: []api.NodeSelectorRequirement{{Key: "metadata.uid", Operator: api.NodeSelectorOpIn, Values: []string{"a"}}},
					}}},
					PreferredDuringSchedulingIgnoredDuringExecution: []api.PreferredSchedulingTerm{{Weight: 0}},
				},
				PodAntiAffinity: &api.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []api.PodAffinityTerm{{
					LabelSelector: &api.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
				}}},
			}
		}, []string{
			`spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].operator: Invalid value: "Near": not a valid selector operator`,
			`spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[1].values: Required value: must be specified when ` + "`operator`" + ` is 'In' or 'NotIn'`,
			`spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[2].values: Required value: must be specified single value when ` + "`operator`" + ` is 'Lt' or 'Gt'`,
			`spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[3].values: Forbidden: may not be specified when ` + "`operator`" + ` is 'Exists' or 'DoesNotExist'`,
			`spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchFields[0].key: Invalid value: "metadata.uid": not a valid field selector key`,
			`spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: Invalid value: 0: must be in the range 1-100`,
			`spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey: Required value: can not be empty`,
			`spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey: Invalid value: "": name part must be non-empty`,
			`spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey: Invalid value: "": name part must consist of alphanumeric characters...`,
		}},
		{"node selector label", func(p *api.Pod) { p.Spec.NodeSelector = map[string]string{"disk": "fast ssd"} }, []string{
			`spec.nodeSelector: Invalid value: "fast ssd": a valid label must be an empty string or consist of alphanumeric characters...`}},
		{"misc spec fields", func(p *api.Pod) {
			p.Spec.TerminationGracePeriodSeconds = nil
			p.Spec.ActiveDeadlineSeconds = ptr(int64(0))
			p.Spec.Hostname = "Host"
			p.Spec.NodeName = "node_1"
			p.Spec.SchedulingGates = []api.PodSchedulingGate{{Name: "example.com/gate"}}
		}, []string{
			`spec.terminationGracePeriodSeconds: Required value`,
			`spec.activeDeadlineSeconds: Invalid value: 0: must be between 1 and 2147483647, inclusive`,
			`spec.hostname: Invalid value: "Host": a lowercase RFC 1123 label...`,
			`spec.nodeName: Invalid value: "node_1": a lowercase RFC 1123 subdomain...`,
			`spec.nodeName: Forbidden: cannot be set until all schedulingGates have been cleared`,
		}},
		{"hostNetwork ports", func(p *api.Pod) {
			p.Spec.HostNetwork = true
			p.Spec.Containers[0].Ports[0].HostPort = 8080
		}, []string{c0 + ".ports[0].hostPort: Invalid value: 8080: must match `containerPort` when `hostNetwork` is true"}},
		{"security context", func(p *api.Pod) {
			p.Spec.Containers[0].SecurityContext = &api.SecurityContext{RunAsUser: ptr(int64(-1)), Privileged: ptr(true), AllowPrivilegeEscalation: ptr(false)}
			p.Spec.SecurityContext.Sysctls = []api.Sysctl{{Name: "net.core.somaxconn"}, {Name: "net.core.somaxconn"}, {Name: "Bad!"}}
		}, []string{
			c0 + `.securityContext.runAsUser: Invalid value: -1: must be between 0 and 2147483647, inclusive`,
			c0 + ".securityContext: Invalid value: ...",
			`spec.securityContext.sysctls[1].name: Duplicate value: "net.core.somaxconn"`,
			`spec.securityContext.sysctls[2].name: Invalid value: "Bad!": must have at most 253 characters and match regex ...`,
		}},
		{"metadata", func(p *api.Pod) {
			p.Namespace = ""
			p.Labels = map[string]string{"bad key": "x"}
		}, []string{
			`metadata.namespace: Required value`,
			`metadata.labels: Invalid value: "bad key": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
		}},
		{"topology spread", func(p *api.Pod) {
			p.Spec.TopologySpreadConstraints = []api.TopologySpreadConstraint{
				{MaxSkew: 0, TopologyKey: "zone", WhenUnsatisfiable: api.DoNotSchedule},
				{MaxSkew: 1, TopologyKey: "zone", WhenUnsatisfiable: api.DoNotSchedule, MinDomains: ptr(int32(2))},
			}
		}, []string{
			`spec.topologySpreadConstraints[0].maxSkew: Invalid value: 0: must be greater than zero`,
			`spec.topologySpreadConstraints[0].{topologyKey, whenUnsatisfiable}: Duplicate value: "{zone, DoNotSchedule}"`,
		}},
	}
	for _, tc := range tests {
		p := validPod()
		tc.mutate(p)
		checkErrs(t, tc.name, Validate(p), tc.want)
	}
}

func TestValidatePodUpdate(t *testing.T) {
	t.Parallel()
	old := validPod()
	old.ResourceVersion, old.UID = "5", "uid-1"
	old.Spec.ActiveDeadlineSeconds = ptr(int64(100))
	old.Spec.Tolerations = []api.Toleration{{Key: "k", Operator: api.TolerationOpExists, Effect: api.TaintEffectNoExecute, TolerationSeconds: ptr(int64(60))}}
	tests := []struct {
		name   string
		mutate func(*api.Pod)
		want   []string
	}{
		{"unchanged", func(*api.Pod) {}, nil},
		{"image, deadline, toleration seconds and an added toleration", func(p *api.Pod) {
			p.Spec.Containers[0].Image = "nginx:1.26"
			p.Spec.ActiveDeadlineSeconds = ptr(int64(50))
			p.Spec.Tolerations[0].TolerationSeconds = ptr(int64(10))
			p.Spec.Tolerations = append(p.Spec.Tolerations, api.Toleration{Key: "x", Operator: api.TolerationOpExists})
			p.Labels["version"] = "2"
		}, nil},
		{"quantity re-spelled is not a change", func(p *api.Pod) {
			p.Spec.Containers[0].Resources.Limits[api.ResourceCPU] = q("1000m")
		}, nil},
		{"other spec field", func(p *api.Pod) { p.Spec.NodeName = "node-2" }, []string{
			"spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)\n- spec.nodeName: \"node-1\"\n+ spec.nodeName: \"node-2\"",
		}},
		{"container name", func(p *api.Pod) { p.Spec.Containers[0].Name = "web" }, []string{"spec: Forbidden: pod updates may not change fields other than ..."}},
		{"added container", func(p *api.Pod) {
			c := p.Spec.Containers[0]
			c.Name, c.Ports = "side", nil
			p.Spec.Containers = append(p.Spec.Containers, c)
		}, []string{"spec.containers: Forbidden: pod updates may not add or remove containers"}},
		{"longer deadline", func(p *api.Pod) { p.Spec.ActiveDeadlineSeconds = ptr(int64(200)) }, []string{
			"spec.activeDeadlineSeconds: Invalid value: 200: must be less than or equal to previous value"}},
		{"deadline removed", func(p *api.Pod) { p.Spec.ActiveDeadlineSeconds = nil }, []string{
			"spec.activeDeadlineSeconds: Invalid value: null: must not update from a positive integer to nil value"}},
		{"toleration modified", func(p *api.Pod) { p.Spec.Tolerations[0].Key = "other" }, []string{
			"spec.tolerations: Forbidden: existing toleration can not be modified except its tolerationSeconds"}},
		{"metadata immutables", func(p *api.Pod) {
			p.Name = "other"
			p.ResourceVersion = ""
			p.UID = "uid-2"
		}, []string{
			`metadata.name: Invalid value: "other": field is immutable`,
			`metadata.resourceVersion: Invalid value: "": must be specified for an update`,
			`metadata.uid: Invalid value: "uid-2": field is immutable`,
		}},
	}
	for _, tc := range tests {
		old.Spec.NodeName = "node-1"
		p := deepCopyPod(old)
		tc.mutate(p)
		checkErrs(t, tc.name, ValidateUpdate(p, old), tc.want)
	}
}

func deepCopyPod(p *api.Pod) *api.Pod { return api.DeepCopy(p) }

func TestValidatePodStatusUpdate(t *testing.T) {
	t.Parallel()
	old := validPod()
	old.ResourceVersion = "5"
	old.Spec.RestartPolicy = api.RestartPolicyNever
	old.Status = api.PodStatus{Phase: api.PodRunning, QOSClass: api.PodQOSBurstable,
		ContainerStatuses: []api.ContainerStatus{{Name: "nginx", State: api.ContainerState{Terminated: &api.ContainerStateTerminated{ExitCode: 0}}}}}
	tests := []struct {
		name   string
		mutate func(*api.Pod)
		want   []string
	}{
		{"ips and conditions", func(p *api.Pod) {
			p.Status.PodIP = "10.244.1.5"
			p.Status.PodIPs = []api.PodIP{{IP: "10.244.1.5"}}
			p.Status.HostIP = "10.0.0.1"
			p.Status.HostIPs = []api.HostIP{{IP: "10.0.0.1"}}
			p.Status.Conditions = []api.PodCondition{{Type: api.PodReady, Status: api.ConditionTrue}, {Type: "example.com/custom", Status: api.ConditionTrue}}
		}, nil},
		{"bad values", func(p *api.Pod) {
			p.Status.PodIPs = []api.PodIP{{IP: "10.0.0.1"}, {IP: "10.0.0.2"}}
			p.Status.HostIP = "10.0.0.1"
			p.Status.HostIPs = []api.HostIP{{IP: "10.0.0.9"}}
			p.Status.QOSClass = api.PodQOSGuaranteed
			p.Status.Conditions = []api.PodCondition{{Type: "bad type"}}
			p.Status.ContainerStatuses[0].State = api.ContainerState{Running: &api.ContainerStateRunning{}}
		}, []string{
			`status.podIPs: Invalid value: []string{"10.0.0.1", "10.0.0.2"}: may specify no more than one IP for each IP family`,
			"status.hostIPs[0].ip: Invalid value: \"10.0.0.9\": must be equal to `hostIP`",
			`status.qosClass: Invalid value: "Guaranteed": field is immutable`,
			`status.conditions[0].type: Invalid value: "bad type": name part must consist of ...`,
			`status.containerStatuses[0].state: Forbidden: may not be transitioned to non-terminated state`,
		}},
		{"node name via status", func(p *api.Pod) { p.Spec.NodeName = "n" }, []string{"status.nodeName: Forbidden: may not be changed directly"}},
	}
	for _, tc := range tests {
		p := api.DeepCopy(old)
		tc.mutate(p)
		checkErrs(t, tc.name, ValidateStatusUpdate(p, old), tc.want)
	}
}

func TestValidateBinding(t *testing.T) {
	t.Parallel()
	checkErrs(t, "valid", Validate(&api.Binding{Target: api.ObjectReference{Kind: "Node", Name: "n1"}}), nil)
	checkErrs(t, "invalid", Validate(&api.Binding{Target: api.ObjectReference{Kind: "Pod"}}), []string{
		`target.kind: Unsupported value: "Pod": supported values: "Node", "<empty>"`,
		`target.name: Required value`,
	})
}

func TestPodTemplateHostNetworkAllowsZeroHostPort(t *testing.T) {
	t.Parallel()
	d := validDeployment()
	d.Spec.Template.Spec.HostNetwork = true
	checkErrs(t, "template", Validate(d), nil)
	d.Spec.Template.Spec.Containers[0].Ports[0].HostPort = 81
	errs := Validate(d)
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "hostPort") {
		t.Errorf("template with mismatched host port: %v", errs)
	}
}

// TestMirrorPodAnnotationImmutable: as kube's
// ValidatePodSpecificAnnotationUpdates, a pod or pods/status write may not
// add, change or remove kubernetes.io/config.mirror (a user who can update
// pods would otherwise cut a pod's kubelet off from its secrets, or a node
// turn its mirror pod into a normal one).
func TestMirrorPodAnnotationImmutable(t *testing.T) {
	t.Parallel()
	const key = "metadata.annotations[kubernetes.io/config.mirror]: "
	pod := func(mirror string, other bool) *api.Pod {
		p := validPod()
		p.ResourceVersion, p.UID = "5", "uid-1"
		if p.Annotations == nil {
			p.Annotations = map[string]string{}
		}
		if mirror != "" {
			p.Annotations[api.MirrorPodAnnotationKey] = mirror
		}
		if other {
			p.Annotations["other"] = "x"
		}
		return p
	}
	for _, tc := range []struct {
		name     string
		old, new *api.Pod
		want     string
	}{
		{"add", pod("", false), pod("h1", false), "Forbidden: may not add mirror pod annotation"},
		{"remove", pod("h1", false), pod("", false), "Forbidden: may not remove or update mirror pod annotation"},
		{"change", pod("h1", false), pod("h2", false), "Forbidden: may not remove or update mirror pod annotation"},
		{"kept", pod("h1", false), pod("h1", true), ""},
	} {
		for name, got := range map[string]string{
			"update": ValidatePodUpdate(tc.new, tc.old).ToAggregate(),
			"status": ValidatePodStatusUpdate(tc.new, tc.old).ToAggregate(),
		} {
			if tc.want == "" && strings.Contains(got, "mirror") || tc.want != "" && !strings.Contains(got, key+tc.want) {
				t.Errorf("%s (%s): %q, want %q", tc.name, name, got, tc.want)
			}
		}
	}
}
