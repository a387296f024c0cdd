package app

import "github.com/minik8s/minik8s/internal/daemon"

// ConfigFile is the kubelet's --config: Kubernetes' KubeletConfiguration,
// the fields that have a flag here.
var ConfigFile = &daemon.ConfigFile{
	APIVersion: "kubelet.config.k8s.io/v1beta1",
	Kind:       "KubeletConfiguration",
	New:        func() daemon.Config { return &KubeletConfiguration{} },
}

// KubeletConfiguration is the part of kubelet.config.k8s.io/v1beta1 the
// kubelet supports; other fields (cgroupDriver, authorization, ...) are
// ignored with a warning. Durations are strings ("10s"), as in Kubernetes.
type KubeletConfiguration struct {
	Address                   *string                 `json:"address"`
	Port                      *int64                  `json:"port"`
	TLSCertFile               *string                 `json:"tlsCertFile"`
	TLSPrivateKeyFile         *string                 `json:"tlsPrivateKeyFile"`
	ServerTLSBootstrap        *bool                   `json:"serverTLSBootstrap"`
	Authentication            *KubeletAuthentication  `json:"authentication"`
	HealthzBindAddress        *string                 `json:"healthzBindAddress"`
	HealthzPort               *int64                  `json:"healthzPort"`
	KubeAPIQPS                *float64                `json:"kubeAPIQPS"`
	KubeAPIBurst              *int64                  `json:"kubeAPIBurst"`
	ContainerRuntimeEndpoint  *string                 `json:"containerRuntimeEndpoint"`
	ImageServiceEndpoint      *string                 `json:"imageServiceEndpoint"`
	CgroupRoot                *string                 `json:"cgroupRoot"`
	PodLogsDir                *string                 `json:"podLogsDir"`
	SyncFrequency             *string                 `json:"syncFrequency"`
	StaticPodPath             *string                 `json:"staticPodPath"`
	StaticPodURL              *string                 `json:"staticPodURL"`
	StaticPodURLHeader        map[string][]string     `json:"staticPodURLHeader"`
	FileCheckFrequency        *string                 `json:"fileCheckFrequency"`
	HTTPCheckFrequency        *string                 `json:"httpCheckFrequency"`
	CrashLoopBackOff          *CrashLoopBackOffConfig `json:"crashLoopBackOff"`
	ClusterDNS                []string                `json:"clusterDNS"`
	ClusterDomain             *string                 `json:"clusterDomain"`
	ResolvConf                *string                 `json:"resolvConf"`
	MaxPods                   *int64                  `json:"maxPods"`
	SystemReserved            map[string]string       `json:"systemReserved"`
	KubeReserved              map[string]string       `json:"kubeReserved"`
	EvictionHard              map[string]string       `json:"evictionHard"`
	RegisterWithTaints        []Taint                 `json:"registerWithTaints"`
	NodeStatusUpdateFrequency *string                 `json:"nodeStatusUpdateFrequency"`
	NodeStatusReportFrequency *string                 `json:"nodeStatusReportFrequency"`
	NodeLeaseDurationSeconds  *int64                  `json:"nodeLeaseDurationSeconds"`
	Logging                   *LoggingConfiguration   `json:"logging"`
}

// KubeletAuthentication is authentication: the x509 client CA and the
// bearer token webhook.
type KubeletAuthentication struct {
	X509 *struct {
		ClientCAFile *string `json:"clientCAFile"`
	} `json:"x509"`
	Webhook *struct {
		Enabled  *bool   `json:"enabled"`
		CacheTTL *string `json:"cacheTTL"`
	} `json:"webhook"`
}

// CrashLoopBackOffConfig is crashLoopBackOff: the longest restart delay.
type CrashLoopBackOffConfig struct {
	MaxContainerRestartPeriod *string `json:"maxContainerRestartPeriod"`
}

// Taint is an entry of registerWithTaints (core/v1 Taint).
type Taint struct {
	Key    string `json:"key"`
	Value  string `json:"value"`
	Effect string `json:"effect"`
}

// LoggingConfiguration is logging (component-base's logs/api/v1): the
// verbosity (--v) and the format (--logging-format).
type LoggingConfiguration struct {
	Format    *string `json:"format"`
	Verbosity *int64  `json:"verbosity"`
}

