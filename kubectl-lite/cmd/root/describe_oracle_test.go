package root_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/oracle"
	"github.com/minik8s/minik8s/kubectl-lite/internal/crdtest"
)

// describeObjects exercise the branches of kubectl's describers: set and
// unset optional fields, several items, long lists that kubectl caps.
const describeObjects = `apiVersion: v1
kind: Namespace
metadata: {name: dsc, labels: {team: a}}
---
apiVersion: v1
kind: Namespace
metadata: {name: dsc-empty}
---
apiVersion: batch/v1
kind: Job
metadata: {name: batch, namespace: dsc, labels: {app: batch}, annotations: {note: first}}
spec:
  parallelism: 2
  completions: 5
  backoffLimit: 3
  activeDeadlineSeconds: 600
  ttlSecondsAfterFinished: 100
  template:
    metadata: {labels: {app: batch}}
    spec:
      restartPolicy: Never
      containers: [{name: work, image: busybox, command: [sh, -c, "echo hi"], env: [{name: MODE, value: fast}]}]
---
apiVersion: batch/v1
kind: Job
metadata: {name: indexed, namespace: dsc}
spec:
  completionMode: Indexed
  completions: 40
  parallelism: 4
  suspend: false
  template:
    spec:
      restartPolicy: OnFailure
      containers: [{name: work, image: busybox}]
---
apiVersion: batch/v1
kind: Job
metadata: {name: plain, namespace: dsc}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: work, image: busybox}]
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly, namespace: dsc, labels: {app: nightly}}
spec:
  schedule: "0 3 * * *"
  timeZone: Europe/Paris
  concurrencyPolicy: Forbid
  suspend: true
  startingDeadlineSeconds: 120
  successfulJobsHistoryLimit: 5
  failedJobsHistoryLimit: 2
  jobTemplate:
    spec:
      parallelism: 2
      completions: 3
      activeDeadlineSeconds: 60
      selector: {matchLabels: {app: nightly}}
      manualSelector: true
      template:
        metadata: {labels: {app: nightly}}
        spec:
          restartPolicy: OnFailure
          containers: [{name: work, image: busybox, args: [run]}]
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: hourly, namespace: dsc}
spec:
  schedule: "@hourly"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          containers: [{name: work, image: busybox}]
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: min, namespace: dsc, labels: {app: web}}
spec:
  minAvailable: 2
  selector:
    matchLabels: {app: web}
    matchExpressions: [{key: tier, operator: In, values: [front, back]}, {key: canary, operator: DoesNotExist}]
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: max, namespace: dsc}
spec:
  maxUnavailable: 30%
  selector: {matchLabels: {app: db}}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: none, namespace: dsc}
spec:
  maxUnavailable: 1
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: builder, namespace: dsc, annotations: {owner: ci}}
secrets: [{name: builder-token}, {name: builder-extra}]
imagePullSecrets: [{name: registry-a}, {name: registry-b}]
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: bare, namespace: dsc}
---
apiVersion: v1
kind: Secret
metadata: {name: builder-token, namespace: dsc, annotations: {kubernetes.io/service-account.name: builder}}
type: kubernetes.io/service-account-token
data: {token: dG9rZW4=, ca.crt: Y2E=}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: dsc, labels: {app: web}}
data: {mode: fast, script: "echo one\necho two\n"}
binaryData: {blob: AAECAw==}
---
apiVersion: v1
kind: Pod
metadata: {name: batch-abcde, namespace: dsc, labels: {app: batch}}
spec:
  restartPolicy: Never
  containers: [{name: work, image: busybox}]
---
apiVersion: v1
kind: Pod
metadata: {name: volumes-all, namespace: dsc}
spec:
  restartPolicy: Never
  automountServiceAccountToken: false
  containers:
  - name: work
    image: busybox
    volumeMounts: [{name: host, mountPath: /host, readOnly: true}, {name: scratch, mountPath: /scratch, subPath: a}]
  volumes:
  - {name: host, hostPath: {path: /var/log}}
  - {name: host-typed, hostPath: {path: /run/x.sock, type: Socket}}
  - {name: scratch, emptyDir: {medium: Memory, sizeLimit: 64Mi}}
  - {name: scratch-plain, emptyDir: {}}
  - {name: creds, secret: {secretName: builder-token, optional: true}}
  - {name: settings, configMap: {name: settings}}
  - {name: share, nfs: {server: nfs.example, path: /exports, readOnly: true}}
  - {name: data, persistentVolumeClaim: {claimName: data, readOnly: true}}
  - name: tmp
    ephemeral:
      volumeClaimTemplate:
        metadata: {labels: {tier: cache}, annotations: {note: scratch}}
        spec: {accessModes: [ReadWriteOnce], storageClassName: fast, resources: {requests: {storage: 1Gi}}}
  - name: info
    downwardAPI:
      items:
      - {path: labels, fieldRef: {fieldPath: metadata.labels}}
      - {path: cpu, resourceFieldRef: {containerName: work, resource: limits.cpu}}
  - name: kube-api-access
    projected:
      sources:
      - serviceAccountToken: {expirationSeconds: 3607, path: token}
      - configMap: {name: kube-root-ca.crt, items: [{key: ca.crt, path: ca.crt}]}
      - downwardAPI: {items: [{path: namespace, fieldRef: {apiVersion: v1, fieldPath: metadata.namespace}}]}
      - secret: {name: extra, optional: false}
  - name: inline-csi
    csi: {driver: hostpath.csi.k8s.io, readOnly: true, volumeAttributes: {size: 1Gi, zone: a}}
  - name: inline-csi-bare
    csi: {driver: hostpath.csi.k8s.io}
  - name: tools
    image: {reference: "registry.example/tools:1.0", pullPolicy: IfNotPresent}
  - name: repo
    gitRepo: {repository: "https://git.example/repo.git", revision: main}
  - name: lun
    fc: {targetWWNs: ["500a0982991b8dc5", "500a0982891b8dc5"], lun: 2, fsType: ext4}
  - name: block
    iscsi: {targetPortal: "10.0.2.15:3260", iqn: "iqn.2001-04.com.example:storage.kube.sys1.xyz", lun: 0, fsType: ext4}
---
apiVersion: v1
kind: ResourceQuota
metadata: {name: compute, namespace: dsc}
spec:
  hard: {pods: "10", requests.cpu: "4", requests.memory: 8Gi, limits.memory: 16Gi, count/jobs.batch: "5"}
---
apiVersion: v1
kind: ResourceQuota
metadata: {name: scoped, namespace: dsc}
spec:
  hard: {pods: "3"}
  scopes: [NotBestEffort, Terminating]
---
apiVersion: v1
kind: LimitRange
metadata: {name: limits, namespace: dsc}
spec:
  limits:
  - type: Container
    max: {cpu: "2"}
  - type: Container
    min: {memory: 64Mi}
    default: {memory: 256Mi}
    defaultRequest: {memory: 128Mi}
    maxLimitRequestRatio: {memory: "4"}
  - type: Pod
    max: {cpu: "4"}
  - type: PersistentVolumeClaim
    min: {storage: 1Gi}
---
apiVersion: v1
kind: LimitRange
metadata: {name: many, namespace: dsc}
spec:
  limits:
  - type: Container
    max: {cpu: "2", memory: 1Gi}
    min: {cpu: 100m, memory: 4Mi}
---
apiVersion: v1
kind: Endpoints
metadata: {name: web, namespace: dsc, labels: {app: web}}
subsets:
- addresses: [{ip: 10.244.0.5}, {ip: 10.244.0.6}]
  notReadyAddresses: [{ip: 10.244.0.7}]
  ports: [{name: http, port: 8080, protocol: TCP}, {name: dns, port: 53, protocol: UDP}]
- addresses: [{ip: 10.244.1.9}]
  ports: [{port: 53, protocol: UDP}]
- notReadyAddresses: [{ip: 10.244.2.1}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: web-abc, namespace: dsc, labels: {kubernetes.io/service-name: web}}
addressType: IPv4
ports: [{name: http, port: 8080, protocol: TCP}, {protocol: UDP}]
endpoints:
- addresses: [10.244.0.5, 10.244.0.6]
  conditions: {ready: true}
  hostname: web-0
  nodeName: n1
  zone: zone-a
  targetRef: {kind: Pod, name: web-0, namespace: dsc}
- addresses: [10.244.0.7]
  conditions: {ready: false}
- addresses: [10.244.0.8]
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: dsc}
spec:
  selector: {app: web}
  ports: [{name: http, port: 80, targetPort: 8080}, {name: dns, port: 53, protocol: UDP}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: web-def, namespace: dsc, labels: {kubernetes.io/service-name: web}}
addressType: IPv4
ports: [{name: http, port: 8081, protocol: TCP}]
endpoints:
- addresses: [10.244.3.1]
- addresses: [10.244.3.2]
  conditions: {ready: false}
- addresses: [10.244.3.3]
---
apiVersion: v1
kind: Service
metadata: {name: headless, namespace: dsc}
spec:
  clusterIP: None
  selector: {app: db}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: headless-1, namespace: dsc, labels: {kubernetes.io/service-name: headless}}
addressType: IPv4
endpoints:
- addresses: [10.244.4.1]
- addresses: [10.244.4.2]
---
apiVersion: v1
kind: Service
metadata: {name: lonely, namespace: dsc}
spec:
  ports: [{port: 80}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: empty, namespace: dsc}
addressType: FQDN
endpoints: []
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: reader, namespace: dsc, labels: {app: web}}
rules:
- apiGroups: [""]
  resources: [pods, pods/log]
  verbs: [get, list, watch]
- apiGroups: [apps, ""]
  resources: [deployments]
  verbs: [get]
- apiGroups: [""]
  resources: [configmaps]
  resourceNames: [settings, other]
  verbs: [get, update]
- apiGroups: [""]
  resources: [pods]
  verbs: [delete, get]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: dsc-viewer}
rules:
- nonResourceURLs: [/healthz, /metrics]
  verbs: [get]
- apiGroups: [batch]
  resources: [jobs, cronjobs/status]
  verbs: ['*']
- apiGroups: ['*']
  resources: ['*']
  verbs: [list]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: read-pods, namespace: dsc, annotations: {why: audit}}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: reader}
subjects:
- {kind: User, name: jane, apiGroup: rbac.authorization.k8s.io}
- {kind: ServiceAccount, name: builder, namespace: dsc}
- {kind: Group, name: devs, apiGroup: rbac.authorization.k8s.io}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: dsc-viewers}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: dsc-viewer}
subjects:
- {kind: ServiceAccount, name: bare, namespace: dsc}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: dsc-check}
webhooks:
- name: check.example.com
  clientConfig: {url: "https://127.0.0.1:1/check"}
  rules: [{apiGroups: [example.com], apiVersions: [v1], operations: [CREATE], resources: [gadgets]}]
  failurePolicy: Ignore
  sideEffects: None
  admissionReviewVersions: [v1]
  timeoutSeconds: 3
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {name: dsc-mutate}
webhooks:
- name: mutate.example.com
  clientConfig: {url: "https://127.0.0.1:1/mutate"}
  rules: [{apiGroups: [example.com], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [gadgets]}]
  failurePolicy: Ignore
  sideEffects: None
  admissionReviewVersions: [v1]
  reinvocationPolicy: IfNeeded
`

