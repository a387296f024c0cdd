package authz

import (
	"slices"

	"github.com/minik8s/minik8s/api"
)

// API groups the default policy names.
const (
	legacyGroup         = ""
	appsGroup           = "apps"
	authenticationGroup = "authentication.k8s.io"
	authorizationGroup  = "authorization.k8s.io"
	batchGroup          = "batch"
	certificatesGroup   = api.CertificatesGroupName
	coordinationGroup   = "coordination.k8s.io"
	discoveryGroup      = "discovery.k8s.io"
	eventsGroup         = "events.k8s.io"
	extensionsGroup     = "extensions"
	policyGroup         = "policy"
	storageGroup        = "storage.k8s.io"

	admissionRegistrationGroup   = "admissionregistration.k8s.io"
	autoscalingGroup             = "autoscaling"
	customMetricsGroup           = "custom.metrics.k8s.io"
	externalMetricsGroup         = "external.metrics.k8s.io"
	internalAPIServerGroup       = "internal.apiserver.k8s.io"
	networkingGroup              = "networking.k8s.io"
	rbacGroup                    = "rbac.authorization.k8s.io"
	resMetricsGroup              = "metrics.k8s.io"
	resourceGroup                = "resource.k8s.io"
	schedulingGroup              = "scheduling.k8s.io"
	storageVersionMigrationGroup = "storagemigration.k8s.io"
)

var (
	read       = []string{"get", "list", "watch"}
	readUpdate = []string{"get", "list", "watch", "update", "patch"}
	readWrite  = []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"}
)

// ruleBuilder writes PolicyRules the way Kubernetes' bootstrap policy does:
// rule("get").groups("").resources("pods").
type ruleBuilder struct{ r api.PolicyRule }

func rule(verbs ...string) ruleBuilder {
	return ruleBuilder{api.PolicyRule{Verbs: slices.Clone(verbs)}}
}

func (b ruleBuilder) groups(g ...string) ruleBuilder    { b.r.APIGroups = g; return b }
func (b ruleBuilder) resources(r ...string) ruleBuilder { b.r.Resources = r; return b }
func (b ruleBuilder) names(n ...string) ruleBuilder     { b.r.ResourceNames = n; return b }
func (b ruleBuilder) urls(u ...string) ruleBuilder      { b.r.NonResourceURLs = u; return b }

func rules(bs ...ruleBuilder) []api.PolicyRule {
	out := make([]api.PolicyRule, len(bs))
	for i, b := range bs {
		out[i] = b.r
	}
	return out
}

func eventsRule() ruleBuilder {
	return rule("create", "update", "patch").groups(legacyGroup, eventsGroup).resources("events")
}

