// Command incluster is the end-to-end suite's in-cluster API client: run as
// a pod, it builds its configuration with client-go's rest.InClusterConfig
// (KUBERNETES_SERVICE_HOST/PORT and the ServiceAccount token, ca.crt and
// namespace the kubelet mounts at /var/run/secrets/kubernetes.io/serviceaccount)
// and makes the requests named on its command line, printing one JSON line
// per request with the server's answer: who it is (a SelfSubjectReview), and
// for each list or get whether it was allowed or the Status code and reason
// it got. It judges nothing: the test reads the lines from the pod's log.
// It exits 0 once every request got an answer from the server, 1 when it
// could not configure itself or reach the server.
//
// The suite builds it statically (CGO_ENABLED=0) into the image
// minik8s/e2e-incluster (scripts/images.sh e2e-incluster) and loads it into
// the nodes like the other workload images.
package main
