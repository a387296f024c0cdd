package root_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/oracle"
)

// tableObjects are objects of every kind the server prints, in the states
// its table cells tell apart. These objects and statuses (with fixed
// instead of relative times) were given to kube-apiserver v1.37.2 and to
// minik8s, and kubectl v1.37.2 printed the same bytes from both for these
// commands but for ages, uids and the CSRs' requestor; kubectl-lite printed
// the same as kubectl. The tables-*.golden files keep that output.
const tableObjects = `apiVersion: v1
kind: Namespace
metadata: {name: oracle}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: app, namespace: oracle, labels: {app: web, tier: front}}
data: {a: "1", b: "2"}
binaryData: {c: eA==}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: empty, namespace: oracle}
---
apiVersion: v1
kind: Secret
metadata: {name: tls, namespace: oracle}
type: Opaque
data: {a: eA==, b: eQ==}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: oracle, labels: {app: web}}
spec: {clusterIP: 10.96.0.150, selector: {app: web, tier: front}, ports: [{port: 80, targetPort: 8080}]}
---
apiVersion: v1
kind: Service
metadata: {name: headless, namespace: oracle}
spec: {clusterIP: None, ports: [{port: 5432}]}
---
apiVersion: v1
kind: Service
metadata: {name: np, namespace: oracle}
spec: {type: NodePort, clusterIP: 10.96.0.151, externalIPs: [1.1.1.1], ports: [{port: 80, nodePort: 30080, name: http}, {port: 53, nodePort: 30053, protocol: UDP, name: dns}]}
---
apiVersion: v1
kind: Service
metadata: {name: lb, namespace: oracle}
spec: {type: LoadBalancer, clusterIP: 10.96.0.152, ports: [{port: 443, nodePort: 31443}]}
---
apiVersion: v1
kind: Service
metadata: {name: extname, namespace: oracle}
spec: {type: ExternalName, externalName: db.example.com}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: oracle, labels: {app: web}}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}, matchExpressions: [{key: tier, operator: In, values: [front, back]}]}
  template:
    metadata: {labels: {app: web, tier: front}}
    spec: {containers: [{name: app, image: busybox:1}, {name: side, image: nginx}]}
---
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: web-1, namespace: oracle}
spec:
  replicas: 2
  selector: {matchLabels: {app: web, pod-template-hash: "1"}}
  template:
    metadata: {labels: {app: web, pod-template-hash: "1"}}
    spec: {containers: [{name: app, image: busybox:1}]}
---
apiVersion: batch/v1
kind: Job
metadata: {name: batch, namespace: oracle}
spec:
  parallelism: 2
  completions: 4
  template:
    spec: {restartPolicy: Never, containers: [{name: w, image: busybox}]}
---
apiVersion: batch/v1
kind: Job
metadata: {name: susp, namespace: oracle}
spec:
  suspend: true
  template:
    spec: {restartPolicy: Never, containers: [{name: w, image: busybox}]}
---
apiVersion: coordination.k8s.io/v1
kind: Lease
metadata: {name: holder, namespace: oracle}
spec: {holderIdentity: n1, leaseDurationSeconds: 40}
---
apiVersion: coordination.k8s.io/v1
kind: Lease
metadata: {name: free, namespace: oracle}
---
apiVersion: v1
kind: Endpoints
metadata: {name: web, namespace: oracle}
subsets:
- addresses: [{ip: 10.0.0.1}, {ip: 10.0.0.2}]
  ports: [{port: 80, name: a}, {port: 443, name: b}]
---
apiVersion: v1
kind: Endpoints
metadata: {name: none, namespace: oracle}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: web-x, namespace: oracle, labels: {kubernetes.io/service-name: web}}
addressType: IPv4
ports: [{port: 80, name: a}, {name: dns, port: 53}, {port: 9, name: c}, {port: 10, name: d}]
endpoints: [{addresses: [10.0.0.1]}, {addresses: [10.0.0.2]}, {addresses: [10.0.0.3]}, {addresses: [10.0.0.4]}]
---
apiVersion: v1
kind: Event
metadata: {name: web.1, namespace: oracle}
involvedObject: {kind: Pod, name: web, namespace: oracle, fieldPath: "spec.containers{app}"}
reason: BackOff
message: Back-off restarting failed container
type: Warning
count: 4
source: {component: kubelet, host: n1}
firstTimestamp: FIRST
lastTimestamp: LAST
---
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {node-role.kubernetes.io/control-plane: "", kubernetes.io/role: edge}}
---
apiVersion: v1
kind: Node
metadata: {name: n2}
spec: {unschedulable: true}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: reader, namespace: oracle}
rules: [{apiGroups: [""], resources: [pods], verbs: [get]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: rb, namespace: oracle}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: view}
subjects:
- {kind: User, name: alice, apiGroup: rbac.authorization.k8s.io}
- {kind: Group, name: devs, apiGroup: rbac.authorization.k8s.io}
- {kind: ServiceAccount, name: sa, namespace: oracle}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: oracle-crb}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: oracle-cr}
subjects: [{kind: User, name: bob, apiGroup: rbac.authorization.k8s.io}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: oracle-cr}
rules: [{apiGroups: [""], resources: [nodes], verbs: [list]}]
`

