package printers_test

func pod(meta, spec, status string) tc {
	return tc{"Pod", "v1", `{"apiVersion":"v1","kind":"Pod","metadata":{"namespace":"default","labels":{"app":"web","x/tier":"front"},` + meta + `},"spec":` + spec + `,"status":` + status + `}`}
}

const cr = `"creationTimestamp":"AGO(5m3s)"`

// job is a Job with status fields.
func job(name, status string) tc {
	return tc{"Job", "batch/v1", `{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"` + name + `","namespace":"default",` + cr +
		`},"spec":{"completions":1,"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"w","image":"busybox"}]}}},"status":{` + status + `}}`}
}

var cases = []tc{
	pod(`"name":"running",`+cr, `{"nodeName":"n1","containers":[{"name":"a","image":"i"}]}`, `{"phase":"Running","podIP":"10.0.0.5","podIPs":[{"ip":"10.0.0.5"}],"containerStatuses":[{"name":"a","ready":true,"restartCount":0,"image":"i","imageID":"","state":{"running":{"startedAt":"AGO(5m)"}}}]}`),
	pod(`"name":"pending",`+cr, `{"containers":[{"name":"a","image":"i"},{"name":"b","image":"i"}]}`, `{"phase":"Pending"}`),
	pod(`"name":"crash",`+cr, `{"containers":[{"name":"a","image":"i"},{"name":"b","image":"i"}]}`, `{"phase":"Running","containerStatuses":[
		{"name":"a","ready":true,"restartCount":1,"image":"i","imageID":"","state":{"running":{}},"lastState":{"terminated":{"exitCode":1,"finishedAt":"AGO(10m)"}}},
		{"name":"b","ready":false,"restartCount":3,"image":"i","imageID":"","state":{"waiting":{"reason":"CrashLoopBackOff"}},"lastState":{"terminated":{"exitCode":1,"finishedAt":"AGO(2m)"}}}]}`),
	pod(`"name":"init0",`+cr, `{"initContainers":[{"name":"i1","image":"i"},{"name":"i2","image":"i"}],"containers":[{"name":"a","image":"i"}]}`, `{"phase":"Pending","initContainerStatuses":[{"name":"i1","ready":false,"restartCount":0,"image":"i","imageID":"","state":{"running":{}}},{"name":"i2","ready":false,"restartCount":0,"image":"i","imageID":"","state":{"waiting":{"reason":"PodInitializing"}}}],"containerStatuses":[{"name":"a","ready":false,"restartCount":0,"image":"i","imageID":"","state":{"waiting":{"reason":"PodInitializing"}}}]}`),
	pod(`"name":"init1",`+cr, `{"initContainers":[{"name":"i1","image":"i"},{"name":"i2","image":"i"}],"containers":[{"name":"a","image":"i"}]}`, `{"phase":"Pending","initContainerStatuses":[{"name":"i1","ready":false,"restartCount":0,"image":"i","imageID":"","state":{"terminated":{"exitCode":0,"reason":"Completed"}}},{"name":"i2","ready":false,"restartCount":0,"image":"i","imageID":"","state":{"running":{}}}]}`),
	pod(`"name":"initcrash",`+cr, `{"initContainers":[{"name":"i1","image":"i"}],"containers":[{"name":"a","image":"i"}]}`, `{"phase":"Pending","initContainerStatuses":[{"name":"i1","ready":false,"restartCount":2,"image":"i","imageID":"","state":{"waiting":{"reason":"CrashLoopBackOff"}},"lastState":{"terminated":{"exitCode":1,"finishedAt":"AGO(30s)"}}}]}`),
	pod(`"name":"initerr",`+cr, `{"initContainers":[{"name":"i1","image":"i"}],"containers":[{"name":"a","image":"i"}]}`, `{"phase":"Failed","initContainerStatuses":[{"name":"i1","ready":false,"restartCount":0,"image":"i","imageID":"","state":{"terminated":{"exitCode":1,"reason":"Error"}}}]}`),
	pod(`"name":"initexit",`+cr, `{"initContainers":[{"name":"i1","image":"i"}],"containers":[{"name":"a","image":"i"}]}`, `{"phase":"Pending","initContainerStatuses":[{"name":"i1","ready":false,"restartCount":0,"image":"i","imageID":"","state":{"terminated":{"exitCode":3}}}]}`),
	pod(`"name":"initsig",`+cr, `{"initContainers":[{"name":"i1","image":"i"}],"containers":[{"name":"a","image":"i"}]}`, `{"phase":"Pending","initContainerStatuses":[{"name":"i1","ready":false,"restartCount":0,"image":"i","imageID":"","state":{"terminated":{"exitCode":137,"signal":9}}}]}`),
	pod(`"name":"sidecar",`+cr, `{"initContainers":[{"name":"log","image":"i","restartPolicy":"Always"}],"containers":[{"name":"a","image":"i"}]}`, `{"phase":"Running","conditions":[{"type":"Initialized","status":"True"},{"type":"Ready","status":"True"}],
		"initContainerStatuses":[{"name":"log","ready":true,"started":true,"restartCount":1,"image":"i","imageID":"","state":{"running":{}},"lastState":{"terminated":{"exitCode":1,"finishedAt":"AGO(3m)"}}}],
		"containerStatuses":[{"name":"a","ready":true,"restartCount":2,"image":"i","imageID":"","state":{"running":{}}}]}`),
	pod(`"name":"terminating",`+cr+`,"deletionTimestamp":"AGO(1s)","deletionGracePeriodSeconds":30`, `{"containers":[{"name":"a","image":"i"}]}`, `{"phase":"Running","containerStatuses":[{"name":"a","ready":true,"restartCount":0,"image":"i","imageID":"","state":{"running":{}}}]}`),
	pod(`"name":"deletedsucceeded",`+cr+`,"deletionTimestamp":"AGO(1s)","deletionGracePeriodSeconds":30`, `{"containers":[{"name":"a","image":"i"}]}`, `{"phase":"Succeeded","containerStatuses":[{"name":"a","ready":false,"restartCount":0,"image":"i","imageID":"","state":{"terminated":{"exitCode":0,"reason":"Completed"}}}]}`),
	pod(`"name":"nodelost",`+cr+`,"deletionTimestamp":"AGO(1s)","deletionGracePeriodSeconds":30`, `{"containers":[{"name":"a","image":"i"}]}`, `{"phase":"Running","reason":"NodeLost"}`),
	pod(`"name":"evicted",`+cr, `{"containers":[{"name":"a","image":"i"}]}`, `{"phase":"Failed","reason":"Evicted","message":"x"}`),
	pod(`"name":"sig",`+cr, `{"containers":[{"name":"a","image":"i"},{"name":"b","image":"i"}]}`, `{"phase":"Failed","containerStatuses":[{"name":"a","ready":false,"restartCount":0,"image":"i","imageID":"","state":{"terminated":{"exitCode":137,"signal":9}}},{"name":"b","ready":false,"restartCount":0,"image":"i","imageID":"","state":{"terminated":{"exitCode":2}}}]}`),
	pod(`"name":"completedfailed",`+cr, `{"containers":[{"name":"a","image":"i"},{"name":"b","image":"i"}]}`, `{"phase":"Failed","containerStatuses":[{"name":"a","ready":false,"restartCount":0,"image":"i","imageID":"","state":{"terminated":{"exitCode":0,"reason":"Completed"}}},{"name":"b","ready":false,"restartCount":0,"image":"i","imageID":"","state":{"terminated":{"exitCode":2}}}]}`),
	pod(`"name":"completed",`+cr, `{"containers":[{"name":"a","image":"i"}]}`, `{"phase":"Succeeded","containerStatuses":[{"name":"a","ready":false,"restartCount":0,"image":"i","imageID":"","state":{"terminated":{"exitCode":0,"reason":"Completed"}}}]}`),
	pod(`"name":"runready",`+cr, `{"containers":[{"name":"a","image":"i"},{"name":"b","image":"i"}]}`, `{"phase":"Running","conditions":[{"type":"Ready","status":"True"}],"containerStatuses":[{"name":"a","ready":true,"restartCount":0,"image":"i","imageID":"","state":{"running":{}}},{"name":"b","ready":false,"restartCount":0,"image":"i","imageID":"","state":{"terminated":{"exitCode":0,"reason":"Completed"}}}]}`),
	pod(`"name":"runnotready",`+cr, `{"containers":[{"name":"a","image":"i"},{"name":"b","image":"i"}]}`, `{"phase":"Running","containerStatuses":[{"name":"a","ready":true,"restartCount":0,"image":"i","imageID":"","state":{"running":{}}},{"name":"b","ready":false,"restartCount":0,"image":"i","imageID":"","state":{"terminated":{"exitCode":0,"reason":"Completed"}}}]}`),
	pod(`"name":"gated",`+cr, `{"containers":[{"name":"a","image":"i"}],"schedulingGates":[{"name":"x"}]}`, `{"phase":"Pending","conditions":[{"type":"PodScheduled","status":"False","reason":"SchedulingGated"}]}`),
	pod(`"name":"pull",`+cr, `{"nodeName":"n2","containers":[{"name":"a","image":"i"}]}`, `{"phase":"Pending","containerStatuses":[{"name":"a","ready":false,"restartCount":0,"image":"i","imageID":"","state":{"waiting":{"reason":"ErrImagePull","message":"multi\nline"}}}]}`),
	pod(`"name":"gates",`+cr, `{"containers":[{"name":"a","image":"i"}],"readinessGates":[{"conditionType":"x/a"},{"conditionType":"x/b"}]}`, `{"phase":"Pending","nominatedNodeName":"n3","podIPs":[{"ip":"fd00::5"}],"conditions":[{"type":"x/a","status":"True"},{"type":"x/b","status":"False"}]}`),
	pod(`"name":"noage"`, `{"containers":[{"name":"a","image":"i"}]}`, `{}`),

	{"Node", "v1", `{"apiVersion":"v1","kind":"Node","metadata":{"name":"n1","creationTimestamp":"AGO(74h5m)","labels":{"node-role.kubernetes.io/control-plane":"","node-role.kubernetes.io/worker":"","kubernetes.io/role":"edge"}},
		"status":{"conditions":[{"type":"MemoryPressure","status":"False"},{"type":"Ready","status":"True"}],"addresses":[{"type":"InternalIP","address":"10.0.0.2"},{"type":"Hostname","address":"n1"}],
		"nodeInfo":{"machineID":"","systemUUID":"","bootID":"","kubeProxyVersion":"","operatingSystem":"linux","kubeletVersion":"v1.37.2","osImage":"Debian GNU/Linux 13 (trixie)","kernelVersion":"6.12.0","containerRuntimeVersion":"containerd://1.6.20","architecture":"amd64"}}}`},
	{"Node", "v1", `{"apiVersion":"v1","kind":"Node","metadata":{"name":"n2",` + cr + `},"spec":{"unschedulable":true},"status":{"conditions":[{"type":"Ready","status":"Unknown"}]}}`},
	{"Node", "v1", `{"apiVersion":"v1","kind":"Node","metadata":{"name":"n3","creationTimestamp":"AGO(9600h)"},"status":{"addresses":[{"type":"ExternalIP","address":"1.2.3.4"}]}}`},

	{"Service", "v1", `{"apiVersion":"v1","kind":"Service","metadata":{"name":"web","namespace":"default",` + cr + `},"spec":{"type":"ClusterIP","clusterIP":"10.96.0.10","clusterIPs":["10.96.0.10"],"selector":{"tier":"f","app":"web"},"ports":[{"port":80,"protocol":"TCP","targetPort":8080}]}}`},
	{"Service", "v1", `{"apiVersion":"v1","kind":"Service","metadata":{"name":"headless","namespace":"default",` + cr + `},"spec":{"type":"ClusterIP","clusterIP":"None","clusterIPs":["None"],"ports":[{"port":5432,"protocol":"TCP"}]}}`},
	{"Service", "v1", `{"apiVersion":"v1","kind":"Service","metadata":{"name":"ext-ips","namespace":"default",` + cr + `},"spec":{"type":"ClusterIP","clusterIP":"10.96.0.11","clusterIPs":["10.96.0.11"],"externalIPs":["1.1.1.1","2.2.2.2"],"ports":[{"port":53,"protocol":"UDP"}]}}`},
	{"Service", "v1", `{"apiVersion":"v1","kind":"Service","metadata":{"name":"np","namespace":"default",` + cr + `},"spec":{"type":"NodePort","clusterIP":"10.96.0.12","clusterIPs":["10.96.0.12"],"ports":[{"port":80,"nodePort":30080,"protocol":"TCP"},{"port":53,"nodePort":30053,"protocol":"UDP"}]}}`},
	{"Service", "v1", `{"apiVersion":"v1","kind":"Service","metadata":{"name":"lbpending","namespace":"default",` + cr + `},"spec":{"type":"LoadBalancer","clusterIP":"10.96.0.13","clusterIPs":["10.96.0.13"],"ports":[{"port":443,"nodePort":31443,"protocol":"TCP"}]}}`},
	{"Service", "v1", `{"apiVersion":"v1","kind":"Service","metadata":{"name":"lb","namespace":"default",` + cr + `},"spec":{"type":"LoadBalancer","clusterIP":"10.96.0.14","clusterIPs":["10.96.0.14"],"externalIPs":["9.9.9.9"],"ports":[{"port":443,"nodePort":31444,"protocol":"TCP"}]},
		"status":{"loadBalancer":{"ingress":[{"hostname":"a-very-long-load-balancer.example.com"},{"ip":"203.0.113.7"}]}}}`},
	{"Service", "v1", `{"apiVersion":"v1","kind":"Service","metadata":{"name":"extname","namespace":"default",` + cr + `},"spec":{"type":"ExternalName","externalName":"db.example.com"}}`},

	{"Deployment", "apps/v1", `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"default",` + cr + `,"labels":{"app":"web"}},"spec":{"replicas":3,"selector":{"matchLabels":{"app":"web"},"matchExpressions":[{"key":"tier","operator":"In","values":["b","a"]},{"key":"gone","operator":"DoesNotExist"}]},
		"template":{"metadata":{"labels":{"app":"web","tier":"a"}},"spec":{"containers":[{"name":"app","image":"busybox:1"},{"name":"side","image":"nginx"}]}}},"status":{"readyReplicas":2,"updatedReplicas":3,"availableReplicas":2}}`},
	{"Deployment", "apps/v1", `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d","namespace":"default",` + cr + `},"spec":{"selector":{"matchLabels":{"a":"b"}},"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"app","image":"i"}]}}}}`},
	{"ReplicaSet", "apps/v1", `{"apiVersion":"apps/v1","kind":"ReplicaSet","metadata":{"name":"web-1","namespace":"default",` + cr + `},"spec":{"replicas":2,"selector":{"matchLabels":{"app":"web","pod-template-hash":"1"}},
		"template":{"metadata":{"labels":{"app":"web","pod-template-hash":"1"}},"spec":{"containers":[{"name":"app","image":"busybox:1"}]}}},"status":{"replicas":2,"readyReplicas":1}}`},
	{"Job", "batch/v1", `{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"done","namespace":"default",` + cr + `},"spec":{"completions":3,"selector":{"matchLabels":{"batch.kubernetes.io/controller-uid":"u"}},"template":{"metadata":{"labels":{"batch.kubernetes.io/controller-uid":"u"}},"spec":{"restartPolicy":"Never","containers":[{"name":"w","image":"busybox"}]}}},
		"status":{"succeeded":3,"startTime":"AGO(5m)","completionTime":"AGO(3m50s)","conditions":[{"type":"SuccessCriteriaMet","status":"True"},{"type":"Complete","status":"True"}]}}`},
	{"Job", "batch/v1", `{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"run","namespace":"default",` + cr + `},"spec":{"parallelism":2,"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"w","image":"busybox"}]}}},"status":{"startTime":"AGO(2m)"}}`},
	{"Job", "batch/v1", `{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"failed","namespace":"default",` + cr + `},"spec":{"completions":1,"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"w","image":"busybox"}]}}},"status":{"failed":4,"conditions":[{"type":"FailureTarget","status":"True"},{"type":"Failed","status":"True"}]}}`},
	{"Job", "batch/v1", `{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"susp","namespace":"default",` + cr + `},"spec":{"completions":2,"suspend":true,"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"w","image":"busybox"}]}}},"status":{"conditions":[{"type":"Suspended","status":"True"}]}}`},
	{"Job", "batch/v1", `{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"scm","namespace":"default",` + cr + `},"spec":{"completions":2,"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"w","image":"busybox"}]}}},"status":{"succeeded":2,"conditions":[{"type":"SuccessCriteriaMet","status":"True"}]}}`},
	// DURATION at its edges: start and completion times a clock's skew
	// puts in the future or in the wrong order, none, or days apart.
	job("just-started", `"startTime":"AGO(-1s)"`),
	job("skewed", `"startTime":"AGO(-5s)"`),
	job("backwards", `"startTime":"AGO(10s)","completionTime":"AGO(11s)"`),
	job("way-backwards", `"startTime":"AGO(10s)","completionTime":"AGO(15s)"`),
	job("no-start", `"completionTime":"AGO(1m)","conditions":[{"type":"Complete","status":"True"}]`),
	job("long", `"startTime":"AGO(75h)","completionTime":"AGO(1h)","conditions":[{"type":"Complete","status":"True"}]`),
	job("failed-long-ago", `"startTime":"AGO(50h)","failed":1,"conditions":[{"type":"Failed","status":"True"}]`),
	job("same-second", `"startTime":"AGO(30s)","completionTime":"AGO(30s)","conditions":[{"type":"Complete","status":"True"}]`),

	{"Namespace", "v1", `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"dev",` + cr + `},"status":{"phase":"Terminating"}}`},
	{"Namespace", "v1", `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"default",` + cr + `},"status":{"phase":"Active"}}`},
	{"ConfigMap", "v1", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm","namespace":"default",` + cr + `},"data":{"a":"1","b":"2"},"binaryData":{"c":"eA=="}}`},
	{"ConfigMap", "v1", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"empty","namespace":"default",` + cr + `}}`},
	{"Secret", "v1", `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s","namespace":"default",` + cr + `},"type":"kubernetes.io/tls","data":{"tls.crt":"eA==","tls.key":"eQ=="}}`},
	{"Secret", "v1", `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"o","namespace":"default",` + cr + `},"data":{"a":"eA=="}}`},
	{"Endpoints", "v1", `{"apiVersion":"v1","kind":"Endpoints","metadata":{"name":"web","namespace":"default",` + cr + `},"subsets":[{"addresses":[{"ip":"10.0.0.1"},{"ip":"10.0.0.2"}],"ports":[{"port":80,"protocol":"TCP"},{"port":443,"protocol":"TCP","name":"https"}]}]}`},
	{"Endpoints", "v1", `{"apiVersion":"v1","kind":"Endpoints","metadata":{"name":"h","namespace":"default",` + cr + `},"subsets":[{"addresses":[{"ip":"fd00::1"}]},{"addresses":[{"ip":"10.0.0.3"}],"ports":[{"port":53,"protocol":"UDP"}]}]}`},
	{"Endpoints", "v1", `{"apiVersion":"v1","kind":"Endpoints","metadata":{"name":"none","namespace":"default",` + cr + `}}`},
	{"Endpoints", "v1", `{"apiVersion":"v1","kind":"Endpoints","metadata":{"name":"nr","namespace":"default",` + cr + `},"subsets":[{"notReadyAddresses":[{"ip":"10.0.0.9"}],"ports":[{"port":80,"protocol":"TCP"}]}]}`},
	{"Event", "v1", `{"apiVersion":"v1","kind":"Event","metadata":{"name":"web.1","namespace":"default",` + cr + `},"involvedObject":{"kind":"Pod","name":"web","namespace":"default","fieldPath":"spec.containers{app}"},
		"reason":"BackOff","message":" Back-off restarting \n","type":"Warning","count":4,"source":{"component":"kubelet","host":"n1"},"firstTimestamp":"AGO(10m)","lastTimestamp":"AGO(90s)"}`},
	{"Event", "v1", `{"apiVersion":"v1","kind":"Event","metadata":{"name":"e2","namespace":"default",` + cr + `},"involvedObject":{"kind":"Node","name":""},"reason":"R","type":"Normal",
		"eventTime":"2026-01-01T00:00:00.000000Z","series":{"count":7,"lastObservedTime":"2026-01-01T00:01:00.000000Z"},"reportingComponent":"scheduler","reportingInstance":"s-1","action":"A"}`},
	{"Event", "v1", `{"apiVersion":"v1","kind":"Event","metadata":{"name":"e3","namespace":"default"},"involvedObject":{"kind":"Pod","name":"p"},"reportingComponent":"","reportingInstance":""}`},
	{"Lease", "coordination.k8s.io/v1", `{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"n1","namespace":"kube-node-lease",` + cr + `},"spec":{"holderIdentity":"n1","leaseDurationSeconds":40}}`},
	{"Lease", "coordination.k8s.io/v1", `{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"free","namespace":"kube-system",` + cr + `}}`},
	{"EndpointSlice", "discovery.k8s.io/v1", `{"apiVersion":"discovery.k8s.io/v1","kind":"EndpointSlice","metadata":{"name":"web-x","namespace":"default",` + cr + `},"addressType":"IPv4","ports":[{"port":80},{"name":"dns"},{},{"port":9}],
		"endpoints":[{"addresses":["10.0.0.1"]},{"addresses":["10.0.0.2","10.0.0.3","10.0.0.4"]}]}`},
	{"EndpointSlice", "discovery.k8s.io/v1", `{"apiVersion":"discovery.k8s.io/v1","kind":"EndpointSlice","metadata":{"name":"e","namespace":"default",` + cr + `},"addressType":"IPv6","ports":null,"endpoints":null}`},
	{"CertificateSigningRequest", "certificates.k8s.io/v1", `{"apiVersion":"certificates.k8s.io/v1","kind":"CertificateSigningRequest","metadata":{"name":"csr-1",` + cr + `},"spec":{"signerName":"kubernetes.io/kube-apiserver-client-kubelet","username":"system:node:n1","expirationSeconds":86400,"request":"eA==","usages":["client auth"]},
		"status":{"conditions":[{"type":"Approved","status":"True"}],"certificate":"eA=="}}`},
	{"CertificateSigningRequest", "certificates.k8s.io/v1", `{"apiVersion":"certificates.k8s.io/v1","kind":"CertificateSigningRequest","metadata":{"name":"csr-2",` + cr + `},"spec":{"signerName":"x/y","username":"alice","request":"eA==","expirationSeconds":600},
		"status":{"conditions":[{"type":"Approved","status":"True"},{"type":"Denied","status":"True"},{"type":"Failed","status":"True"}]}}`},
	{"RoleBinding", "rbac.authorization.k8s.io/v1", `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding","metadata":{"name":"rb","namespace":"default",` + cr + `},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"view"},
		"subjects":[{"kind":"User","name":"alice","apiGroup":"rbac.authorization.k8s.io"},{"kind":"User","name":"bob","apiGroup":"rbac.authorization.k8s.io"},{"kind":"Group","name":"devs","apiGroup":"rbac.authorization.k8s.io"},{"kind":"ServiceAccount","namespace":"ns","name":"sa"}]}`},
	{"ClusterRoleBinding", "rbac.authorization.k8s.io/v1", `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRoleBinding","metadata":{"name":"crb",` + cr + `},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"admin"}}`},
	{"Role", "rbac.authorization.k8s.io/v1", `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"Role","metadata":{"name":"r","namespace":"default","creationTimestamp":"2025-12-30T08:09:10Z"}}`},
	{"ClusterRole", "rbac.authorization.k8s.io/v1", `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole","metadata":{"name":"cr","creationTimestamp":"2025-12-30T08:09:10Z"}}`},
}
