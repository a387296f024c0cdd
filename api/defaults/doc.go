// Package defaults fills the fields a client left unset with the values
// Kubernetes gives them (its SetDefaults_* functions): restartPolicy Always,
// imagePullPolicy from the image tag, probe timings, 25%/25% rolling
// updates, Job completions and backoff, Service ClusterIP and targetPort,
// and so on.
//
// Default runs on every decoded write, create and update alike, and is
// idempotent. DefaultCreate adds what Kubernetes' registry sets only when an
// object is created (the namespace "kubernetes" finalizer, a Job's generated
// selector); those must not be re-applied on update, because controllers
// remove them over the object's life. DefaultUpdate is Default for a full
// replacement (PUT): it first keeps what the server allocated and the client
// left out (a Service's cluster IPs and node ports).
//
// Like Kubernetes, pod-only defaults (requests from limits, enableServiceLinks,
// host ports under hostNetwork) apply to Pods and not to pod templates.
package defaults
