// Package describe implements "kubectl-lite describe": a readable report of
// one object in kubectl's layout, byte for byte. Pods, workloads (Deployment,
// ReplicaSet, StatefulSet, DaemonSet, Job, CronJob), Services, Endpoints and
// EndpointSlices, Nodes, ConfigMaps, Secrets, Namespaces (with their quotas
// and limit ranges), ResourceQuotas, LimitRanges, ServiceAccounts,
// PodDisruptionBudgets, HPAs and the RBAC kinds have kubectl's describers;
// every other kind (custom resources, CRDs, APIServices, webhook
// configurations...) goes through kubectl's generic field dump. Events come
// last, when the describer shows them.
package describe