// NodeRules are the rules of the system:node cluster role, Kubernetes'
// NodeRules for the kinds minik8s has (v1.37's default features). The Node
// authorizer applies them to what it does not subdivide itself (events,
// services, endpoints, endpoint slices, certificate signing requests, CSI
// drivers); the rules it narrows (secrets, pods, nodes, leases, ...) are
// listed in full, as in Kubernetes, for clusters that bind the role
// instead. One addition: reading endpoints and endpoint slices (Kubernetes
// grants only get on endpoints), for the service proxy the kubelet runs
// with its own credentials where Kubernetes runs kube-proxy.
func NodeRules() []api.PolicyRule {
	return rules(
		rule("create").groups(authenticationGroup).resources("tokenreviews"),
		rule("create").groups(authorizationGroup).resources("subjectaccessreviews", "localsubjectaccessreviews"),
		// Services for the environment of pods.
		rule(read...).groups(legacyGroup).resources("services"),
		// Register and report the Node; NodeRestriction keeps a node to its own.
		rule("create", "get", "list", "watch").groups(legacyGroup).resources("nodes"),
		rule("update", "patch").groups(legacyGroup).resources("nodes/status"),
		rule("update", "patch").groups(legacyGroup).resources("nodes"),
		rule("create", "update", "patch").groups(legacyGroup, eventsGroup).resources("events"),
		rule(read...).groups(legacyGroup).resources("pods"),
		// Mirror pods, and the status of the pods it runs.
		rule("create", "delete").groups(legacyGroup).resources("pods"),
		rule("update", "patch").groups(legacyGroup).resources("pods/status"),
		rule("create").groups(legacyGroup).resources("pods/eviction"),
		// What pods use; the Node authorizer narrows these to the node's pods.
		rule("get", "list", "watch").groups(legacyGroup).resources("secrets", "configmaps"),
		rule("get").groups(legacyGroup).resources("persistentvolumeclaims", "persistentvolumes"),
		// Endpoints and endpoint slices for a service proxy on the node.
		rule(read...).groups(legacyGroup).resources("endpoints"),
		rule(read...).groups(discoveryGroup).resources("endpointslices"),
		// Client certificate rotation.
		rule("create", "get", "list", "watch").groups(certificatesGroup).resources("certificatesigningrequests"),
		// Tokens of the service accounts of its pods (projected volumes);
		// the Node authorizer and NodeRestriction bind them to those pods.
		rule("get").groups(legacyGroup).resources("serviceaccounts"),
		rule("create").groups(legacyGroup).resources("serviceaccounts/token"),
		// The heartbeat Lease.
		rule("get", "create", "update", "patch", "delete").groups(coordinationGroup).resources("leases"),
		// CSI: attachments, claim status for volume expansion, drivers and
		// the node's CSINode.
		rule("get").groups(storageGroup).resources("volumeattachments"),
		rule("get", "update", "patch").groups(legacyGroup).resources("persistentvolumeclaims/status"),
		rule("get", "watch", "list").groups(storageGroup).resources("csidrivers"),
		rule("get", "create", "update", "patch", "delete").groups(storageGroup).resources("csinodes"),
		// Dynamic resource allocation.
		rule("get").groups(resourceGroup).resources("resourceclaims"),
		rule("deletecollection").groups(resourceGroup).resources("resourceslices"),
		// Trust anchors of clusterTrustBundle projected volumes
		// (ClusterTrustBundle, GA in v1.37).
		rule("get", "list", "watch").groups(certificatesGroup).resources("clustertrustbundles"),
		// Pod certificates (PodCertificateRequest, on by default in v1.37).
		rule("get", "list", "watch", "create").groups(certificatesGroup).resources("podcertificaterequests"),
	)
}

// NetworkPolicyAgentRole is the cluster role of the nodes' network policy
// enforcer (read pods, namespaces, network policies); not one of
// Kubernetes' bootstrap roles, see BootstrapPolicy.
const NetworkPolicyAgentRole = "minik8s:network-policy-agent"

// MonitoringGroup may read /metrics and the health checks: kube's
// system:monitoring role is bound to it.
const MonitoringGroup = "system:monitoring"

