// Package expose implements "expose TYPE NAME": a Service selecting what a
// deployment, replica set, service or pod selects (a pod: its labels),
// with its ports from --port or found on the resource, created or, with
// --dry-run=client, only printed.
package expose
