package printers

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
)

var now = time.Date(2026, 1, 2, 12, 0, 0, 0, time.UTC)

// ago is the RFC 3339 time d before now.
func ago(d time.Duration) string { return now.Add(-d).Format(time.RFC3339) }

// created is the metadata fragment of an object created 5m before now.
var created = `"creationTimestamp":"` + ago(5*time.Minute) + `"`

func decode(t *testing.T, kind, s string) api.Object {
	t.Helper()
	var obj api.Object = &api.Scale{}
	if kind != "Scale" {
		info, ok := api.FindResource(kind)
		if !ok {
			t.Fatalf("no kind %s", kind)
		}
		obj = info.New()
	}
	if err := json.Unmarshal([]byte(s), obj); err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return obj
}

// cellsOf renders a row's cells as kubectl would show them, one string.
func cellsOf(row api.TableRow) string {
	out := make([]string, len(row.Cells))
	for i, c := range row.Cells {
		out[i] = fmt.Sprint(c)
	}
	return strings.Join(out, " | ")
}

// TestRows pins every kind's cells, -o wide ones included, against what
// kube-apiserver's printers make of the same object.
func TestRows(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, kind, obj, want string
	}{
		// The kinds served for the real kube-scheduler and controller-manager.
		{"statefulset", "StatefulSet", `{"metadata":{"name":"db",` + created + `},"spec":{"replicas":3,"template":{"spec":{"containers":[{"name":"pg","image":"postgres:16"}]}}},"status":{"readyReplicas":2}}`,
			"db | 2/3 | 5m | pg | postgres:16"},
		{"daemonset", "DaemonSet", `{"metadata":{"name":"agent",` + created + `},"spec":{"selector":{"matchLabels":{"app":"agent"}},"template":{"spec":{"nodeSelector":{"os":"linux"},"containers":[{"name":"a","image":"agent:1"}]}}},
			"status":{"desiredNumberScheduled":2,"currentNumberScheduled":2,"numberReady":1,"updatedNumberScheduled":2,"numberAvailable":1}}`,
			"agent | 2 | 2 | 1 | 2 | 1 | os=linux | 5m | a | agent:1 | app=agent"},
		{"replicationcontroller", "ReplicationController", `{"metadata":{"name":"rc",` + created + `},"spec":{"replicas":2,"selector":{"app":"web"},"template":{"spec":{"containers":[{"name":"w","image":"nginx"}]}}},"status":{"replicas":2,"readyReplicas":1}}`,
			"rc | 2 | 2 | 1 | 5m | w | nginx | app=web"},
		{"cronjob", "CronJob", `{"metadata":{"name":"tick",` + created + `},"spec":{"schedule":"*/5 * * * *","suspend":false,"jobTemplate":{"spec":{"template":{"spec":{"containers":[{"name":"t","image":"busybox"}]}}}}},
			"status":{"lastScheduleTime":"` + ago(time.Minute) + `","active":[{"name":"tick-1"}]}}`,
			"tick | */5 * * * * | <none> | False | 1 | 60s | 5m | t | busybox | <none>"},
		{"pdb", "PodDisruptionBudget", `{"metadata":{"name":"db",` + created + `},"spec":{"minAvailable":"50%"},"status":{"disruptionsAllowed":1}}`,
			"db | 50% | N/A | 1 | 5m"},
		{"hpa", "HorizontalPodAutoscaler", `{"metadata":{"name":"web",` + created + `},"spec":{"scaleTargetRef":{"kind":"Deployment","name":"web"},"minReplicas":2,"maxReplicas":5,
			"metrics":[{"type":"Resource","resource":{"name":"cpu","target":{"type":"Utilization","averageUtilization":80}}}]},
			"status":{"currentReplicas":3,"currentMetrics":[{"type":"Resource","resource":{"name":"cpu","current":{"averageUtilization":41}}}]}}`,
			"web | Deployment/web | cpu: 41%/80% | 2 | 5 | 3 | 5m"},
		{"pv bound", "PersistentVolume", `{"metadata":{"name":"pv0",` + created + `},"spec":{"capacity":{"storage":"1Gi"},"accessModes":["ReadWriteOnce","ReadOnlyMany"],
			"persistentVolumeReclaimPolicy":"Retain","claimRef":{"namespace":"default","name":"data"},"storageClassName":"standard","hostPath":{"path":"/d"},"volumeMode":"Filesystem"},"status":{"phase":"Bound"}}`,
			"pv0 | 1Gi | RWO,ROX | Retain | Bound | default/data | standard | <unset> |  | 5m | Filesystem"},
		{"pvc pending", "PersistentVolumeClaim", `{"metadata":{"name":"data",` + created + `},"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}},"storageClassName":"fast"},"status":{"phase":"Pending"}}`,
			"data | Pending |  |  |  | fast | <unset> | 5m | <unset>"},
		{"storageclass", "StorageClass", `{"metadata":{"name":"standard",` + created + `},"provisioner":"example.com/disk"}`,
			"standard | example.com/disk | Delete | Immediate | false | 5m"},
		{"default storageclass", "StorageClass", `{"metadata":{"name":"local-path","annotations":{"storageclass.kubernetes.io/is-default-class":"true"},` + created +
			`},"provisioner":"rancher.io/local-path","reclaimPolicy":"Retain","volumeBindingMode":"WaitForFirstConsumer","allowVolumeExpansion":true}`,
			"local-path | rancher.io/local-path | Retain | WaitForFirstConsumer | true | 5m"}, // marked in lists only
		{"resourcequota", "ResourceQuota", `{"metadata":{"name":"q",` + created + `},"status":{"hard":{"pods":"10","requests.cpu":"2","limits.memory":"4Gi"},"used":{"pods":"3","requests.cpu":"500m"}}}`,
			"q | pods: 3/10, requests.cpu: 500m/2 | limits.memory: 0/4Gi | 5m"},
		{"resourceclaim allocated", "ResourceClaim", `{"metadata":{"name":"gpu",` + created + `},"spec":{"devices":{"requests":[]}},"status":{"allocation":{},"reservedFor":[{"resource":"pods","name":"p","uid":"u"}]}}`,
			"gpu | allocated,reserved | 5m"},
		// Pods.
		{"pod running", "Pod", `{"metadata":{"name":"web",` + created + `},"spec":{"nodeName":"n1","containers":[{"name":"a"}]},
			"status":{"phase":"Running","podIP":"10.0.0.5","containerStatuses":[{"name":"a","ready":true,"state":{"running":{}}}]}}`,
			"web | 1/1 | Running | 0 | 5m | 10.0.0.5 | n1 | <none> | <none>"},
		{"pod pending", "Pod", `{"metadata":{"name":"p",` + created + `},"spec":{"containers":[{"name":"a"},{"name":"b"}]},"status":{"phase":"Pending"}}`,
			"p | 0/2 | Pending | 0 | 5m | <none> | <none> | <none> | <none>"},
		{"pod no status no time", "Pod", `{"metadata":{"name":"p"},"spec":{"containers":[{"name":"a"}]}}`,
			"p | 0/1 |  | 0 | <unknown> | <none> | <none> | <none> | <none>"},
		{"pod crashloop with last restart", "Pod", `{"metadata":{"name":"c",` + created + `},"spec":{"containers":[{"name":"a"},{"name":"b"}]},
			"status":{"phase":"Running","containerStatuses":[
				{"name":"a","ready":true,"restartCount":1,"state":{"running":{}},"lastState":{"terminated":{"exitCode":1,"finishedAt":"` + ago(10*time.Minute) + `"}}},
				{"name":"b","ready":false,"restartCount":3,"state":{"waiting":{"reason":"CrashLoopBackOff"}},"lastState":{"terminated":{"exitCode":1,"finishedAt":"` + ago(2*time.Minute) + `"}}}]}}`,
			"c | 1/2 | CrashLoopBackOff | 4 (2m ago) | 5m | <none> | <none> | <none> | <none>"},
		{"pod init running", "Pod", `{"metadata":{"name":"i",` + created + `},"spec":{"initContainers":[{"name":"i1"},{"name":"i2"}],"containers":[{"name":"a"}]},
			"status":{"phase":"Pending","initContainerStatuses":[{"name":"i1","state":{"running":{}}},{"name":"i2","state":{"waiting":{"reason":"PodInitializing"}}}],
			"containerStatuses":[{"name":"a","state":{"waiting":{"reason":"PodInitializing"}}}]}}`,
			"i | 0/1 | Init:0/2 | 0 | 5m | <none> | <none> | <none> | <none>"},
		{"pod init second", "Pod", `{"metadata":{"name":"i",` + created + `},"spec":{"initContainers":[{"name":"i1"},{"name":"i2"}],"containers":[{"name":"a"}]},
			"status":{"phase":"Pending","initContainerStatuses":[{"name":"i1","state":{"terminated":{"exitCode":0,"reason":"Completed"}}},{"name":"i2","state":{"running":{}}}]}}`,
			"i | 0/1 | Init:1/2 | 0 | 5m | <none> | <none> | <none> | <none>"},
		{"pod init crashloop", "Pod", `{"metadata":{"name":"i",` + created + `},"spec":{"initContainers":[{"name":"i1"}],"containers":[{"name":"a"}]},
			"status":{"phase":"Pending","initContainerStatuses":[{"name":"i1","restartCount":2,"state":{"waiting":{"reason":"CrashLoopBackOff"}},"lastState":{"terminated":{"exitCode":1,"finishedAt":"` + ago(30*time.Second) + `"}}}],
			"containerStatuses":[{"name":"a","restartCount":0,"state":{"waiting":{"reason":"PodInitializing"}}}]}}`,
			"i | 0/1 | Init:CrashLoopBackOff | 2 (30s ago) | 5m | <none> | <none> | <none> | <none>"},
		{"pod init error", "Pod", `{"metadata":{"name":"i",` + created + `},"spec":{"initContainers":[{"name":"i1"}],"containers":[{"name":"a"}]},
			"status":{"phase":"Failed","initContainerStatuses":[{"name":"i1","state":{"terminated":{"exitCode":1,"reason":"Error"}}}]}}`,
			"i | 0/1 | Init:Error | 0 | 5m | <none> | <none> | <none> | <none>"},
		{"pod init exit code", "Pod", `{"metadata":{"name":"i",` + created + `},"spec":{"initContainers":[{"name":"i1"}],"containers":[{"name":"a"}]},
			"status":{"phase":"Pending","initContainerStatuses":[{"name":"i1","state":{"terminated":{"exitCode":3}}}]}}`,
			"i | 0/1 | Init:ExitCode:3 | 0 | 5m | <none> | <none> | <none> | <none>"},
		{"pod init signal", "Pod", `{"metadata":{"name":"i",` + created + `},"spec":{"initContainers":[{"name":"i1"}],"containers":[{"name":"a"}]},
			"status":{"phase":"Pending","initContainerStatuses":[{"name":"i1","state":{"terminated":{"exitCode":137,"signal":9}}}]}}`,
			"i | 0/1 | Init:Signal:9 | 0 | 5m | <none> | <none> | <none> | <none>"},
		{"pod sidecar", "Pod", `{"metadata":{"name":"s",` + created + `},"spec":{"initContainers":[{"name":"log","restartPolicy":"Always"}],"containers":[{"name":"a"}]},
			"status":{"phase":"Running","conditions":[{"type":"Initialized","status":"True"},{"type":"Ready","status":"True"}],
			"initContainerStatuses":[{"name":"log","ready":true,"started":true,"restartCount":1,"state":{"running":{}},"lastState":{"terminated":{"exitCode":1,"finishedAt":"` + ago(3*time.Minute) + `"}}}],
			"containerStatuses":[{"name":"a","ready":true,"restartCount":2,"state":{"running":{}}}]}}`,
			"s | 2/2 | Running | 3 (3m ago) | 5m | <none> | <none> | <none> | <none>"},
		{"pod terminating", "Pod", `{"metadata":{"name":"t",` + created + `,"deletionTimestamp":"` + ago(0) + `"},"spec":{"containers":[{"name":"a"}]},
			"status":{"phase":"Running","containerStatuses":[{"name":"a","ready":true,"state":{"running":{}}}]}}`,
			"t | 1/1 | Terminating | 0 | 5m | <none> | <none> | <none> | <none>"},
		{"pod deleted after success", "Pod", `{"metadata":{"name":"t",` + created + `,"deletionTimestamp":"` + ago(0) + `"},"spec":{"containers":[{"name":"a"}]},
			"status":{"phase":"Succeeded","containerStatuses":[{"name":"a","state":{"terminated":{"exitCode":0,"reason":"Completed"}}}]}}`,
			"t | 0/1 | Completed | 0 | 5m | <none> | <none> | <none> | <none>"},
		{"pod node lost", "Pod", `{"metadata":{"name":"u",` + created + `,"deletionTimestamp":"` + ago(0) + `"},"spec":{"containers":[{"name":"a"}]},
			"status":{"phase":"Running","reason":"NodeLost"}}`,
			"u | 0/1 | Unknown | 0 | 5m | <none> | <none> | <none> | <none>"},
		{"pod evicted", "Pod", `{"metadata":{"name":"e",` + created + `},"spec":{"containers":[{"name":"a"}]},"status":{"phase":"Failed","reason":"Evicted"}}`,
			"e | 0/1 | Evicted | 0 | 5m | <none> | <none> | <none> | <none>"},
		{"pod error exit", "Pod", `{"metadata":{"name":"x",` + created + `},"spec":{"containers":[{"name":"a"},{"name":"b"}]},
			"status":{"phase":"Failed","containerStatuses":[{"name":"a","state":{"terminated":{"exitCode":137,"signal":9}}},{"name":"b","state":{"terminated":{"exitCode":2}}}]}}`,
			"x | 0/2 | Signal:9 | 0 | 5m | <none> | <none> | <none> | <none>"},
		{"pod completed one still running ready", "Pod", `{"metadata":{"name":"r",` + created + `},"spec":{"containers":[{"name":"a"},{"name":"b"}]},
			"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}],"containerStatuses":[{"name":"a","ready":true,"state":{"running":{}}},{"name":"b","state":{"terminated":{"exitCode":0,"reason":"Completed"}}}]}}`,
			"r | 1/2 | Running | 0 | 5m | <none> | <none> | <none> | <none>"},
		{"pod completed one still running not ready", "Pod", `{"metadata":{"name":"r",` + created + `},"spec":{"containers":[{"name":"a"},{"name":"b"}]},
			"status":{"phase":"Running","containerStatuses":[{"name":"a","ready":true,"state":{"running":{}}},{"name":"b","state":{"terminated":{"exitCode":0,"reason":"Completed"}}}]}}`,
			"r | 1/2 | NotReady | 0 | 5m | <none> | <none> | <none> | <none>"},
		{"pod completed after another failed", "Pod", `{"metadata":{"name":"f",` + created + `},"spec":{"containers":[{"name":"a"},{"name":"b"}]},
			"status":{"phase":"Failed","containerStatuses":[{"name":"a","state":{"terminated":{"exitCode":0,"reason":"Completed"}}},{"name":"b","state":{"terminated":{"exitCode":2}}}]}}`,
			"f | 0/2 | ExitCode:2 | 0 | 5m | <none> | <none> | <none> | <none>"},
		{"pod completed", "Pod", `{"metadata":{"name":"c",` + created + `},"spec":{"containers":[{"name":"a"},{"name":"b"}]},
			"status":{"phase":"Succeeded","containerStatuses":[{"name":"a","state":{"terminated":{"exitCode":0,"reason":"Completed"}}},{"name":"b","state":{"terminated":{"exitCode":0,"reason":"Completed"}}}]}}`,
			"c | 0/2 | Completed | 0 | 5m | <none> | <none> | <none> | <none>"},
		{"pod scheduling gated", "Pod", `{"metadata":{"name":"g",` + created + `},"spec":{"containers":[{"name":"a"}],"schedulingGates":[{"name":"x"}]},
			"status":{"phase":"Pending","conditions":[{"type":"PodScheduled","status":"False","reason":"SchedulingGated"}]}}`,
			"g | 0/1 | SchedulingGated | 0 | 5m | <none> | <none> | <none> | <none>"},
		{"pod image pull", "Pod", `{"metadata":{"name":"g",` + created + `},"spec":{"nodeName":"n2","containers":[{"name":"a"}]},
			"status":{"phase":"Pending","containerStatuses":[{"name":"a","state":{"waiting":{"reason":"ErrImagePull"}}}]}}`,
			"g | 0/1 | ErrImagePull | 0 | 5m | <none> | n2 | <none> | <none>"},
		{"pod wide details", "Pod", `{"metadata":{"name":"w",` + created + `},"spec":{"containers":[{"name":"a"}],"readinessGates":[{"conditionType":"x/a"},{"conditionType":"x/b"}]},
			"status":{"phase":"Pending","nominatedNodeName":"n3","podIPs":[{"ip":"fd00::5"}],"conditions":[{"type":"x/a","status":"True"},{"type":"x/b","status":"False"}]}}`,
			"w | 0/1 | Pending | 0 | 5m | fd00::5 | <none> | n3 | 1/2"},

		// Nodes.
		{"node ready control plane", "Node", `{"metadata":{"name":"n1","creationTimestamp":"` + ago(74*time.Hour) + `","labels":{"node-role.kubernetes.io/control-plane":"","node-role.kubernetes.io/worker":"","kubernetes.io/role":"edge"}},
			"status":{"conditions":[{"type":"MemoryPressure","status":"False"},{"type":"Ready","status":"True"}],
			"addresses":[{"type":"InternalIP","address":"10.0.0.2"},{"type":"Hostname","address":"n1"}],
			"nodeInfo":{"kubeletVersion":"v1.37.2","osImage":"Debian GNU/Linux 13 (trixie)","kernelVersion":"6.12.0","containerRuntimeVersion":"containerd://1.6.20","architecture":"amd64"}}}`,
			"n1 | Ready | control-plane,edge,worker | 3d2h | v1.37.2 | 10.0.0.2 | <none> | Debian GNU/Linux 13 (trixie) | 6.12.0 (amd64) | containerd://1.6.20"},
		{"node cordoned not ready", "Node", `{"metadata":{"name":"n2",` + created + `},"spec":{"unschedulable":true},"status":{"conditions":[{"type":"Ready","status":"Unknown"}]}}`,
			"n2 | NotReady,SchedulingDisabled | <none> | 5m |  | <none> | <none> | <unknown> | <unknown> | <unknown>"},
		{"node without conditions", "Node", `{"metadata":{"name":"n3",` + created + `},"status":{"addresses":[{"type":"ExternalIP","address":"1.2.3.4"}]}}`,
			"n3 | Unknown | <none> | 5m |  | <none> | 1.2.3.4 | <unknown> | <unknown> | <unknown>"},

		// Services of every type.
		{"service cluster ip", "Service", `{"metadata":{"name":"web",` + created + `},"spec":{"type":"ClusterIP","clusterIP":"10.96.0.10","clusterIPs":["10.96.0.10"],"selector":{"tier":"f","app":"web"},"ports":[{"port":80,"protocol":"TCP"}]}}`,
			"web | ClusterIP | 10.96.0.10 | <none> | 80/TCP | 5m | app=web,tier=f"},
		{"service headless", "Service", `{"metadata":{"name":"db",` + created + `},"spec":{"type":"ClusterIP","clusterIP":"None","ports":[{"port":5432,"protocol":"TCP"}]}}`,
			"db | ClusterIP | None | <none> | 5432/TCP | 5m | <none>"},
		{"service external ips", "Service", `{"metadata":{"name":"x",` + created + `},"spec":{"type":"ClusterIP","clusterIPs":["10.96.0.11"],"externalIPs":["1.1.1.1","2.2.2.2"]}}`,
			"x | ClusterIP | 10.96.0.11 | 1.1.1.1,2.2.2.2 | <none> | 5m | <none>"},
		{"service node port", "Service", `{"metadata":{"name":"np",` + created + `},"spec":{"type":"NodePort","clusterIP":"10.96.0.12","ports":[{"port":80,"nodePort":30080,"protocol":"TCP"},{"port":53,"protocol":"UDP"}]}}`,
			"np | NodePort | 10.96.0.12 | <none> | 80:30080/TCP,53/UDP | 5m | <none>"},
		{"service load balancer pending", "Service", `{"metadata":{"name":"lb",` + created + `},"spec":{"type":"LoadBalancer","clusterIP":"10.96.0.13","ports":[{"port":443,"nodePort":31443,"protocol":"TCP"}]}}`,
			"lb | LoadBalancer | 10.96.0.13 | <pending> | 443:31443/TCP | 5m | <none>"},
		{"service load balancer", "Service", `{"metadata":{"name":"lb",` + created + `},"spec":{"type":"LoadBalancer","clusterIP":"10.96.0.13","externalIPs":["9.9.9.9"]},
			"status":{"loadBalancer":{"ingress":[{"hostname":"lb.example.com"},{"ip":"203.0.113.7"},{"ip":"203.0.113.7"}]}}}`,
			"lb | LoadBalancer | 10.96.0.13 | 203.0.113.7,lb.example.com,9.9.9.9 | <none> | 5m | <none>"},
		{"service external name", "Service", `{"metadata":{"name":"ext",` + created + `},"spec":{"type":"ExternalName","externalName":"db.example.com"}}`,
			"ext | ExternalName | <none> | db.example.com | <none> | 5m | <none>"},

		// Workloads.
		{"deployment", "Deployment", `{"metadata":{"name":"web",` + created + `},"spec":{"replicas":3,"selector":{"matchLabels":{"app":"web"},"matchExpressions":[{"key":"tier","operator":"In","values":["b","a"]}]},
			"template":{"spec":{"containers":[{"name":"app","image":"busybox:1"},{"name":"side","image":"nginx"}]}}},"status":{"readyReplicas":2,"updatedReplicas":3,"availableReplicas":2}}`,
			"web | 2/3 | 3 | 2 | 5m | app,side | busybox:1,nginx | app=web,tier in (a,b)"},
		{"deployment defaults", "Deployment", `{"metadata":{"name":"d",` + created + `},"spec":{"selector":{},"template":{"spec":{"containers":[{"name":"app","image":"i"}]}}}}`,
			"d | 0/1 | 0 | 0 | 5m | app | i | "},
		{"replicaset", "ReplicaSet", `{"metadata":{"name":"web-1",` + created + `},"spec":{"replicas":2,"selector":{"matchLabels":{"app":"web","pod-template-hash":"1"}},
			"template":{"spec":{"containers":[{"name":"app","image":"busybox:1"}]}}},"status":{"replicas":2,"readyReplicas":1}}`,
			"web-1 | 2 | 2 | 1 | 5m | app | busybox:1 | app=web,pod-template-hash=1"},
		{"replicaset no selector", "ReplicaSet", `{"metadata":{"name":"rs",` + created + `},"spec":{"replicas":0},"status":{"replicas":0}}`,
			"rs | 0 | 0 | 0 | 5m |  |  | <none>"},
		{"job complete", "Job", `{"metadata":{"name":"done",` + created + `},"spec":{"completions":3,"selector":{"matchLabels":{"batch.kubernetes.io/controller-uid":"u"}},"template":{"spec":{"containers":[{"name":"w","image":"busybox"}]}}},
			"status":{"succeeded":3,"startTime":"` + ago(5*time.Minute) + `","completionTime":"` + ago(5*time.Minute-70*time.Second) + `","conditions":[{"type":"SuccessCriteriaMet","status":"True"},{"type":"Complete","status":"True"}]}}`,
			"done | Complete | 3/3 | 70s | 5m | w | busybox | batch.kubernetes.io/controller-uid=u"},
		{"job running parallel", "Job", `{"metadata":{"name":"run",` + created + `},"spec":{"parallelism":2},"status":{"startTime":"` + ago(2*time.Minute) + `"}}`,
			"run | Running | 0/1 of 2 | 2m | 5m |  |  | <none>"},
		{"job not started", "Job", `{"metadata":{"name":"new",` + created + `},"spec":{"parallelism":1}}`,
			"new | Running | 0/1 |  | 5m |  |  | <none>"},
		{"job failed", "Job", `{"metadata":{"name":"f",` + created + `},"spec":{"completions":1},"status":{"failed":4,"conditions":[{"type":"FailureTarget","status":"True"},{"type":"Failed","status":"True"}]}}`,
			"f | Failed | 0/1 |  | 5m |  |  | <none>"},
		{"job failure target", "Job", `{"metadata":{"name":"f",` + created + `},"spec":{"completions":1},"status":{"conditions":[{"type":"FailureTarget","status":"True"}]}}`,
			"f | FailureTarget | 0/1 |  | 5m |  |  | <none>"},
		{"job success criteria met", "Job", `{"metadata":{"name":"s",` + created + `},"spec":{"completions":2},"status":{"succeeded":2,"conditions":[{"type":"SuccessCriteriaMet","status":"True"}]}}`,
			"s | SuccessCriteriaMet | 2/2 |  | 5m |  |  | <none>"},
		{"job suspended", "Job", `{"metadata":{"name":"s",` + created + `},"spec":{"completions":2},"status":{"conditions":[{"type":"Suspended","status":"True"}]}}`,
			"s | Suspended | 0/2 |  | 5m |  |  | <none>"},
		{"job terminating", "Job", `{"metadata":{"name":"t",` + created + `,"deletionTimestamp":"` + ago(0) + `"},"spec":{"completions":2},"status":{"conditions":[{"type":"Suspended","status":"True"}]}}`,
			"t | Terminating | 0/2 |  | 5m |  |  | <none>"},

		{"scale", "Scale", `{"metadata":{"name":"web",` + created + `},"spec":{"replicas":3},"status":{"replicas":2,"selector":"app=web"}}`,
			"web | 3 | 2 | 5m"},

		// Configuration and the rest of core.
		{"namespace", "Namespace", `{"metadata":{"name":"dev",` + created + `},"status":{"phase":"Terminating"}}`, "dev | Terminating | 5m"},
		{"configmap", "ConfigMap", `{"metadata":{"name":"cm",` + created + `},"data":{"a":"1","b":"2"},"binaryData":{"c":"eA=="}}`, "cm | 3 | 5m"},
		{"secret", "Secret", `{"metadata":{"name":"s",` + created + `},"type":"kubernetes.io/tls","data":{"tls.crt":"eA==","tls.key":"eQ=="}}`, "s | kubernetes.io/tls | 2 | 5m"},
		{"endpoints", "Endpoints", `{"metadata":{"name":"web",` + created + `},"subsets":[{"addresses":[{"ip":"10.0.0.1"},{"ip":"10.0.0.2"}],"ports":[{"port":80},{"port":443}]}]}`,
			"web | 10.0.0.1:80,10.0.0.2:80,10.0.0.1:443 + 1 more... | 5m"},
		{"endpoints headless ipv6", "Endpoints", `{"metadata":{"name":"h",` + created + `},"subsets":[{"addresses":[{"ip":"fd00::1"}]},{"addresses":[{"ip":"10.0.0.3"}],"ports":[{"port":53}]}]}`,
			"h | fd00::1,10.0.0.3:53 | 5m"},
		{"endpoints none", "Endpoints", `{"metadata":{"name":"none",` + created + `}}`, "none | <none> | 5m"},
		{"endpoints not ready only", "Endpoints", `{"metadata":{"name":"nr",` + created + `},"subsets":[{"notReadyAddresses":[{"ip":"10.0.0.9"}],"ports":[{"port":80}]}]}`, "nr |  | 5m"},
		{"event", "Event", `{"metadata":{"name":"web.1",` + created + `},"involvedObject":{"kind":"Pod","name":"web","fieldPath":"spec.containers{app}"},
			"reason":"BackOff","message":" Back-off restarting \n","type":"Warning","count":4,"source":{"component":"kubelet","host":"n1"},
			"firstTimestamp":"` + ago(10*time.Minute) + `","lastTimestamp":"` + ago(90*time.Second) + `"}`,
			"90s | Warning | BackOff | pod/web | spec.containers{app} | kubelet, n1 | Back-off restarting | 10m | 4 | web.1"},
		{"event series", "Event", `{"metadata":{"name":"e",` + created + `},"involvedObject":{"kind":"Node"},"reason":"R","type":"Normal",
			"eventTime":"` + now.Add(-3*time.Hour).Format("2006-01-02T15:04:05.000000Z07:00") + `","series":{"count":7,"lastObservedTime":"` + now.Add(-time.Minute).Format("2006-01-02T15:04:05.000000Z07:00") + `"},
			"reportingComponent":"scheduler","reportingInstance":"s-1"}`,
			"60s | Normal | R | node |  | scheduler, s-1 |  | 3h | 7 | e"},
		{"event no times", "Event", `{"metadata":{"name":"e"},"involvedObject":{"kind":"Pod","name":"p"}}`,
			"<unknown> |  |  | pod/p |  |  |  | <unknown> | 1 | e"},

		// Other groups.
		{"lease", "Lease", `{"metadata":{"name":"n1",` + created + `},"spec":{"holderIdentity":"n1"}}`, "n1 | n1 | 5m"},
		{"lease unheld", "Lease", `{"metadata":{"name":"l",` + created + `}}`, "l |  | 5m"},
		{"endpointslice", "EndpointSlice", `{"metadata":{"name":"web-x",` + created + `},"addressType":"IPv4","ports":[{"port":80},{"name":"dns"},{},{"port":9}],
			"endpoints":[{"addresses":["10.0.0.1"]},{"addresses":["10.0.0.2","10.0.0.3","10.0.0.4"]}]}`,
			"web-x | IPv4 | 80,dns,* + 1 more... | 10.0.0.1,10.0.0.2,10.0.0.3 + 1 more... | 5m"},
		{"endpointslice empty", "EndpointSlice", `{"metadata":{"name":"e",` + created + `},"addressType":"IPv6","ports":null,"endpoints":null}`,
			"e | IPv6 | <unset> | <unset> | 5m"},
		{"csr issued", "CertificateSigningRequest", `{"metadata":{"name":"csr-1",` + created + `},"spec":{"signerName":"kubernetes.io/kube-apiserver-client-kubelet","username":"system:node:n1","expirationSeconds":86400,"request":""},
			"status":{"conditions":[{"type":"Approved","status":"True"}],"certificate":"eA=="}}`,
			"csr-1 | 5m | kubernetes.io/kube-apiserver-client-kubelet | system:node:n1 | 24h | Approved,Issued"},
		{"csr pending", "CertificateSigningRequest", `{"metadata":{"name":"csr-2",` + created + `},"spec":{"signerName":"","username":"alice","request":""}}`,
			"csr-2 | 5m | <none> | alice | <none> | Pending"},
		{"csr denied failed", "CertificateSigningRequest", `{"metadata":{"name":"csr-3",` + created + `},"spec":{"signerName":"x/y","request":"","expirationSeconds":600},
			"status":{"conditions":[{"type":"Approved","status":"True"},{"type":"Denied","status":"True"},{"type":"Failed","status":"True"}]}}`,
			"csr-3 | 5m | x/y |  | 10m | Denied,Failed"},
		{"rolebinding", "RoleBinding", `{"metadata":{"name":"rb",` + created + `},"roleRef":{"kind":"ClusterRole","name":"view"},
			"subjects":[{"kind":"User","name":"alice"},{"kind":"User","name":"bob"},{"kind":"Group","name":"devs"},{"kind":"ServiceAccount","namespace":"ns","name":"sa"}]}`,
			"rb | ClusterRole/view | 5m | alice, bob | devs | ns/sa"},
		{"clusterrolebinding", "ClusterRoleBinding", `{"metadata":{"name":"crb",` + created + `},"roleRef":{"kind":"ClusterRole","name":"admin"}}`,
			"crb | ClusterRole/admin | 5m |  |  | "},
		{"role: default table", "Role", `{"metadata":{"name":"r","creationTimestamp":"2025-12-30T08:09:10Z"}}`, "r | 2025-12-30T08:09:10Z"},
		{"clusterrole: default table", "ClusterRole", `{"metadata":{"name":"cr","creationTimestamp":"2025-12-30T08:09:10Z"}}`, "cr | 2025-12-30T08:09:10Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			obj := decode(t, tt.kind, tt.obj)
			p := For(tt.kind)
			row := p.Row(obj, now)
			if len(row.Cells) != len(p.Columns) {
				t.Fatalf("%d cells for %d columns", len(row.Cells), len(p.Columns))
			}
			if got := cellsOf(row); got != tt.want {
				t.Errorf("cells\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

// TestColumns pins the column names, types and priorities, in order, as
// kube-apiserver declares them (kubectl prints the names in upper case).
func TestColumns(t *testing.T) {
	t.Parallel()
	want := map[string]string{
		"Pod":                       "Name Ready Status Restarts:string Age IP* Node* Nominated Node* Readiness Gates*",
		"Node":                      "Name Status Roles Age Version Internal-IP* External-IP* OS-Image* Kernel-Version* Container-Runtime*",
		"Namespace":                 "Name Status Age",
		"Service":                   "Name Type Cluster-IP External-IP Port(s) Age Selector*",
		"Endpoints":                 "Name Endpoints Age",
		"ConfigMap":                 "Name Data Age",
		"Secret":                    "Name Type Data Age",
		"Event":                     "Last Seen Type Reason Object Subobject* Source* Message First Seen* Count* Name*",
		"Deployment":                "Name Ready Up-to-date Available Age Containers* Images* Selector*",
		"ReplicaSet":                "Name Desired:integer Current:integer Ready:integer Age Containers* Images* Selector*",
		"Job":                       "Name Status Completions Duration Age Containers* Images* Selector*",
		"Lease":                     "Name Holder Age",
		"EndpointSlice":             "Name AddressType Ports Endpoints Age",
		"CertificateSigningRequest": "Name Age SignerName Requestor RequestedDuration Condition",
		"RoleBinding":               "Name Role Age Users* Groups* ServiceAccounts*",
		"ClusterRoleBinding":        "Name Role Age Users* Groups* ServiceAccounts*",
		"Role":                      "Name Created At:date",
		"ClusterRole":               "Name Created At:date",
		// The scale subresource.
		"Scale": "Name Desired:integer Available:integer Age",
		// The kinds served for the real kube-scheduler and kube-controller-manager.
		"StatefulSet":                      "Name Ready Age Containers* Images*",
		"DaemonSet":                        "Name Desired:integer Current:integer Ready:integer Up-to-date:integer Available:integer Node Selector Age Containers* Images* Selector*",
		"ControllerRevision":               "Name Controller Revision Age",
		"ReplicationController":            "Name Desired:integer Current:integer Ready:integer Age Containers* Images* Selector*",
		"CronJob":                          "Name Schedule Timezone Suspend:boolean Active:integer Last Schedule Age Containers* Images* Selector*",
		"PodDisruptionBudget":              "Name Min Available Max Unavailable Allowed Disruptions:integer Age",
		"HorizontalPodAutoscaler":          "Name Reference Targets MinPods MaxPods Replicas Age",
		"APIService":                       "Name Service Available Age",
		"ServiceAccount":                   "Name Age",
		"ResourceQuota":                    "Name Request Limit Age",
		"PersistentVolume":                 "Name Capacity Access Modes Reclaim Policy Status Claim StorageClass VolumeAttributesClass Reason Age VolumeMode*",
		"PersistentVolumeClaim":            "Name Status Volume Capacity Access Modes StorageClass VolumeAttributesClass Age VolumeMode*",
		"StorageClass":                     "Name Provisioner ReclaimPolicy VolumeBindingMode AllowVolumeExpansion Age",
		"VolumeAttributesClass":            "Name DriverName Age",
		"VolumeAttachment":                 "Name Attacher PV Node Attached:boolean Age",
		"CSINode":                          "Name Drivers:integer Age",
		"CSIDriver":                        "Name AttachRequired:boolean PodInfoOnMount:boolean StorageCapacity:boolean TokenRequests RequiresRepublish:boolean Modes Age",
		"CSIStorageCapacity":               "Name StorageClassName Capacity",
		"DeviceClass":                      "Name Age",
		"ResourceClaim":                    "Name State Age",
		"ResourceClaimTemplate":            "Name Age",
		"ResourceSlice":                    "Name Node Driver Pool Age",
		"DeviceTaintRule":                  "Name Key Value Effect TimeAdded Age",
		"ServiceCIDR":                      "Name CIDRs Age",
		"IPAddress":                        "Name ParentRef",
		"PodCertificateRequest":            "Name PodName ServiceAccountName NodeName SignerName State UnverifiedUserAnnotations",
		"ValidatingAdmissionPolicy":        "Name Validations:integer ParamKind Age",
		"ValidatingAdmissionPolicyBinding": "Name PolicyName ParamRef Age",
		"MutatingWebhookConfiguration":     "Name Webhooks:integer Age",
		"ValidatingWebhookConfiguration":   "Name Webhooks:integer Age",
		"StorageVersionMigration":          "Name Resource Status",
		"PodTemplate":                      "Name Containers Images Pod Labels",
		"LimitRange":                       "Name Created At:date",
		"Ingress":                          "Name Class Hosts Address Ports Age",
		"IngressClass":                     "Name Controller Parameters Age",
		"NetworkPolicy":                    "Name Pod-Selector Age",
		"PriorityClass":                    "Name Value:integer Global-Default:boolean Age PreemptionPolicy",
		"RuntimeClass":                     "Name Handler Age",
		"FlowSchema":                       "Name PriorityLevel MatchingPrecedence DistinguisherMethod Age MissingPL",
		"PriorityLevelConfiguration":       "Name Type NominalConcurrencyShares Queues HandSize QueueLengthLimit Age",
		"MutatingAdmissionPolicy":          "Name Mutations:integer ParamKind Age",
		"MutatingAdmissionPolicyBinding":   "Name PolicyName ParamRef Age",
		"ClusterTrustBundle":               "Name SignerName",
		"ComponentStatus":                  "Name Status Message Error",
		// Bindings are create-only: the default table, never printed.
		"Binding": "Name Created At:date",
		// apiextensions-apiserver's own table (TestCRDTableAsKube).
		"CustomResourceDefinition": "Name Scope Versions Created At:date Group* Kind* ShortNames* Established:boolean*",
	}
	kinds := []string{"Scale"}
	for _, info := range append(api.Resources, api.ComputedResources...) {
		kinds = append(kinds, info.Kind)
	}
	for _, kind := range kinds {
		w, ok := want[kind]
		if !ok {
			t.Errorf("no columns pinned for %s: add them here with its printer", kind)
			continue
		}
		var got []string
		for _, c := range For(kind).Columns {
			s := c.Name
			if c.Type != "string" || s == "Restarts" {
				s += ":" + c.Type
			}
			if c.Priority > 0 {
				s += "*"
			}
			// kube describes RuntimeClass's handler with ObjectMeta's doc
			// of a field it does not have: empty.
			if c.Description == "" && (kind != "RuntimeClass" || c.Name != "Handler") {
				t.Errorf("%s column %s has no description", kind, c.Name)
			}
			got = append(got, s)
		}
		if g := strings.Join(got, " "); g != w {
			t.Errorf("%s columns\n got %s\nwant %s", kind, g, w)
		}
		// The name column is what kubectl prefixes with the kind.
		names := 0
		for _, c := range For(kind).Columns {
			if c.Format == "name" {
				names++
			}
		}
		// kube's Scale and StorageVersionMigration tables have no name
		// column; a VolumeAttachment's attacher is a second one.
		want := 1
		switch kind {
		case "Scale", "StorageVersionMigration":
			want = 0
		case "VolumeAttachment":
			want = 2
		}
		if names != want {
			t.Errorf("%s has %d name columns, want %d", kind, names, want)
		}
	}
}

// TestPodConditions checks finished pods' rows are marked Completed, as
// kube marks them.
func TestPodConditions(t *testing.T) {
	t.Parallel()
	for phase, want := range map[string][]api.TableRowCondition{
		"Succeeded": podSucceededConditions, "Failed": podFailedConditions, "Running": nil,
	} {
		row := For("Pod").Row(decode(t, "Pod", `{"metadata":{"name":"p"},"status":{"phase":"`+phase+`"}}`), now)
		if !reflect.DeepEqual(row.Conditions, want) {
			t.Errorf("%s: conditions %v, want %v", phase, row.Conditions, want)
		}
	}
}

// TestRowOfAnotherType: a printer given an object of another kind still
// fills every column rather than panicking.
func TestRowOfAnotherType(t *testing.T) {
	t.Parallel()
	row := For("Pod").Row(&api.ConfigMap{ObjectMeta: api.ObjectMeta{Name: "x"}}, now)
	if len(row.Cells) != len(For("Pod").Columns) || row.Cells[0] != "x" {
		t.Errorf("cells %v", row.Cells)
	}
}

// TestIPAddressRow: kube's IPAddress printer puts the age in a third cell
// its two columns do not declare; so does this one.
func TestIPAddressRow(t *testing.T) {
	t.Parallel()
	obj := decode(t, "IPAddress", `{"metadata":{"name":"10.96.0.10",`+created+`},"spec":{"parentRef":{"resource":"services","namespace":"kube-system","name":"dns"}}}`)
	if got := cellsOf(For("IPAddress").Row(obj, now)); got != "10.96.0.10 | services/kube-system/dns | 5m" {
		t.Errorf("cells %s", got)
	}
}

// TestEventsV1Row: an events.k8s.io Event prints as the core Event it is
// stored as.
func TestEventsV1Row(t *testing.T) {
	t.Parallel()
	core := &api.Event{ObjectMeta: api.ObjectMeta{Name: "e"}, Reason: "Scheduled", Type: "Normal", Message: "assigned",
		InvolvedObject: api.ObjectReference{Kind: "Pod", Name: "web"}, ReportingController: "default-scheduler",
		EventTime: api.MicroTime{Time: now.Add(-time.Minute)}}
	want := cellsOf(For("Event").Row(core, now))
	if got := cellsOf(For("Event").Row(api.EventToV1(core), now)); got != want || !strings.Contains(got, "pod/web") {
		t.Errorf("events.k8s.io row %s, core row %s", got, want)
	}
}

// Every entry of the table of printers names a served kind (or the scale
// subresource's): a misspelt kind would print the default table.
func TestPrintersAreServedKinds(t *testing.T) {
	t.Parallel()
	kinds := map[string]bool{"Scale": true}
	for _, ri := range append(api.Resources, api.ComputedResources...) {
		kinds[ri.Kind] = true
	}
	for kind := range printers {
		if !kinds[kind] {
			t.Errorf("printers[%q] is not a kind of api.Resources", kind)
		}
	}
}

// TestMarkDefaultClass: a list marks its effective default class only, as
// kube v1.37's printStorageClassList: the newest with either annotation,
// the first by name among those of the same second.
func TestMarkDefaultClass(t *testing.T) {
	t.Parallel()
	at := func(s int) api.Time { return api.Time{Time: time.Unix(1_700_000_000+int64(s), 0)} }
	class := func(name string, created int, annotation string) *api.StorageClass {
		sc := &api.StorageClass{ObjectMeta: api.ObjectMeta{Name: name, CreationTimestamp: at(created)}}
		if annotation != "" {
			sc.Annotations = map[string]string{annotation: "true"}
		}
		return sc
	}
	for _, tc := range []struct {
		name  string
		items []*api.StorageClass
		want  []string
	}{
		{"none", []*api.StorageClass{class("a", 0, "")}, []string{"a"}},
		{"newest wins", []*api.StorageClass{class("old", 0, "storageclass.kubernetes.io/is-default-class"), class("new", 5, "storageclass.beta.kubernetes.io/is-default-class"), class("plain", 9, "")},
			[]string{"old", "new (default)", "plain"}},
		{"same second, first name", []*api.StorageClass{class("b", 1, "storageclass.kubernetes.io/is-default-class"), class("a", 1, "storageclass.kubernetes.io/is-default-class")},
			[]string{"b", "a (default)"}},
	} {
		objs := make([]api.Object, len(tc.items))
		rows := make([]api.TableRow, len(tc.items))
		for i, sc := range tc.items {
			objs[i] = sc
			rows[i] = storageClassPrinter.Row(sc, time.Now())
		}
		storageClassPrinter.List(objs, rows)
		for i, r := range rows {
			if r.Cells[0] != tc.want[i] {
				t.Errorf("%s: row %d name %v, want %q", tc.name, i, r.Cells[0], tc.want[i])
			}
		}
	}
}