// BootstrapPolicy returns the default cluster roles and cluster role
// bindings, named and written as Kubernetes' bootstrap policy
// (plugin/pkg/auth/authorizer/rbac/bootstrappolicy) for the kinds minik8s
// serves. The apiserver creates the missing ones on start. Every object
// carries the label kubernetes.io/bootstrapping=rbac-defaults and the
// annotation rbac.authorization.kubernetes.io/autoupdate=true.
//
// Differences from Kubernetes, by design:
//   - The system:controller:* roles are bound to the controller-manager's
//     own user (Kubernetes binds them to kube-system service accounts and
//     runs each controller as its own).
//   - Node joining is built in, as kubeadm sets it up: system:bootstrappers
//     may file CSRs (system:node-bootstrapper) and have node client CSRs
//     auto-approved (...:nodeclient); system:nodes have their renewals
//     auto-approved (...:selfnodeclient).
//   - The system:node role exists but, as in Kubernetes since 1.8, its
//     binding has no subjects: the Node authorizer, first in the chain,
//     decides for kubelets.
//   - The aggregated admin, edit and view roles are left out: nothing
//     aggregates cluster roles here.
//   - One role of minik8s's own, minik8s:network-policy-agent, bound to
//     system:kube-proxy: the NetworkPolicy enforcer that runs beside the
//     service proxy reads every Pod, Namespace and NetworkPolicy, as a
//     network plugin's role lets its node agent do.
func BootstrapPolicy() (clusterRoles []*api.ClusterRole, bindings []*api.ClusterRoleBinding) {
	role := func(name string, rs ...ruleBuilder) *api.ClusterRole {
		return &api.ClusterRole{ObjectMeta: api.ObjectMeta{Name: name}, Rules: rules(rs...)}
	}
	clusterRoles = []*api.ClusterRole{
		role("cluster-admin",
			rule("*").groups("*").resources("*"),
			rule("*").urls("*")),
		role("system:discovery",
			rule("get").urls("/livez", "/readyz", "/healthz", "/version", "/version/",
				"/openapi", "/openapi/*", "/api", "/api/*", "/apis", "/apis/*")),
		role("system:basic-user",
			rule("create").groups(authorizationGroup).resources("selfsubjectaccessreviews", "selfsubjectrulesreviews"),
			rule("create").groups(authenticationGroup).resources("selfsubjectreviews")),
		role("system:public-info-viewer",
			rule("get").urls("/livez", "/readyz", "/healthz", "/version", "/version/")),
		role("system:monitoring",
			rule("get").urls("/flagz", "/healthz", "/healthz/*", "/livez", "/livez/*", "/metrics", "/metrics/slis", "/readyz", "/readyz/*", "/statusz"),
			rule("get").groups(legacyGroup).resources("nodes/metrics")),
		role("system:service-account-issuer-discovery",
			rule("get").urls("/.well-known/openid-configuration", "/.well-known/openid-configuration/",
				"/openid/v1/jwks", "/openid/v1/jwks/")),
		{ObjectMeta: api.ObjectMeta{Name: "system:node"}, Rules: NodeRules()},
		// Every service account may read trust anchors (kube's
		// system:cluster-trust-bundle-discovery).
		role("system:cluster-trust-bundle-discovery",
			rule(read...).groups(certificatesGroup).resources("clustertrustbundles")),
		role("system:node-bootstrapper",
			rule("create", "get", "list", "watch").groups(certificatesGroup).resources("certificatesigningrequests")),
		role("system:node-proxier",
			rule("list", "watch").groups(legacyGroup).resources("services", "endpoints"),
			rule("get", "list", "watch").groups(legacyGroup).resources("nodes"),
			eventsRule(),
			rule("list", "watch").groups(discoveryGroup).resources("endpointslices")),
		// The network policy enforcer on every node (kubelet/netpol),
		// which runs with kube-proxy's credentials beside the service
		// proxy. Kubernetes has no such role: policy is the network
		// plugin's, and each plugin ships its own (kube-router's
		// "kube-router", Calico's "calico-node") bound to its DaemonSet's
		// service account. This is minik8s's, bound to system:kube-proxy,
		// rather than widening system:node-proxier, which stays kube's.
		role(NetworkPolicyAgentRole,
			rule(read...).groups(legacyGroup).resources("pods", "namespaces"),
			rule(read...).groups(networkingGroup).resources("networkpolicies")),
		role("system:kube-scheduler",
			eventsRule(),
			// Leader election.
			rule("create").groups(coordinationGroup).resources("leases"),
			rule("get", "update", "list", "watch").groups(coordinationGroup).resources("leases").names("kube-scheduler"),
			rule(readWrite...).groups(coordinationGroup).resources("leasecandidates"),
			// Fundamental resources.
			rule(read...).groups(legacyGroup).resources("nodes"),
			rule("get", "list", "watch", "delete").groups(legacyGroup).resources("pods"),
			rule("create").groups(legacyGroup).resources("pods/binding", "bindings"),
			rule("patch", "update").groups(legacyGroup).resources("pods/status"),
			// What selects pods.
			rule(read...).groups(legacyGroup).resources("services", "replicationcontrollers"),
			rule(read...).groups(appsGroup, extensionsGroup).resources("replicasets"),
			rule(read...).groups(appsGroup).resources("statefulsets"),
			// What pods use or what applies to them.
			rule(read...).groups(policyGroup).resources("poddisruptionbudgets"),
			rule(read...).groups(legacyGroup).resources("persistentvolumeclaims", "persistentvolumes"),
			rule("create").groups(authenticationGroup).resources("tokenreviews"),
			rule("create").groups(authorizationGroup).resources("subjectaccessreviews"),
			rule(read...).groups(storageGroup).resources("csinodes", "csidrivers", "csistoragecapacities"),
			rule("get", "list", "watch").groups(storageGroup).resources("volumeattachments"),
			// Pod affinity's namespace selectors.
			rule(read...).groups(legacyGroup).resources("namespaces"),
			// Dynamic resource allocation (its gates are on by default).
			rule(read...).groups(resourceGroup).resources("deviceclasses", "resourceslices", "devicetaintrules"),
			rule(readUpdate...).groups(resourceGroup).resources("resourceclaims", "resourceclaims/status"),
			rule("create", "delete").groups(resourceGroup).resources("resourceclaims"),
			rule("update", "patch").groups(resourceGroup).resources("resourceclaims/binding"),
			rule("update").groups(legacyGroup).resources("pods/finalizers")),
		// Bound to the scheduler with system:kube-scheduler, as in Kubernetes.
		role("system:volume-scheduler",
			rule(readUpdate...).groups(legacyGroup).resources("persistentvolumes", "persistentvolumeclaims"),
			rule(read...).groups(storageGroup).resources("storageclasses")),
		role("system:kube-controller-manager",
			eventsRule(),
			// Leader election.
			rule("create").groups(coordinationGroup).resources("leases"),
			rule("get", "update").groups(coordinationGroup).resources("leases").names("kube-controller-manager"),
			// Fundamental resources; bootstrap tokens are secrets.
			rule("create").groups(legacyGroup).resources("secrets", "serviceaccounts"),
			rule("delete").groups(legacyGroup).resources("secrets"),
			rule("get").groups(legacyGroup).resources("namespaces", "secrets", "serviceaccounts", "configmaps"),
			rule("update").groups(legacyGroup).resources("secrets", "serviceaccounts"),
			rule("create").groups(authenticationGroup).resources("tokenreviews"),
			rule("create").groups(authorizationGroup).resources("subjectaccessreviews"),
			// Every shared informer.
			rule("list", "watch").groups("*").resources("*"),
			rule("create").groups(legacyGroup).resources("serviceaccounts/token")),
		role("system:certificates.k8s.io:certificatesigningrequests:nodeclient",
			rule("create").groups(certificatesGroup).resources("certificatesigningrequests/nodeclient")),
		role("system:certificates.k8s.io:certificatesigningrequests:selfnodeclient",
			rule("create").groups(certificatesGroup).resources("certificatesigningrequests/selfnodeclient")),
		role("system:certificates.k8s.io:kube-apiserver-client-approver",
			rule("approve").groups(certificatesGroup).resources("signers").names(api.KubeAPIServerClientSignerName)),
		role("system:certificates.k8s.io:kube-apiserver-client-kubelet-approver",
			rule("approve").groups(certificatesGroup).resources("signers").names(api.KubeAPIServerClientKubeletSignerName)),
		role("system:certificates.k8s.io:kubelet-serving-approver",
			rule("approve").groups(certificatesGroup).resources("signers").names(api.KubeletServingSignerName)),
	}
	users := func(names ...string) []api.Subject {
		var s []api.Subject
		for _, n := range names {
			s = append(s, api.Subject{Kind: api.UserKind, APIGroup: api.RBACGroupName, Name: n})
		}
		return s
	}
	groups := func(names ...string) []api.Subject {
		var s []api.Subject
		for _, n := range names {
			s = append(s, api.Subject{Kind: api.GroupKind, APIGroup: api.RBACGroupName, Name: n})
		}
		return s
	}
	bind := func(name, roleName string, subjects []api.Subject) *api.ClusterRoleBinding {
		return &api.ClusterRoleBinding{ObjectMeta: api.ObjectMeta{Name: name}, Subjects: subjects,
			RoleRef: api.RoleRef{APIGroup: api.RBACGroupName, Kind: "ClusterRole", Name: roleName}}
	}
	bindings = []*api.ClusterRoleBinding{
		bind("cluster-admin", "cluster-admin", groups(SystemPrivilegedGroup)),
		bind("system:discovery", "system:discovery", groups(AllAuthenticated)),
		bind("system:basic-user", "system:basic-user", groups(AllAuthenticated)),
		bind("system:public-info-viewer", "system:public-info-viewer", groups(AllAuthenticated, AllUnauthenticated)),
		bind("system:monitoring", "system:monitoring", groups(MonitoringGroup)),
		bind("system:service-account-issuer-discovery", "system:service-account-issuer-discovery", groups(ServiceAccountsGroup)),
		bind("system:cluster-trust-bundle-discovery", "system:cluster-trust-bundle-discovery", groups(ServiceAccountsGroup)),
		bind("system:node-proxier", "system:node-proxier", users(KubeProxy)),
		bind(NetworkPolicyAgentRole, NetworkPolicyAgentRole, users(KubeProxy)),
		bind("system:kube-controller-manager", "system:kube-controller-manager", users(KubeControllerManager)),
		bind("system:kube-scheduler", "system:kube-scheduler", users(KubeScheduler)),
		bind("system:volume-scheduler", "system:volume-scheduler", users(KubeScheduler)),
		// Deliberately without subjects; see above.
		bind("system:node", "system:node", nil),
		bind("system:node-bootstrapper", "system:node-bootstrapper", groups(BootstrappersGroup)),
		bind("system:certificates.k8s.io:certificatesigningrequests:nodeclient",
			"system:certificates.k8s.io:certificatesigningrequests:nodeclient", groups(BootstrappersGroup)),
		bind("system:certificates.k8s.io:certificatesigningrequests:selfnodeclient",
			"system:certificates.k8s.io:certificatesigningrequests:selfnodeclient", groups(NodesGroup)),
	}
	for _, r := range controllerRoles() {
		clusterRoles = append(clusterRoles, r)
		bindings = append(bindings, bind(r.Name, r.Name, users(KubeControllerManager)))
	}
	for _, r := range clusterRoles {
		addDefaultMetadata(&r.ObjectMeta)
	}
	for _, b := range bindings {
		addDefaultMetadata(&b.ObjectMeta)
	}
	return clusterRoles, bindings
}