// describeWidgetCRD is the kind of widget, whose CRD is described too.
const describeWidgetCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, shortNames: [wd]}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            x-kubernetes-preserve-unknown-fields: true
`

// widget is created once its CRD serves.
const widget = `apiVersion: example.com/v1
kind: Widget
metadata: {name: w1, namespace: dsc, labels: {app: web}}
spec:
  size: 3
  ratio: 0.25
  big: 12345678901234
  enabled: true
  nothing: null
  color: blue
  podCIDRs: [10.0.0.0/24]
  apiURL: https://example.com
  maxUID: 7
  my_field: x
  x-y-z: 1
  nested: {deeper: {value: deep}, list: [{name: a, port: 1}, plain, 2]}
  emptyMap: {}
  emptyList: []
`

// TestIntegrationDescribeOracle describes each kind with kubectl's
// specific describer (and some with its generic one) through kubectl-lite
// and the real kubectl against the same objects and events: the outputs
// must be identical byte for byte.
func TestIntegrationDescribeOracle(t *testing.T) {
	oracle.Path(t, "kubectl")
	c := startCluster(t)
	ctx := context.Background()
	c.mustRun(describeObjects, "create", "-f", "-")
	// (kubectl-lite create -f maps kinds from its built-in table only: the
	// custom object is created through the dynamic client.)
	widgets := crdtest.Create(t, c.client, describeWidgetCRD)[0]
	var w client.Unstructured
	if err := yaml.Unmarshal([]byte(widget), &w.Object); err != nil {
		t.Fatal(err)
	}
	if _, err := c.client.Dynamic(widgets).Namespace("dsc").Create(ctx, &w); err != nil {
		t.Fatalf("create widget: %v", err)
	}

	now := time.Now().UTC()
	ago := func(d time.Duration) string { return now.Add(-d).Format(time.RFC3339) }
	patch := func(resource, ns, name, body string) {
		t.Helper()
		info, ok := api.FindResource(resource)
		if !ok {
			t.Fatalf("no resource %s", resource)
		}
		if _, err := c.client.Dynamic(info).Namespace(ns).Patch(ctx, name, client.MergePatchType, []byte(body), "status"); err != nil {
			t.Fatalf("status of %s %s: %v", resource, name, err)
		}
	}
	patch("jobs.batch", "dsc", "batch", `{"status":{"startTime":"`+ago(5*time.Hour)+`","completionTime":"`+ago(3*time.Hour+7*time.Minute)+
		`","active":1,"ready":1,"succeeded":3,"failed":2,"conditions":[{"type":"SuccessCriteriaMet","status":"True"},{"type":"Complete","status":"True"}]}}`)
	patch("jobs.batch", "dsc", "indexed", `{"status":{"startTime":"`+ago(time.Hour)+`","active":4,"succeeded":21,`+
		`"completedIndexes":"0-3,5,7,9,11,13,15,17,19,21,23,25,27,29,31,33,35,37,39"}}`)
	patch("cronjobs.batch", "dsc", "nightly", `{"status":{"lastScheduleTime":"`+ago(2*time.Hour)+`","lastSuccessfulTime":"`+ago(3*time.Hour)+
		`","active":[{"kind":"Job","namespace":"dsc","name":"nightly-1"},{"kind":"Job","namespace":"dsc","name":"nightly-2"}]}}`)
	patch("poddisruptionbudgets.policy", "dsc", "min", `{"status":{"disruptionsAllowed":1,"currentHealthy":3,"desiredHealthy":2,"expectedPods":4}}`)
	patch("resourcequotas", "dsc", "compute", `{"status":{"hard":{"pods":"10","requests.cpu":"4","requests.memory":"8Gi","limits.memory":"16Gi","count/jobs.batch":"5"},`+
		`"used":{"pods":"3","requests.cpu":"1500m","requests.memory":"1073741824","count/jobs.batch":"2"}}}`)
	patch("resourcequotas", "dsc", "scoped", `{"status":{"hard":{"pods":"3"},"used":{"pods":"0"}}}`)

	// Events about some of them, hours old so that their ages hold still.
	evs := client.Resource[api.Event](c.client).Namespace("dsc")
	for i, e := range []struct {
		kind, resource, name, typ, reason, msg, field string
		count                                         int32
	}{
		{"Job", "jobs.batch", "batch", "Normal", "SuccessfulCreate", "Created pod: batch-abcde", "", 1},
		{"Job", "jobs.batch", "batch", "Normal", "Completed", "Job completed", "", 3},
		{"CronJob", "cronjobs.batch", "nightly", "Normal", "SuccessfulCreate", "Created job nightly-2", "", 1},
		{"PodDisruptionBudget", "poddisruptionbudgets.policy", "min", "Warning", "NoPods", "No matching pods found", "", 4},
		{"ServiceAccount", "serviceaccounts", "builder", "Normal", "Touched", "  padded message  ", "", 1},
		{"Endpoints", "endpoints", "web", "Warning", "FailedToUpdateEndpoint", "Failed to update endpoint dsc/web", "", 1},
		{"EndpointSlice", "endpointslices.discovery.k8s.io", "web-abc", "Normal", "Synced", "ok", "", 1},
		{"Pod", "pods", "batch-abcde", "Normal", "Pulled", "Container image \"busybox\" already present", "spec.containers{work}", 1},
		{"Widget", "widgets.example.com", "w1", "Normal", "Reconciled", "widget is ready", "spec.size", 2},
	} {
		info, ok := api.FindResource(e.resource)
		if e.kind == "Widget" {
			info, ok = widgets, true
		}
		if !ok {
			t.Fatalf("no resource %s", e.resource)
		}
		u, err := c.client.Dynamic(info).Namespace("dsc").Get(ctx, e.name)
		if err != nil {
			t.Fatalf("%s %s: %v", e.resource, e.name, err)
		}
		uid, _ := u.Object["metadata"].(map[string]any)["uid"].(string)
		first := now.Add(-time.Duration(3+i) * time.Hour)
		last := first
		if e.count > 1 {
			last = now.Add(-2 * time.Hour)
		}
		if _, err := evs.Create(ctx, &api.Event{
			ObjectMeta:     api.ObjectMeta{Name: fmt.Sprintf("%s.%d", e.name, i)},
			InvolvedObject: api.ObjectReference{Kind: e.kind, Namespace: "dsc", Name: e.name, UID: api.UID(uid), FieldPath: e.field},
			Type:           e.typ, Reason: e.reason, Message: e.msg, Count: e.count,
			Source:         api.EventSource{Component: "test-controller"},
			FirstTimestamp: api.Time{Time: first}, LastTimestamp: api.Time{Time: last},
		}); err != nil {
			t.Fatal(err)
		}
	}

	for _, tc := range []struct {
		args string
		// unordered: kubectl prints these lines in map order; compare
		// them as sets.
		unordered bool
	}{
		{args: "describe job batch"},
		{args: "describe job indexed"},
		{args: "describe job plain"},
		{args: "describe cronjob nightly"},
		{args: "describe cronjob hourly"},
		{args: "describe pdb min"},
		{args: "describe pdb max"},
		{args: "describe pdb none"},
		{args: "describe sa builder"},
		{args: "describe sa bare --show-events=false"},
		{args: "describe cm settings"},
		{args: "describe pod batch-abcde"},
		{args: "describe pod volumes-all"},
		{args: "describe secret builder-token"},
		{args: "describe quota compute"},
		{args: "describe quota scoped"},
		{args: "describe limits limits", unordered: true},
		{args: "describe limits many", unordered: true},
		{args: "describe ns dsc", unordered: true},
		{args: "describe ns dsc-empty"},
		{args: "describe ep web"},
		{args: "describe endpointslice web-abc"},
		{args: "describe endpointslice empty"},
		{args: "describe svc web"},
		{args: "describe svc headless"},
		{args: "describe svc lonely"},
		{args: "describe role reader"},
		{args: "describe clusterrole dsc-viewer"},
		{args: "describe rolebinding read-pods"},
		{args: "describe clusterrolebinding dsc-viewers"},
		{args: "describe crd widgets.example.com"},
		{args: "describe validatingwebhookconfiguration dsc-check"},
		{args: "describe mutatingwebhookconfiguration dsc-mutate"},
		{args: "describe apiservice v1.apps"},
		{args: "describe widget w1"},
		{args: "describe wd/w1"},
		{args: "describe widgets.example.com w"},
		// Several objects: no events unless asked for.
		{args: "describe jobs"},
		{args: "describe pdb min max --show-events=true"},
		{args: "describe sa nothere builder"},
		{args: "describe sa/builder sa/nothere"},
		{args: "describe sa,cm builder settings"},
		// A name prefix: each match followed by a blank line, no events.
		{args: "describe jobs ba"},
		{args: "describe cronjob/night"},
		{args: "describe endpointslices we --show-events"},
		{args: "describe sa nothing"},
		{args: "describe gizmos"},
		{args: "describe gizmos.example.com/x"},
	} {
		t.Run(strings.ReplaceAll(tc.args, " ", "-"), func(t *testing.T) {
			args := append([]string{"-n", "dsc"}, strings.Fields(tc.args)...)
			want, wantErr, wantCode := c.kubectl(args...)
			got, gotErr, gotCode := c.run("", args...)
			if tc.unordered {
				got, want = sortedLines(got), sortedLines(want)
			}
			if got != want {
				t.Errorf("kubectl-lite %s differs from kubectl:\n--- kubectl-lite\n%s\n--- kubectl\n%s", tc.args, got, want)
			}
			if gotErr != wantErr || gotCode != wantCode {
				t.Errorf("kubectl-lite %s: exit %d, stderr %q; kubectl: exit %d, stderr %q", tc.args, gotCode, gotErr, wantCode, wantErr)
			}
		})
	}
}

func sortedLines(s string) string {
	lines := strings.Split(s, "\n")
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}