// FlagValues maps the fields to the kubelet's flags.
func (c *KubeletConfiguration) FlagValues() (daemon.FlagValues, error) {
	var v daemon.FlagValues
	v.String("address", "address", c.Address)
	v.Int("port", "port", c.Port)
	v.String("tlsCertFile", "tls-cert-file", c.TLSCertFile)
	v.String("tlsPrivateKeyFile", "tls-private-key-file", c.TLSPrivateKeyFile)
	v.Bool("serverTLSBootstrap", "rotate-server-certificates", c.ServerTLSBootstrap)
	if a := c.Authentication; a != nil && a.X509 != nil {
		v.String("authentication.x509.clientCAFile", "client-ca-file", a.X509.ClientCAFile)
	}
	if a := c.Authentication; a != nil && a.Webhook != nil {
		v.Bool("authentication.webhook.enabled", "authentication-token-webhook", a.Webhook.Enabled)
		v.String("authentication.webhook.cacheTTL", "authentication-token-webhook-cache-ttl", a.Webhook.CacheTTL)
	}
	v.String("healthzBindAddress", "healthz-bind-address", c.HealthzBindAddress)
	v.Int("healthzPort", "healthz-port", c.HealthzPort)
	v.Float("kubeAPIQPS", "kube-api-qps", c.KubeAPIQPS)
	v.Int("kubeAPIBurst", "kube-api-burst", c.KubeAPIBurst)
	v.String("containerRuntimeEndpoint", "container-runtime-endpoint", c.ContainerRuntimeEndpoint)
	v.String("imageServiceEndpoint", "image-service-endpoint", c.ImageServiceEndpoint)
	v.String("cgroupRoot", "cgroup-root", c.CgroupRoot)
	v.String("podLogsDir", "pod-logs-dir", c.PodLogsDir)
	v.String("syncFrequency", "sync-frequency", c.SyncFrequency)
	v.String("staticPodPath", "pod-manifest-path", c.StaticPodPath)
	v.String("staticPodURL", "manifest-url", c.StaticPodURL)
	if c.StaticPodURLHeader != nil {
		h := headerFlag{&c.StaticPodURLHeader}
		v.List("staticPodURLHeader", "manifest-url-header", []string{h.String()})
	}
	v.String("fileCheckFrequency", "file-check-frequency", c.FileCheckFrequency)
	v.String("httpCheckFrequency", "http-check-frequency", c.HTTPCheckFrequency)
	if c.CrashLoopBackOff != nil {
		v.String("crashLoopBackOff.maxContainerRestartPeriod", "restart-backoff-max", c.CrashLoopBackOff.MaxContainerRestartPeriod)
	}
	v.List("clusterDNS", "cluster-dns", c.ClusterDNS)
	v.String("clusterDomain", "cluster-domain", c.ClusterDomain)
	v.String("resolvConf", "resolv-conf", c.ResolvConf)
	v.Int("maxPods", "max-pods", c.MaxPods)
	v.Map("systemReserved", "system-reserved", "=", c.SystemReserved)
	v.Map("kubeReserved", "kube-reserved", "=", c.KubeReserved)
	v.Map("evictionHard", "eviction-hard", "<", c.EvictionHard)
	if c.RegisterWithTaints != nil {
		taints := []string{}
		for _, t := range c.RegisterWithTaints {
			kv := t.Key
			if t.Value != "" {
				kv += "=" + t.Value
			}
			taints = append(taints, kv+":"+t.Effect)
		}
		v.List("registerWithTaints", "register-with-taints", taints)
	}
	v.String("nodeStatusUpdateFrequency", "node-status-update-frequency", c.NodeStatusUpdateFrequency)
	v.String("nodeStatusReportFrequency", "node-status-report-frequency", c.NodeStatusReportFrequency)
	v.Int("nodeLeaseDurationSeconds", "node-lease-duration-seconds", c.NodeLeaseDurationSeconds)
	if l := c.Logging; l != nil {
		v.String("logging.format", "logging-format", l.Format)
		v.Int("logging.verbosity", "v", l.Verbosity)
	}
	return v, nil
}