// tablePods are pods whose statuses cover the STATUS column's cases.
var tablePods = []string{"running", "crash", "init", "term", "completed", "failed", "gated"}

func csrPEM(t *testing.T) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{
		Subject: pkix.Name{CommonName: "system:node:n1", Organization: []string{"system:nodes"}}}, key)
	if err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}))
}

// setTableStatuses gives the objects the statuses a kubelet and the
// controllers would have written, through the status subresources.
func setTableStatuses(t *testing.T, c *cluster) {
	t.Helper()
	ctx := context.Background()
	now := time.Now().UTC()
	ago := func(d time.Duration) string { return now.Add(-d).Format(time.RFC3339) }
	cs := func(name string, ready bool, restarts int, state, extra string) string {
		return fmt.Sprintf(`{"name":%q,"image":"busybox","imageID":"","ready":%v,"restartCount":%d,"started":%v,"state":%s%s}`, name, ready, restarts, ready, state, extra)
	}
	run := `{"running":{"startedAt":"` + ago(5*time.Hour) + `"}}`
	initDone := "[" + cs("i1", false, 0, `{"terminated":{"exitCode":0,"reason":"Completed","startedAt":"`+ago(5*time.Hour)+`","finishedAt":"`+ago(5*time.Hour)+`"}}`, "") + "]"
	done := func(code int, reason string) string {
		return fmt.Sprintf(`{"terminated":{"exitCode":%d,"reason":%q,"startedAt":%q,"finishedAt":%q}}`, code, reason, ago(5*time.Hour), ago(5*time.Hour))
	}
	lastFailed := `,"lastState":{"terminated":{"exitCode":1,"reason":"Error","startedAt":"` + ago(6*time.Hour) + `","finishedAt":"` + ago(5*time.Hour) + `"}}`
	patch := func(info api.ResourceInfo, ns, name, body string) {
		t.Helper()
		if _, err := c.client.Dynamic(info).Namespace(ns).Patch(ctx, name, client.MergePatchType, []byte(body), "status"); err != nil {
			t.Fatalf("status of %s %s: %v", info.Resource, name, err)
		}
	}
	res := func(name string) api.ResourceInfo {
		info, ok := api.FindResource(name)
		if !ok {
			t.Fatalf("no resource %s", name)
		}
		return info
	}
	pods := res("pods")
	patch(pods, "oracle", "running", `{"status":{"phase":"Running","podIP":"10.244.0.5","podIPs":[{"ip":"10.244.0.5"}],"conditions":[{"type":"Initialized","status":"True"},{"type":"Ready","status":"True"}],`+
		`"initContainerStatuses":`+initDone+`,"containerStatuses":[`+cs("a", true, 0, run, "")+`,`+cs("b", true, 0, run, "")+`]}}`)
	patch(pods, "oracle", "crash", `{"status":{"phase":"Running","conditions":[{"type":"Initialized","status":"True"}],"initContainerStatuses":`+initDone+
		`,"containerStatuses":[`+cs("a", true, 1, run, lastFailed)+`,`+cs("b", false, 5, `{"waiting":{"reason":"CrashLoopBackOff","message":"back-off"}}`, lastFailed)+`]}}`)
	patch(pods, "oracle", "init", `{"status":{"phase":"Pending","initContainerStatuses":[`+cs("i1", false, 2, `{"waiting":{"reason":"CrashLoopBackOff"}}`, "")+
		`],"containerStatuses":[`+cs("a", false, 0, `{"waiting":{"reason":"PodInitializing"}}`, "")+`,`+cs("b", false, 0, `{"waiting":{"reason":"PodInitializing"}}`, "")+`]}}`)
	patch(pods, "oracle", "completed", `{"status":{"phase":"Succeeded","initContainerStatuses":`+initDone+
		`,"containerStatuses":[`+cs("a", false, 0, done(0, "Completed"), "")+`,`+cs("b", false, 0, done(0, "Completed"), "")+`]}}`)
	patch(pods, "oracle", "failed", `{"status":{"phase":"Failed","initContainerStatuses":`+initDone+
		`,"containerStatuses":[`+cs("a", false, 0, done(0, "Completed"), "")+`,`+cs("b", false, 0, strings.Replace(done(2, ""), `"reason":"",`, "", 1), "")+`]}}`)
	patch(pods, "oracle", "gated", `{"status":{"phase":"Pending","conditions":[{"type":"PodScheduled","status":"False","reason":"SchedulingGated"}]}}`)
	patch(res("deployments.apps"), "oracle", "web", `{"status":{"replicas":3,"readyReplicas":2,"updatedReplicas":3,"availableReplicas":2}}`)
	patch(res("replicasets.apps"), "oracle", "web-1", `{"status":{"replicas":2,"readyReplicas":1}}`)
	patch(res("services"), "oracle", "lb", `{"status":{"loadBalancer":{"ingress":[{"ip":"203.0.113.7"},{"hostname":"lb.example.com"}]}}}`)
	patch(res("jobs.batch"), "oracle", "batch", `{"status":{"startTime":"`+ago(5*time.Hour)+`","active":2,"ready":1}}`)
	patch(res("nodes"), "", "n1", `{"status":{"conditions":[{"type":"Ready","status":"True","lastHeartbeatTime":"`+ago(time.Minute)+`","lastTransitionTime":"`+ago(time.Hour)+`","reason":"KubeletReady","message":"ok"}],`+
		`"addresses":[{"type":"InternalIP","address":"10.0.0.2"},{"type":"Hostname","address":"n1"}],"nodeInfo":{"machineID":"m","systemUUID":"s","bootID":"b","kernelVersion":"6.12.0",`+
		`"osImage":"Debian GNU/Linux 13 (trixie)","containerRuntimeVersion":"containerd://1.6.20","kubeletVersion":"v1.37.2","kubeProxyVersion":"","operatingSystem":"linux","architecture":"amd64"}}}`)
}