func addDefaultMetadata(m *api.ObjectMeta) {
	if m.Labels == nil {
		m.Labels = map[string]string{}
	}
	m.Labels["kubernetes.io/bootstrapping"] = "rbac-defaults"
	if m.Annotations == nil {
		m.Annotations = map[string]string{}
	}
	m.Annotations[api.AutoUpdateAnnotationKey] = "true"
}

// ExtensionAuthenticationConfigMap is the kube-system ConfigMap in which
// kube-apiserver publishes how it authenticates clients (client-ca-file),
// which components serving HTTPS themselves read to authenticate theirs.
const ExtensionAuthenticationConfigMap = "extension-apiserver-authentication"

// BootstrapNamespacePolicy returns Kubernetes' namespaced bootstrap roles
// and bindings that components outside the apiserver need: in kube-system,
// extension-apiserver-authentication-reader, bound to the scheduler and
// the controller-manager (system::extension-apiserver-authentication-reader),
// so they can read ExtensionAuthenticationConfigMap.
func BootstrapNamespacePolicy() ([]*api.Role, []*api.RoleBinding) {
	meta := func(name string) api.ObjectMeta {
		m := api.ObjectMeta{Name: name, Namespace: api.NamespaceSystem}
		addDefaultMetadata(&m)
		return m
	}
	roles := []*api.Role{{
		ObjectMeta: meta("extension-apiserver-authentication-reader"),
		Rules: rules(rule("get", "list", "watch").groups(legacyGroup).resources("configmaps").
			names(ExtensionAuthenticationConfigMap)),
	}}
	bindings := []*api.RoleBinding{{
		ObjectMeta: meta("system::extension-apiserver-authentication-reader"),
		Subjects: []api.Subject{
			{Kind: api.UserKind, APIGroup: api.RBACGroupName, Name: KubeControllerManager},
			{Kind: api.UserKind, APIGroup: api.RBACGroupName, Name: KubeScheduler},
		},
		RoleRef: api.RoleRef{APIGroup: api.RBACGroupName, Kind: "Role", Name: "extension-apiserver-authentication-reader"},
	}}
	return roles, bindings
}
