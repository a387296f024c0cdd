// Package quota measures what objects consume of a ResourceQuota, as
// Kubernetes' quota evaluators do; the apiserver's ResourceQuota admission
// plugin (charging a quota when an object is created or changes) and the
// controller-manager's resourcequota controller (recomputing status.used
// from what is stored) share it, so both count the same way.
//
// Every resource is counted as "count/RESOURCE[.GROUP]" (one per object in
// storage). Some have their own names too:
//
//   - pods: "pods" and the compute resources (cpu, memory,
//     ephemeral-storage, their requests.* and limits.* forms, hugepages-*,
//     requests.<extended resource>), summed over the pod the way the
//     scheduler sums it, and only while the pod is not terminal and not
//     past its deletion grace period;
//   - services: "services", "services.loadbalancers", "services.nodeports";
//   - persistentvolumeclaims: "persistentvolumeclaims", "requests.storage",
//     and the same per storage class
//     (CLASS.storageclass.storage.k8s.io/persistentvolumeclaims, ...);
//   - configmaps, secrets, replicationcontrollers, resourcequotas: their
//     legacy object-count names.
//
// Scopes (spec.scopes and spec.scopeSelector) apply to pods: Terminating,
// NotTerminating, BestEffort, NotBestEffort, PriorityClass (with In, NotIn,
// Exists and DoesNotExist) and CrossNamespacePodAffinity. A quota with a
// scope no evaluator knows matches nothing.
package quota
