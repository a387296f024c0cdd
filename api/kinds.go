package api

// The table of kinds. Every served kind is one entry here: its
// group/version/kind, its plural and singular names, its scope, the short
// names and categories kubectl resolves, its subresources and how to make an
// empty object of it. The apiserver builds its stores, discovery documents,
// OpenAPI documents and routes from it; clients, informers and the CLI
// resolve names through it (LookupResource, LookupKind, FindResource).
//
// Adding a kind: declare its Go type (and its List alias) in the file of its
// group, append an entry to Resources, and write its defaults (api/defaults)
// and validation (api/validation). What the apiserver does differently for
// it (a strategy, a storage version) is one entry in
// apiserver/registry/kinds.go, and its kubectl columns one in
// apiserver/printers/printers.go; a kind without either gets the defaults.
//
// The order of Resources is significant: the first version listed of a
// resource is its preferred one (autoscaling/v2 before v1), a name that
// several resources answer to resolves to the first (core events before
// events.k8s.io's), and whoever walks every kind (the apiserver starting its
// stores, namespace deletion, garbage collection) walks them in this order.
// Append new kinds at the end.

// Resources is every stored kind the apiserver serves.
var Resources = []ResourceInfo{
	{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "MutatingWebhookConfiguration", Resource: "mutatingwebhookconfigurations", Singular: "mutatingwebhookconfiguration",
		Categories: []string{"api-extensions"}, New: newOf[MutatingWebhookConfiguration]},
	{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "ValidatingWebhookConfiguration", Resource: "validatingwebhookconfigurations", Singular: "validatingwebhookconfiguration",
		Categories: []string{"api-extensions"}, New: newOf[ValidatingWebhookConfiguration]},
	{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "ValidatingAdmissionPolicy", Resource: "validatingadmissionpolicies", Singular: "validatingadmissionpolicy",
		Subresources: []string{"status"}, Categories: []string{"api-extensions"}, New: newOf[ValidatingAdmissionPolicy]},
	{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "ValidatingAdmissionPolicyBinding", Resource: "validatingadmissionpolicybindings", Singular: "validatingadmissionpolicybinding",
		Categories: []string{"api-extensions"}, New: newOf[ValidatingAdmissionPolicyBinding]},
	{Group: APIExtensionsGroupName, Version: "v1", Kind: "CustomResourceDefinition", Resource: "customresourcedefinitions", Singular: "customresourcedefinition",
		ShortNames: []string{"crd", "crds"}, Subresources: []string{"status"}, Categories: []string{"api-extensions"},
		New: newOf[CustomResourceDefinition]},
	{Group: "apiregistration.k8s.io", Version: "v1", Kind: "APIService", Resource: "apiservices", Singular: "apiservice",
		Subresources: []string{"status"}, Categories: []string{"api-extensions"}, New: newOf[APIService]},
	{Group: "apps", Version: "v1", Kind: "Deployment", Resource: "deployments", Singular: "deployment", Namespaced: true,
		ShortNames: []string{"deploy"}, Subresources: []string{"status", "scale"}, Categories: []string{"all"},
		New: newOf[Deployment]},
	{Group: "apps", Version: "v1", Kind: "ReplicaSet", Resource: "replicasets", Singular: "replicaset", Namespaced: true,
		ShortNames: []string{"rs"}, Subresources: []string{"status", "scale"}, Categories: []string{"all"},
		New: newOf[ReplicaSet]},
	{Group: "batch", Version: "v1", Kind: "Job", Resource: "jobs", Singular: "job", Namespaced: true,
		Subresources: []string{"status"}, Categories: []string{"all"}, New: newOf[Job]},
	{Group: CertificatesGroupName, Version: "v1", Kind: "CertificateSigningRequest", Resource: "certificatesigningrequests", Singular: "certificatesigningrequest",
		ShortNames: []string{"csr"}, Subresources: []string{"status", "approval"},
		New: newOf[CertificateSigningRequest]},
	{Version: "v1", Kind: "ServiceAccount", Resource: "serviceaccounts", Singular: "serviceaccount", Namespaced: true,
		ShortNames: []string{"sa"}, Subresources: []string{"token"}, New: newOf[ServiceAccount]},
	{Version: "v1", Kind: "ResourceQuota", Resource: "resourcequotas", Singular: "resourcequota", Namespaced: true,
		ShortNames: []string{"quota"}, Subresources: []string{"status"}, New: newOf[ResourceQuota]},
	{Version: "v1", Kind: "PodTemplate", Resource: "podtemplates", Singular: "podtemplate", Namespaced: true,
		New: newOf[PodTemplate]},
	{Version: "v1", Kind: "LimitRange", Resource: "limitranges", Singular: "limitrange", Namespaced: true,
		ShortNames: []string{"limits"}, New: newOf[LimitRange]},
	{Group: "resource.k8s.io", Version: "v1", Kind: "DeviceClass", Resource: "deviceclasses", Singular: "deviceclass",
		New: newOf[DeviceClass]},
	{Group: "resource.k8s.io", Version: "v1", Kind: "ResourceClaim", Resource: "resourceclaims", Singular: "resourceclaim", Namespaced: true,
		Subresources: []string{"status"}, New: newOf[ResourceClaim]},
	{Group: "resource.k8s.io", Version: "v1", Kind: "ResourceClaimTemplate", Resource: "resourceclaimtemplates", Singular: "resourceclaimtemplate", Namespaced: true,
		New: newOf[ResourceClaimTemplate]},
	{Group: "resource.k8s.io", Version: "v1", Kind: "ResourceSlice", Resource: "resourceslices", Singular: "resourceslice",
		New: newOf[ResourceSlice]},
	{Group: "resource.k8s.io", Version: "v1", Kind: "DeviceTaintRule", Resource: "devicetaintrules", Singular: "devicetaintrule",
		Subresources: []string{"status"}, New: newOf[DeviceTaintRule]},
	{Group: "networking.k8s.io", Version: "v1", Kind: "ServiceCIDR", Resource: "servicecidrs", Singular: "servicecidr",
		Subresources: []string{"status"}, New: newOf[ServiceCIDR]},
	{Group: "networking.k8s.io", Version: "v1", Kind: "IPAddress", Resource: "ipaddresses", Singular: "ipaddress",
		ShortNames: []string{"ip"}, New: newOf[IPAddress]},
	{Group: CertificatesGroupName, Version: "v1", Kind: "PodCertificateRequest", Resource: "podcertificaterequests", Singular: "podcertificaterequest", Namespaced: true,
		Subresources: []string{"status"}, New: newOf[PodCertificateRequest]},
	{Group: "storagemigration.k8s.io", Version: "v1", Kind: "StorageVersionMigration", Resource: "storageversionmigrations", Singular: "storageversionmigration",
		Subresources: []string{"status"}, New: newOf[StorageVersionMigration]},
	// Namespaces are deleted one by one (no deletecollection), as in
	// Kubernetes.
	{Version: "v1", Kind: "Namespace", Resource: "namespaces", Singular: "namespace",
		Verbs: []string{"create", "delete", "get", "list", "patch", "update", "watch"}, ShortNames: []string{"ns"}, Subresources: []string{"status", "finalize"}, New: newOf[Namespace]},
	{Version: "v1", Kind: "ConfigMap", Resource: "configmaps", Singular: "configmap", Namespaced: true,
		ShortNames: []string{"cm"}, New: newOf[ConfigMap]},
	{Version: "v1", Kind: "Secret", Resource: "secrets", Singular: "secret", Namespaced: true,
		New: newOf[Secret]},
	{Version: "v1", Kind: "Event", Resource: "events", Singular: "event", Namespaced: true,
		ShortNames: []string{"ev"}, New: newOf[Event]},
	{Version: "v1", Kind: "Endpoints", Resource: "endpoints", Singular: "endpoints", Namespaced: true,
		ShortNames: []string{"ep"}, New: newOf[Endpoints]},
	{Group: "discovery.k8s.io", Version: "v1", Kind: "EndpointSlice", Resource: "endpointslices", Singular: "endpointslice", Namespaced: true,
		New: newOf[EndpointSlice]},
	{Group: "events.k8s.io", Version: "v1", Kind: "Event", Resource: "events", Singular: "event", Namespaced: true,
		ShortNames: []string{"ev"}, New: newOf[EventV1]},
	{Version: "v1", Kind: "Node", Resource: "nodes", Singular: "node",
		ShortNames: []string{"no"}, Subresources: []string{"status", "proxy"}, New: newOf[Node]},
	// log, exec, attach and portforward are the apiserver's proxy to the
	// pod's kubelet; proxy is its HTTP proxy to the pod itself.
	{Version: "v1", Kind: "Pod", Resource: "pods", Singular: "pod", Namespaced: true,
		ShortNames: []string{"po"}, Subresources: []string{"status", "binding", "eviction", "log", "exec", "attach", "portforward", "proxy", "ephemeralcontainers", "resize"}, Categories: []string{"all"},
		New: newOf[Pod]},
	{Group: RBACGroupName, Version: "v1", Kind: "Role", Resource: "roles", Singular: "role", Namespaced: true,
		New: newOf[Role]},
	{Group: RBACGroupName, Version: "v1", Kind: "ClusterRole", Resource: "clusterroles", Singular: "clusterrole",
		New: newOf[ClusterRole]},
	{Group: RBACGroupName, Version: "v1", Kind: "RoleBinding", Resource: "rolebindings", Singular: "rolebinding", Namespaced: true,
		New: newOf[RoleBinding]},
	{Group: RBACGroupName, Version: "v1", Kind: "ClusterRoleBinding", Resource: "clusterrolebindings", Singular: "clusterrolebinding",
		New: newOf[ClusterRoleBinding]},
	{Group: "coordination.k8s.io", Version: "v1", Kind: "Lease", Resource: "leases", Singular: "lease", Namespaced: true,
		New: newOf[Lease]},
	{Version: "v1", Kind: "Service", Resource: "services", Singular: "service", Namespaced: true,
		ShortNames: []string{"svc"}, Subresources: []string{"status", "proxy"}, Categories: []string{"all"},
		New: newOf[Service]},
	{Version: "v1", Kind: "PersistentVolume", Resource: "persistentvolumes", Singular: "persistentvolume",
		ShortNames: []string{"pv"}, Subresources: []string{"status"}, New: newOf[PersistentVolume]},
	{Version: "v1", Kind: "PersistentVolumeClaim", Resource: "persistentvolumeclaims", Singular: "persistentvolumeclaim", Namespaced: true,
		ShortNames: []string{"pvc"}, Subresources: []string{"status"}, New: newOf[PersistentVolumeClaim]},
	{Group: "storage.k8s.io", Version: "v1", Kind: "StorageClass", Resource: "storageclasses", Singular: "storageclass",
		ShortNames: []string{"sc"}, New: newOf[StorageClass]},
	{Group: "storage.k8s.io", Version: "v1", Kind: "CSINode", Resource: "csinodes", Singular: "csinode",
		Subresources: []string{"status"}, New: newOf[CSINode]},
	{Group: "storage.k8s.io", Version: "v1", Kind: "CSIDriver", Resource: "csidrivers", Singular: "csidriver",
		New: newOf[CSIDriver]},
	{Group: "storage.k8s.io", Version: "v1", Kind: "CSIStorageCapacity", Resource: "csistoragecapacities", Singular: "csistoragecapacity", Namespaced: true,
		New: newOf[CSIStorageCapacity]},
	{Group: "storage.k8s.io", Version: "v1", Kind: "VolumeAttachment", Resource: "volumeattachments", Singular: "volumeattachment",
		Subresources: []string{"status"}, New: newOf[VolumeAttachment]},
	{Group: "storage.k8s.io", Version: "v1", Kind: "VolumeAttributesClass", Resource: "volumeattributesclasses", Singular: "volumeattributesclass",
		ShortNames: []string{"vac"}, New: newOf[VolumeAttributesClass]},
	{Group: "apps", Version: "v1", Kind: "StatefulSet", Resource: "statefulsets", Singular: "statefulset", Namespaced: true,
		ShortNames: []string{"sts"}, Subresources: []string{"status", "scale"}, Categories: []string{"all"},
		New: newOf[StatefulSet]},
	{Group: "apps", Version: "v1", Kind: "DaemonSet", Resource: "daemonsets", Singular: "daemonset", Namespaced: true,
		ShortNames: []string{"ds"}, Subresources: []string{"status"}, Categories: []string{"all"},
		New: newOf[DaemonSet]},
	{Group: "apps", Version: "v1", Kind: "ControllerRevision", Resource: "controllerrevisions", Singular: "controllerrevision", Namespaced: true,
		New: newOf[ControllerRevision]},
	{Version: "v1", Kind: "ReplicationController", Resource: "replicationcontrollers", Singular: "replicationcontroller", Namespaced: true,
		ShortNames: []string{"rc"}, Subresources: []string{"status", "scale"}, Categories: []string{"all"},
		New: newOf[ReplicationController]},
	{Group: "batch", Version: "v1", Kind: "CronJob", Resource: "cronjobs", Singular: "cronjob", Namespaced: true,
		ShortNames: []string{"cj"}, Subresources: []string{"status"}, Categories: []string{"all"}, New: newOf[CronJob]},
	{Group: "policy", Version: "v1", Kind: "PodDisruptionBudget", Resource: "poddisruptionbudgets", Singular: "poddisruptionbudget", Namespaced: true,
		ShortNames: []string{"pdb"}, Subresources: []string{"status"}, New: newOf[PodDisruptionBudget]},
	{Group: "autoscaling", Version: "v2", Kind: "HorizontalPodAutoscaler", Resource: "horizontalpodautoscalers", Singular: "horizontalpodautoscaler", Namespaced: true,
		ShortNames: []string{"hpa"}, Subresources: []string{"status"}, Categories: []string{"all"},
		New: newOf[HorizontalPodAutoscaler]},
	// autoscaling/v1 after v2: v2 is the preferred version (and the storage
	// one), as in Kubernetes.
	{Group: "autoscaling", Version: "v1", Kind: "HorizontalPodAutoscaler", Resource: "horizontalpodautoscalers", Singular: "horizontalpodautoscaler", Namespaced: true,
		ShortNames: []string{"hpa"}, Subresources: []string{"status"}, Categories: []string{"all"},
		New: newOf[HorizontalPodAutoscalerV1]},
	// The kinds issue 25 added: Ingresses are routed by the ingress
	// controller add-on and NetworkPolicies enforced on every node
	// (issue 29); API priority and fairness is served without its
	// machinery.
	{Group: "networking.k8s.io", Version: "v1", Kind: "Ingress", Resource: "ingresses", Singular: "ingress", Namespaced: true,
		ShortNames: []string{"ing"}, Subresources: []string{"status"}, New: newOf[Ingress]},
	{Group: "networking.k8s.io", Version: "v1", Kind: "IngressClass", Resource: "ingressclasses", Singular: "ingressclass",
		New: newOf[IngressClass]},
	{Group: "networking.k8s.io", Version: "v1", Kind: "NetworkPolicy", Resource: "networkpolicies", Singular: "networkpolicy", Namespaced: true,
		ShortNames: []string{"netpol"}, New: newOf[NetworkPolicy]},
	{Group: "scheduling.k8s.io", Version: "v1", Kind: "PriorityClass", Resource: "priorityclasses", Singular: "priorityclass",
		ShortNames: []string{"pc"}, New: newOf[PriorityClass]},
	{Group: "node.k8s.io", Version: "v1", Kind: "RuntimeClass", Resource: "runtimeclasses", Singular: "runtimeclass",
		New: newOf[RuntimeClass]},
	{Group: "flowcontrol.apiserver.k8s.io", Version: "v1", Kind: "FlowSchema", Resource: "flowschemas", Singular: "flowschema",
		Subresources: []string{"status"}, New: newOf[FlowSchema]},
	{Group: "flowcontrol.apiserver.k8s.io", Version: "v1", Kind: "PriorityLevelConfiguration", Resource: "prioritylevelconfigurations", Singular: "prioritylevelconfiguration",
		Subresources: []string{"status"}, New: newOf[PriorityLevelConfiguration]},
	{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "MutatingAdmissionPolicy", Resource: "mutatingadmissionpolicies", Singular: "mutatingadmissionpolicy",
		Categories: []string{"api-extensions"}, New: newOf[MutatingAdmissionPolicy]},
	{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "MutatingAdmissionPolicyBinding", Resource: "mutatingadmissionpolicybindings", Singular: "mutatingadmissionpolicybinding",
		Categories: []string{"api-extensions"}, New: newOf[MutatingAdmissionPolicyBinding]},
	{Group: CertificatesGroupName, Version: "v1", Kind: "ClusterTrustBundle", Resource: "clustertrustbundles", Singular: "clustertrustbundle",
		New: newOf[ClusterTrustBundle]},
}

