// Package describers writes kubectl's "describe" report of one object in
// kubectl's layout, byte for byte. Pods, workloads (Deployment,
// ReplicaSet, StatefulSet, DaemonSet, Job, CronJob), Services, Endpoints
// and EndpointSlices, Nodes, ConfigMaps, Secrets, Namespaces (with their
// quotas and limit ranges), ResourceQuotas, LimitRanges, ServiceAccounts,
// PodDisruptionBudgets, HPAs and the RBAC kinds have kubectl's describers;
// every other kind (custom resources, CRDs, APIServices, webhook
// configurations...) goes through kubectl's generic field dump. Events
// come last, when the caller asks for them. Describe reads what a report
// needs (owned pods, ReplicaSets, events...) through the client;
// PodTemplate writes a pod template alone, as "rollout history
// --revision" shows it.
package describers
