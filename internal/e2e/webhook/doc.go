// Command webhook is the end-to-end suite's admission webhook server: run as
// a pod behind a Service, it serves admission.k8s.io/v1 AdmissionReviews
// over HTTPS with the certificate and key the suite generates (mounted
// from a Secret; the suite puts its CA in the webhook configurations'
// caBundle):
//
//   - /validate refuses a ConfigMap whose data has the key
//     e2e-webhook with the value disallow, as agnhost's webhook
//     refuses its unwanted key and value, and allows everything else;
//   - /mutate adds the label e2e.minik8s.io/mutated=true with a JSONPatch;
//   - /hang answers only after --hang (30 s), to show the apiserver giving
//     up after the webhook's timeoutSeconds;
//   - /healthz answers ok, for the readiness probe.
//
// It logs one line per review. The suite builds it statically
// (CGO_ENABLED=0) into the image minik8s/e2e-webhook (scripts/images.sh
// e2e-webhook) and loads it into the nodes.
package main
