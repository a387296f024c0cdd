// Package webhook is the apiserver's dynamic admission: the
// MutatingAdmissionWebhook and ValidatingAdmissionWebhook plugins, which
// send each matching write as an admission.k8s.io/v1 AdmissionReview to the
// webhooks of the Mutating- and ValidatingWebhookConfigurations, as
// kube-apiserver does (k8s.io/apiserver/pkg/admission/plugin/webhook).
//
// A webhook is called when a rule matches the request's operation, group,
// version, resource and subresource and scope (or, with matchPolicy
// Equivalent, an equivalent resource's), and its namespaceSelector and
// objectSelector and CEL matchConditions match. Mutating webhooks run one after the other, their
// JSON patches applied to the object in turn, and those with
// reinvocationPolicy IfNeeded run once more when a later webhook changed
// the object; validating webhooks run in parallel. Each call has the
// webhook's timeout as a deadline; a call that fails (unreachable, timed
// out, an answer that is not a valid AdmissionReview) refuses the request
// with failurePolicy Fail and is ignored with Ignore, with kube's messages.
// Webhooks reach a URL or a Service (through a ServiceResolver), their
// serving certificate checked against the caBundle. Configurations are read
// from the watch cache (Source) on each request, never from etcd.
package webhook
