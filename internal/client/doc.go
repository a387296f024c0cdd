// Package client is the REST client every minik8s component uses to talk to
// the apiserver. It speaks the Kubernetes HTTP contract: resource paths
// (/api/v1/namespaces/NS/pods/NAME, /apis/GROUP/VERSION/...), subresources,
// list options as query parameters, newline-delimited watch streams, and
// Status bodies for errors, which it turns into *apierrors.StatusError so
// callers can test them with apierrors.IsNotFound, IsConflict and friends.
//
// There are three levels:
//
//   - Resource[T] / ResourceFor[T] give a typed client for one Go kind
//     (api.Lease, api.Pod, ...): Get, List, Create, Update, UpdateStatus,
//     Patch, Delete, DeleteCollection, Watch and Subresource.
//   - Dynamic gives the same verbs on map[string]any for kinds known only at
//     run time (the CLI applying arbitrary manifests).
//   - Do and Stream send a raw Request, for discovery, /version, /healthz and
//     log streaming.
//
// Every request except the long read of a watch or stream passes a client-side
// token-bucket rate limiter (Config.QPS, Config.Burst). A 429 or 5xx carrying
// Retry-After is retried a bounded number of times after the delay the server
// asked for. A Client is safe for concurrent use and should be shared by all
// the controllers of one process.
package client
