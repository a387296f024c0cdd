package printers_test

// Cases of the kinds served for the real kube-scheduler and
// kube-controller-manager, in the states their columns tell apart.

func obj(kind, apiVersion, body string) tc {
	return tc{kind, apiVersion, `{"apiVersion":"` + apiVersion + `","kind":"` + kind + `",` + body + `}`}
}

const (
	nsMeta    = `"namespace":"default","creationTimestamp":"AGO(26h)"`
	tmpl      = `"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"a","image":"nginx:1.27"},{"name":"b","image":"busybox"}]}}`
	webSelect = `"selector":{"matchLabels":{"app":"web"}}`
)

func init() {
	cases = append(cases,
		obj("StatefulSet", "apps/v1", `"metadata":{"name":"web",`+nsMeta+`},"spec":{"replicas":3,"serviceName":"nginx",`+webSelect+`,`+tmpl+`},"status":{"replicas":3,"readyReplicas":2}`),
		obj("StatefulSet", "apps/v1", `"metadata":{"name":"zero",`+nsMeta+`},"spec":{"replicas":0,"serviceName":"nginx",`+webSelect+`,`+tmpl+`},"status":{"replicas":0}`),
		obj("DaemonSet", "apps/v1", `"metadata":{"name":"agent",`+nsMeta+`},"spec":{`+webSelect+`,"template":{"metadata":{"labels":{"app":"web"}},"spec":{"nodeSelector":{"kubernetes.io/os":"linux"},"containers":[{"name":"a","image":"agent:2"}]}}},"status":{"desiredNumberScheduled":3,"currentNumberScheduled":3,"numberReady":2,"updatedNumberScheduled":1,"numberAvailable":2,"numberMisscheduled":0}`),
		obj("DaemonSet", "apps/v1", `"metadata":{"name":"plain",`+nsMeta+`},"spec":{`+webSelect+`,`+tmpl+`},"status":{"desiredNumberScheduled":0,"currentNumberScheduled":0,"numberReady":0,"numberMisscheduled":0}`),
		obj("ControllerRevision", "apps/v1", `"metadata":{"name":"web-5d4f8","namespace":"default","creationTimestamp":"AGO(3h)","ownerReferences":[{"apiVersion":"apps/v1","kind":"StatefulSet","name":"web","uid":"0a2c6b8e-3a7e-4bd0-9a3e-0b6c1b0e7f10","controller":true}]},"data":{"spec":{}},"revision":2`),
		obj("ControllerRevision", "apps/v1", `"metadata":{"name":"orphan-1","namespace":"default","creationTimestamp":"AGO(3h)"},"revision":1`),
		obj("ReplicationController", "v1", `"metadata":{"name":"rc",`+nsMeta+`},"spec":{"replicas":2,"selector":{"app":"web"},`+tmpl+`},"status":{"replicas":2,"readyReplicas":1}`),
		obj("CronJob", "batch/v1", `"metadata":{"name":"hourly",`+nsMeta+`},"spec":{"schedule":"0 * * * *","timeZone":"Europe/Paris","suspend":false,"jobTemplate":{"spec":{`+tmpl+`}}},"status":{"active":[{"kind":"Job","name":"hourly-1","namespace":"default"}],"lastScheduleTime":"AGO(40m)"}`),
		obj("CronJob", "batch/v1", `"metadata":{"name":"never",`+nsMeta+`},"spec":{"schedule":"@daily","suspend":true,"jobTemplate":{"spec":{"selector":{"matchLabels":{"job":"x"}},`+tmpl+`}}}`),
		obj("PodDisruptionBudget", "policy/v1", `"metadata":{"name":"min",`+nsMeta+`},"spec":{"minAvailable":2,`+webSelect+`},"status":{"disruptionsAllowed":1,"currentHealthy":3,"desiredHealthy":2,"expectedPods":3}`),
		obj("PodDisruptionBudget", "policy/v1", `"metadata":{"name":"max",`+nsMeta+`},"spec":{"maxUnavailable":"25%",`+webSelect+`},"status":{"disruptionsAllowed":0,"currentHealthy":0,"desiredHealthy":0,"expectedPods":0}`),
		obj("HorizontalPodAutoscaler", "autoscaling/v2", `"metadata":{"name":"web",`+nsMeta+`},"spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"},"minReplicas":1,"maxReplicas":10,"metrics":[{"type":"Resource","resource":{"name":"cpu","target":{"type":"Utilization","averageUtilization":80}}},{"type":"Resource","resource":{"name":"memory","target":{"type":"AverageValue","averageValue":"100Mi"}}}]},"status":{"currentReplicas":3,"desiredReplicas":3,"currentMetrics":[{"type":"Resource","resource":{"name":"cpu","current":{"averageUtilization":45,"averageValue":"45m"}}}]}`),
		obj("HorizontalPodAutoscaler", "autoscaling/v2", `"metadata":{"name":"new",`+nsMeta+`},"spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"StatefulSet","name":"db"},"maxReplicas":3},"status":{"currentReplicas":0,"desiredReplicas":0}`),
		obj("PersistentVolume", "v1", `"metadata":{"name":"pv-bound","creationTimestamp":"AGO(26h)"},"spec":{"capacity":{"storage":"10Gi"},"accessModes":["ReadWriteOnce","ReadOnlyMany"],"persistentVolumeReclaimPolicy":"Retain","storageClassName":"fast","volumeMode":"Filesystem","hostPath":{"path":"/data"},"claimRef":{"namespace":"default","name":"data"}},"status":{"phase":"Bound"}`),
		obj("PersistentVolume", "v1", `"metadata":{"name":"pv-failed","creationTimestamp":"AGO(26h)"},"spec":{"capacity":{"storage":"1Gi"},"accessModes":["ReadWriteOncePod"],"persistentVolumeReclaimPolicy":"Delete","volumeMode":"Block","hostPath":{"path":"/x"}},"status":{"phase":"Failed","reason":"Recycle failed"}`),
		obj("PersistentVolumeClaim", "v1", `"metadata":{"name":"data",`+nsMeta+`},"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"5Gi"}},"storageClassName":"fast","volumeName":"pv-bound","volumeMode":"Filesystem"},"status":{"phase":"Bound","accessModes":["ReadWriteOnce"],"capacity":{"storage":"10Gi"}}`),
		obj("PersistentVolumeClaim", "v1", `"metadata":{"name":"pending",`+nsMeta+`},"spec":{"accessModes":["ReadWriteMany"],"resources":{"requests":{"storage":"1Gi"}}},"status":{"phase":"Pending"}`),
		obj("StorageClass", "storage.k8s.io/v1", `"metadata":{"name":"fast","creationTimestamp":"AGO(26h)","annotations":{"storageclass.kubernetes.io/is-default-class":"true"}},"provisioner":"rancher.io/local-path","reclaimPolicy":"Delete","volumeBindingMode":"WaitForFirstConsumer","allowVolumeExpansion":true`),
		obj("StorageClass", "storage.k8s.io/v1", `"metadata":{"name":"slow","creationTimestamp":"AGO(26h)"},"provisioner":"example.com/nfs"`),
		obj("CSINode", "storage.k8s.io/v1", `"metadata":{"name":"n1","creationTimestamp":"AGO(26h)"},"spec":{"drivers":[{"name":"a.csi","nodeID":"n1"},{"name":"b.csi","nodeID":"n1"}]}`),
		obj("CSIDriver", "storage.k8s.io/v1", `"metadata":{"name":"a.csi","creationTimestamp":"AGO(26h)"},"spec":{"attachRequired":true,"podInfoOnMount":true,"storageCapacity":true,"volumeLifecycleModes":["Persistent","Ephemeral"],"tokenRequests":[{"audience":"vault"}],"requiresRepublish":true}`),
		obj("CSIStorageCapacity", "storage.k8s.io/v1", `"metadata":{"name":"cap-1",`+nsMeta+`},"storageClassName":"fast","capacity":"100Gi","maximumVolumeSize":"10Gi"`),
		obj("VolumeAttachment", "storage.k8s.io/v1", `"metadata":{"name":"va-1","creationTimestamp":"AGO(26h)"},"spec":{"attacher":"a.csi","nodeName":"n1","source":{"persistentVolumeName":"pv-bound"}},"status":{"attached":true}`),
		obj("VolumeAttributesClass", "storage.k8s.io/v1", `"metadata":{"name":"gold","creationTimestamp":"AGO(26h)"},"driverName":"a.csi","parameters":{"iops":"1000"}`),
		obj("ServiceAccount", "v1", `"metadata":{"name":"default",`+nsMeta+`},"secrets":[{"name":"a"},{"name":"b"}]`),
		obj("ResourceQuota", "v1", `"metadata":{"name":"quota",`+nsMeta+`},"spec":{"hard":{"pods":"10","requests.cpu":"4","limits.memory":"8Gi"}},"status":{"hard":{"pods":"10","requests.cpu":"4","limits.memory":"8Gi"},"used":{"pods":"3","requests.cpu":"500m","limits.memory":"1Gi"}}`),
		obj("DeviceClass", "resource.k8s.io/v1", `"metadata":{"name":"gpu","creationTimestamp":"AGO(26h)"},"spec":{"selectors":[{"cel":{"expression":"device.driver == 'gpu.example.com'"}}]}`),
		obj("ResourceClaim", "resource.k8s.io/v1", `"metadata":{"name":"claim",`+nsMeta+`},"spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"gpu"}}]}}`),
		obj("ResourceClaimTemplate", "resource.k8s.io/v1", `"metadata":{"name":"tmpl",`+nsMeta+`},"spec":{"spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"gpu"}}]}}}`),
		obj("ResourceSlice", "resource.k8s.io/v1", `"metadata":{"name":"n1-gpu","creationTimestamp":"AGO(26h)"},"spec":{"driver":"gpu.example.com","nodeName":"n1","pool":{"name":"n1","generation":1,"resourceSliceCount":1},"devices":[{"name":"gpu-0"}]}`),
		obj("ServiceCIDR", "networking.k8s.io/v1", `"metadata":{"name":"kubernetes","creationTimestamp":"AGO(26h)"},"spec":{"cidrs":["10.96.0.0/12","fd00::/108"]}`),
		obj("IPAddress", "networking.k8s.io/v1", `"metadata":{"name":"10.96.0.10","creationTimestamp":"AGO(26h)"},"spec":{"parentRef":{"group":"","resource":"services","namespace":"kube-system","name":"cluster-dns"}}`),
		obj("ValidatingAdmissionPolicy", "admissionregistration.k8s.io/v1", `"metadata":{"name":"replicas","creationTimestamp":"AGO(26h)"},"spec":{"paramKind":{"apiVersion":"v1","kind":"ConfigMap"},"matchConstraints":{"resourceRules":[{"apiGroups":["apps"],"apiVersions":["v1"],"operations":["CREATE"],"resources":["deployments"]}]},"validations":[{"expression":"object.spec.replicas <= 5"},{"expression":"true"}]}`),
	)
}