var (
	uuidRE = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	timeRE = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`)
	// ageRE is the age of an object created during the test (under 100
	// seconds) with the padding after it.
	ageRE = regexp.MustCompile(`\b\d{1,2}s( *)`)
)

// maskVolatile replaces what differs from run to run without moving a
// column: uids, creation times, and the ages of the test's objects (their
// column is as wide whatever the age, as "AGE" and kubectl's minimum width
// make it).
func maskVolatile(out string) string {
	out = uuidRE.ReplaceAllString(out, "<uid>")
	out = timeRE.ReplaceAllString(out, "YYYY-MM-DDTHH:MM:SSZ")
	return ageRE.ReplaceAllStringFunc(out, func(m string) string {
		if strings.TrimRight(m, " ") == m {
			return "<age>" // the last column
		}
		return "<age>" + strings.Repeat(" ", max(1, len(m)-len("<age>")))
	})
}

// TestIntegrationTablesGolden prints every served kind as kubectl get does,
// with its wide columns and decorations, and compares with the golden
// files (see tableObjects).
func TestIntegrationTablesGolden(t *testing.T) {
	// Built first: the objects' ages must stay under the masked 100 s.
	oracle.Path(t, "kubectl")
	c := startCluster(t)
	now := time.Now().UTC()
	objects := strings.NewReplacer("FIRST", now.Add(-5*time.Hour).Format(time.RFC3339), "LAST", now.Add(-90*time.Minute).Format(time.RFC3339)).Replace(tableObjects)
	for _, p := range tablePods {
		objects += fmt.Sprintf("---\napiVersion: v1\nkind: Pod\nmetadata: {name: %s, namespace: oracle, labels: {app: web, tier: front}}\n"+
			"spec:\n  nodeName: n1\n  initContainers: [{name: i1, image: busybox}]\n  containers: [{name: a, image: busybox}, {name: b, image: busybox}]\n", p)
	}
	for _, n := range []string{"csr-1", "csr-2"} {
		signer, exp := "example.com/x", ""
		if n == "csr-1" {
			signer, exp = "kubernetes.io/kube-apiserver-client", ", expirationSeconds: 86400"
		}
		objects += fmt.Sprintf("---\napiVersion: certificates.k8s.io/v1\nkind: CertificateSigningRequest\nmetadata: {name: %s}\n"+
			"spec: {request: %s, signerName: %s, usages: [client auth]%s}\n", n, csrPEM(t), signer, exp)
	}
	c.mustRun(objects, "create", "-f", "-")
	setTableStatuses(t, c)
	csrs, _ := api.FindResource("csr")
	if err := c.client.Dynamic(csrs).Subresource("csr-1", "approval").Patch(context.Background(), client.MergePatchType,
		[]byte(`{"status":{"conditions":[{"type":"Approved","status":"True","reason":"KubectlApprove","message":"approved"}]}}`), nil); err != nil {
		t.Fatal(err)
	}
	c.mustRun("", "delete", "pod", "term", "-n", "oracle", "--wait=false")

	for _, tc := range []struct {
		name string
		args string
	}{
		{"pods", "-n oracle get pods"},
		{"pods-wide", "-n oracle get pods -o wide"},
		{"pods-labels", "-n oracle get pods --show-labels -L tier"},
		{"pods-named", "-n oracle get pods running crash"},
		{"pods-sorted", "-n oracle get pods --sort-by=.metadata.name --no-headers"},
		{"pods-all-namespaces", "get pods -A -l app=web"},
		{"workloads-wide", "-n oracle get deploy,rs,jobs -o wide"},
		{"services-wide", "-n oracle get svc -o wide"},
		{"config", "-n oracle get cm,secret"},
		{"endpoints", "-n oracle get ep,endpointslices"},
		{"events-wide", "-n oracle get events -o wide"},
		{"leases", "-n oracle get leases"},
		{"rbac-wide", "-n oracle get roles,rolebindings -o wide"},
		{"cluster-rbac", "get clusterrolebinding/oracle-crb clusterrole/oracle-cr -o wide"},
		{"nodes-wide", "get nodes n1 n2 -o wide"},
		{"csr", "get csr"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := c.mustRun("", strings.Fields(tc.args)...)
			golden(t, "tables-"+tc.name, maskVolatile(out))
			if *update {
				return
			}
			// The real kubectl, from the same server, prints the same
			// bytes: the tables are the server's, as kube-apiserver's are.
			out, errOut, code := c.kubectl(strings.Fields(tc.args)...)
			if code != 0 {
				t.Fatalf("kubectl %s: exit %d\n%s", tc.args, code, errOut)
			}
			golden(t, "tables-"+tc.name, maskVolatile(out))
		})
	}
}
