// Package audit writes kube-apiserver style audit logs: one
// audit.k8s.io/v1 Event per request, at level Metadata and stage
// ResponseComplete, as a JSON line (who, verb, what object, response code),
// so that any request, a denial in particular, can be traced afterwards.
//
// Filter is the HTTP middleware that records the events; a Backend writes
// them (to a file, rotated by size, or any io.Writer). Filter may sit outside
// authentication, where it also sees 401s; Capture, placed inside
// authentication, then hands it the authenticated user and the request info.
// Writing an event never fails or delays a request beyond the write itself:
// errors are logged.
package audit