// ComputedResources are served but not stored: the apiserver answers them
// from what it finds elsewhere. ComponentStatuses are its probes of the
// scheduler, the controller-manager and etcd (get and list); bindings is
// the core collection a Binding is POSTed to, the same as a pod's binding
// subresource (create). Verbs says which verbs each serves.
var ComputedResources = []ResourceInfo{
	{Version: "v1", Kind: "ComponentStatus", Resource: "componentstatuses", Singular: "componentstatus",
		ShortNames: []string{"cs"}, Verbs: []string{"get", "list"}, New: newOf[ComponentStatus]},
	{Version: "v1", Kind: "Binding", Resource: "bindings", Singular: "binding", Namespaced: true,
		Verbs: []string{"create"}, New: newOf[Binding]},
}

// ReviewResources are the create-only kinds: served at their collection
// path for POST alone, answered rather than stored.
var ReviewResources = []ResourceInfo{
	{Group: AuthenticationGroupName, Version: "v1", Kind: "TokenReview", Resource: "tokenreviews",
		Singular: "tokenreview", New: newOf[TokenReview]},
	{Group: AuthenticationGroupName, Version: "v1", Kind: "SelfSubjectReview", Resource: "selfsubjectreviews",
		Singular: "selfsubjectreview", New: newOf[SelfSubjectReview]},
	{Group: AuthorizationGroupName, Version: "v1", Kind: "LocalSubjectAccessReview", Resource: "localsubjectaccessreviews",
		Singular: "localsubjectaccessreview", Namespaced: true, New: newOf[LocalSubjectAccessReview]},
	{Group: AuthorizationGroupName, Version: "v1", Kind: "SelfSubjectAccessReview", Resource: "selfsubjectaccessreviews",
		Singular: "selfsubjectaccessreview", New: newOf[SelfSubjectAccessReview]},
	{Group: AuthorizationGroupName, Version: "v1", Kind: "SelfSubjectRulesReview", Resource: "selfsubjectrulesreviews",
		Singular: "selfsubjectrulesreview", New: newOf[SelfSubjectRulesReview]},
	{Group: AuthorizationGroupName, Version: "v1", Kind: "SubjectAccessReview", Resource: "subjectaccessreviews",
		Singular: "subjectaccessreview", New: newOf[SubjectAccessReview]},
}
