package realcomponents

import (
	"net/http"
	"testing"
)

// TestStorageValidationAsKube sends kube-apiserver v1.37 and minik8s the
// same bad (and borderline) storage objects and updates and compares the
// answers: code, message and causes. It covers the claims' and volumes'
// specs (access modes, capacity, volume modes, node affinity, sources),
// their immutable fields, a claim's shrink and its resize against its
// class (the PersistentVolumeClaimResize admission plugin), and the
// StorageClass, CSIDriver, CSINode and VolumeAttachment kinds.
func TestStorageValidationAsKube(t *testing.T) {
	t.Parallel()
	both := startBoth(t)
	const (
		claims      = "/api/v1/namespaces/default/persistentvolumeclaims"
		volumes     = "/api/v1/persistentvolumes"
		classes     = "/apis/storage.k8s.io/v1/storageclasses"
		drivers     = "/apis/storage.k8s.io/v1/csidrivers"
		csinodes    = "/apis/storage.k8s.io/v1/csinodes"
		attachments = "/apis/storage.k8s.io/v1/volumeattachments"
	)
	claim := func(name, spec string) string {
		return `{"metadata":{"name":"` + name + `"},"spec":{` + spec + `}}`
	}
	const rwo = `"accessModes":["ReadWriteOnce"],`
	const gi = `"resources":{"requests":{"storage":"1Gi"}}`
	volume := func(name, spec string) string {
		return `{"metadata":{"name":"` + name + `"},"spec":{` + spec + `}}`
	}
	const hostPath = `"hostPath":{"path":"/tmp/pv"}`
	const capacity = `"capacity":{"storage":"1Gi"},`

	t.Run("claims", func(t *testing.T) {
		// An impossible size is a valid quantity: kube accepts it (no
		// volume will ever match, nothing provisions it).
		both.sameAcceptance(t, http.StatusCreated, "POST", claims, claim("huge", rwo+`"storageClassName":"",`+`"resources":{"requests":{"storage":"10Ei"}}`))
		// A dataSource other than a claim or a snapshot is dropped, as is a
		// dataSourceRef to another namespace; a dataSourceRef fills
		// dataSource.
		both.sameAcceptance(t, http.StatusCreated, "POST", claims, claim("other-source", rwo+`"dataSource":{"kind":"Snapshot","name":"s"},`+gi))
		both.sameAcceptance(t, http.StatusCreated, "POST", claims, claim("cross-namespace", rwo+`"dataSourceRef":{"kind":"PersistentVolumeClaim","name":"x","namespace":"other"},`+gi))
		both.sameAcceptance(t, http.StatusCreated, "POST", claims, claim("populated", rwo+`"dataSourceRef":{"apiGroup":"example.com","kind":"Populator","name":"p"},`+gi))
		both.sameAcceptance(t, http.StatusCreated, "POST", claims, claim("clone", rwo+`"dataSource":{"kind":"PersistentVolumeClaim","name":"huge"},`+gi))
		both.sameAcceptance(t, http.StatusCreated, "POST", claims, claim("fraction", rwo+`"storageClassName":"",`+`"resources":{"requests":{"storage":"1.5"}}`))
		for _, spec := range []string{
			`"accessModes":["ReadWriteAlways"],` + gi,
			`"accessModes":["ReadWriteOncePod","ReadWriteOnce"],` + gi,
			`"accessModes":["ReadWriteOncePod","ReadOnlyMany","Bogus"],` + gi,
			`"accessModes":[],` + gi,
			gi,
			rwo + `"resources":{"requests":{"storage":"0"}}`,
			rwo + `"resources":{"requests":{"storage":"-1Gi"}}`,
			rwo + `"resources":{"requests":{"cpu":"1"}}`,
			rwo + `"resources":{}`,
			rwo + `"storageClassName":"Bad_Class",` + gi,
			rwo + `"volumeMode":"Fast",` + gi,
			rwo + `"selector":{"matchLabels":{"a b":"c"}},` + gi,
			rwo + `"selector":{"matchExpressions":[{"key":"a","operator":"In"}]},` + gi,
			rwo + `"dataSourceRef":{"kind":"","name":""},` + gi,
			rwo + `"dataSourceRef":{"apiGroup":"Bad_Group","kind":"X","name":"x"},` + gi,
			rwo + `"dataSource":{"kind":"PersistentVolumeClaim","name":"a"},"dataSourceRef":{"kind":"PersistentVolumeClaim","name":"b"},` + gi,
			rwo + `"volumeAttributesClassName":"Bad_VAC",` + gi,
		} {
			both.sameRefusal(t, "POST", claims, claim("bad", spec))
		}
	})

	t.Run("volumes", func(t *testing.T) {
		for _, spec := range []string{
			rwo + hostPath,
			rwo + `"capacity":{"storage":"1Gi","cpu":"1"},` + hostPath,
			rwo + `"capacity":{"storage":"-1Gi"},` + hostPath,
			rwo + `"capacity":{"storage":"0"},` + hostPath,
			capacity + hostPath,
			capacity + `"accessModes":["ReadWriteOncePod","ReadWriteMany"],` + hostPath,
			capacity + `"accessModes":["Sometimes"],` + hostPath,
			capacity + rwo + `"volumeMode":"Fast",` + hostPath,
			capacity + rwo + `"persistentVolumeReclaimPolicy":"Keep",` + hostPath,
			capacity + rwo + `"persistentVolumeReclaimPolicy":"Recycle","hostPath":{"path":"/"}`,
			capacity + rwo + `"hostPath":{"path":"/a/../b"}`,
			capacity + rwo + `"hostPath":{"path":""}`,
			capacity + rwo + `"hostPath":{"path":"/a","type":"Weird"}`,
			capacity + rwo,
			capacity + rwo + hostPath + `,"local":{"path":"/mnt/disk"}`,
			capacity + rwo + `"local":{"path":"/mnt/disk"}`,
			capacity + rwo + `"local":{"path":"/mnt/../etc"},"nodeAffinity":{"required":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"kubernetes.io/hostname","operator":"In","values":["n1"]}]}]}}`,
			capacity + rwo + `"local":{"path":"/mnt/disk"},"nodeAffinity":{"required":{"nodeSelectorTerms":[]}}`,
			capacity + rwo + `"local":{"path":"/mnt/disk"},"nodeAffinity":{}`,
			capacity + rwo + hostPath + `,"nodeAffinity":{"required":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"kubernetes.io/hostname","operator":"In"}]}]}}`,
			capacity + rwo + hostPath + `,"nodeAffinity":{"required":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"a","operator":"Near","values":["x"]}]}]}}`,
			capacity + rwo + hostPath + `,"storageClassName":"Bad_Class"`,
			capacity + rwo + `"csi":{"driver":"","volumeHandle":""}`,
			capacity + rwo + `"csi":{"driver":"bad_driver!","volumeHandle":"h"}`,
			capacity + rwo + hostPath + `,"volumeAttributesClassName":"gold"`,
			capacity + rwo + `"nfs":{"server":"","path":"rel"}`,
		} {
			both.sameRefusal(t, "POST", volumes, volume("bad", spec))
		}
		both.sameRefusal(t, "POST", volumes, volume("Bad_Name", capacity+rwo+hostPath))
		// An empty node selector term, and a relative local path, are
		// kube's to accept.
		both.sameAcceptance(t, http.StatusCreated, "POST", volumes, volume("empty-term", capacity+rwo+hostPath+`,"nodeAffinity":{"required":{"nodeSelectorTerms":[{}]}}`))
		both.sameAcceptance(t, http.StatusCreated, "POST", volumes, volume("relative", capacity+rwo+`"local":{"path":"relative"},`+
			`"nodeAffinity":{"required":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"kubernetes.io/hostname","operator":"In","values":["n1"]}]}]}}`))
	})

	t.Run("classes", func(t *testing.T) {
		for _, body := range []string{
			`{"metadata":{"name":"bad"}}`,
			`{"metadata":{"name":"bad"},"provisioner":"Bad Provisioner!"}`,
			`{"metadata":{"name":"bad"},"provisioner":"example.com/disk","reclaimPolicy":"Keep"}`,
			`{"metadata":{"name":"bad"},"provisioner":"example.com/disk","reclaimPolicy":"Recycle"}`,
			`{"metadata":{"name":"bad"},"provisioner":"example.com/disk","volumeBindingMode":"Later"}`,
			`{"metadata":{"name":"bad"},"provisioner":"example.com/disk","allowedTopologies":[{}]}`,
			`{"metadata":{"name":"bad"},"provisioner":"example.com/disk","allowedTopologies":[{"matchLabelExpressions":[{"key":"zone","values":[]}]}]}`,
			`{"metadata":{"name":"bad"},"provisioner":"example.com/disk","allowedTopologies":[{"matchLabelExpressions":[{"key":"bad key","values":["a","a"]}]}]}`,
			`{"metadata":{"name":"bad"},"provisioner":"example.com/disk","parameters":{"":"x"}}`,
		} {
			both.sameRefusal(t, "POST", classes, body)
		}
		both.must(t, http.StatusCreated, "POST", classes, `{"metadata":{"name":"fixed"},"provisioner":"example.com/disk","parameters":{"type":"ssd"},
			"reclaimPolicy":"Retain","volumeBindingMode":"Immediate"}`)
		for _, patch := range []string{
			`{"provisioner":"example.com/other"}`,
			`{"parameters":{"type":"hdd"}}`,
			`{"reclaimPolicy":"Delete"}`,
			`{"volumeBindingMode":"WaitForFirstConsumer"}`,
		} {
			both.sameRefusal(t, "PATCH", classes+"/fixed", patch)
		}
		both.sameAcceptance(t, http.StatusOK, "PATCH", classes+"/fixed", `{"allowVolumeExpansion":true,"mountOptions":["ro"]}`)
	})

	t.Run("updates", func(t *testing.T) {
		both.must(t, http.StatusCreated, "POST", classes, `{"metadata":{"name":"fixed-size"},"provisioner":"example.com/disk"}`)
		both.must(t, http.StatusCreated, "POST", classes, `{"metadata":{"name":"growable"},"provisioner":"example.com/disk","allowVolumeExpansion":true}`)
		both.must(t, http.StatusCreated, "POST", claims, claim("pending", rwo+`"storageClassName":"growable",`+gi))
		both.must(t, http.StatusCreated, "POST", claims, claim("bound", rwo+`"storageClassName":"fixed-size",`+`"resources":{"requests":{"storage":"2Gi"}}`))
		both.must(t, http.StatusCreated, "POST", claims, claim("grows", rwo+`"storageClassName":"growable",`+`"resources":{"requests":{"storage":"2Gi"}}`))
		both.must(t, http.StatusCreated, "POST", claims, claim("no-class", rwo+`"storageClassName":"",`+`"resources":{"requests":{"storage":"2Gi"}}`))
		for _, name := range []string{"bound", "grows", "no-class"} {
			both.must(t, http.StatusOK, "PATCH", claims+"/"+name, `{"spec":{"volumeName":"pv-`+name+`"}}`)
			both.must(t, http.StatusOK, "PATCH", claims+"/"+name+"/status", `{"status":{"phase":"Bound","accessModes":["ReadWriteOnce"],"capacity":{"storage":"2Gi"}}}`)
		}
		for _, c := range []struct{ name, patch string }{
			{"pending", `{"spec":{"accessModes":["ReadWriteMany"]}}`},
			{"pending", `{"spec":{"resources":{"requests":{"storage":"2Gi"}}}}`},
			{"pending", `{"spec":{"storageClassName":"fixed-size"}}`},
			{"pending", `{"spec":{"volumeMode":"Block"}}`},
			{"bound", `{"spec":{"accessModes":["ReadWriteMany"]}}`},
			{"bound", `{"spec":{"volumeName":"other"}}`},
			{"bound", `{"spec":{"storageClassName":"growable"}}`},
			{"bound", `{"spec":{"resources":{"requests":{"storage":"1Gi"}}}}`},
			{"bound", `{"spec":{"resources":{"requests":{"storage":"3Gi"}}}}`},
			{"no-class", `{"spec":{"resources":{"requests":{"storage":"3Gi"}}}}`},
			{"grows", `{"spec":{"resources":{"requests":{"storage":"1Gi"}}}}`},
			{"grows", `{"spec":{"selector":{"matchLabels":{"a":"b"}}}}`},
		} {
			both.sameRefusal(t, "PATCH", claims+"/"+c.name, c.patch)
		}
		both.sameAcceptance(t, http.StatusOK, "PATCH", claims+"/grows", `{"spec":{"resources":{"requests":{"storage":"3Gi"}}}}`)
		both.sameAcceptance(t, http.StatusOK, "PATCH", claims+"/pending", `{"spec":{"volumeName":"pv-late"}}`)

		both.must(t, http.StatusCreated, "POST", volumes, volume("pv-host", capacity+rwo+hostPath+`,"storageClassName":"fixed-size","volumeMode":"Filesystem",
			"nodeAffinity":{"required":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"kubernetes.io/hostname","operator":"In","values":["n1"]}]}]}}`))
		for _, patch := range []string{
			`{"spec":{"hostPath":{"path":"/tmp/other"}}}`,
			`{"spec":{"volumeMode":"Block"}}`,
			`{"spec":{"accessModes":["Bogus"]}}`,
			`{"spec":{"nodeAffinity":{"required":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"kubernetes.io/hostname","operator":"In","values":["n2"]}]}]}}}}`,
		} {
			both.sameRefusal(t, "PATCH", volumes+"/pv-host", patch)
		}
		both.sameAcceptance(t, http.StatusOK, "PATCH", volumes+"/pv-host", `{"spec":{"capacity":{"storage":"5Gi"},"accessModes":["ReadWriteMany"],"persistentVolumeReclaimPolicy":"Delete","storageClassName":"growable"}}`)
	})

	t.Run("statefulsets", func(t *testing.T) {
		sts := func(extra, claimSpec string) string {
			return `{"metadata":{"name":"db"},"spec":{"selector":{"matchLabels":{"app":"db"}},"serviceName":"db",` + extra +
				`"template":{"metadata":{"labels":{"app":"db"}},"spec":{"containers":[{"name":"db","image":"busybox","volumeMounts":[{"name":"data","mountPath":"/data"}]}]}},` +
				`"volumeClaimTemplates":[{"metadata":{"name":"data"},"spec":{` + claimSpec + `}}]}}`
		}
		const statefulsets = "/apis/apps/v1/namespaces/default/statefulsets"
		for _, body := range []string{
			sts("", `"accessModes":["Sometimes"],"volumeMode":"Fast"`),
			sts("", `"accessModes":["ReadWriteOncePod","ReadWriteOnce"],"resources":{"requests":{"storage":"0"}}`),
			sts(`"persistentVolumeClaimRetentionPolicy":{"whenDeleted":"Keep","whenScaled":"Delete"},`, rwo+gi),
		} {
			both.sameRefusal(t, "POST", statefulsets, body)
		}
	})

	t.Run("csi", func(t *testing.T) {
		for _, c := range []struct{ path, body string }{
			{drivers, `{"metadata":{"name":"Bad_Driver"},"spec":{}}`},
			{drivers, `{"metadata":{"name":"disk.example.com"},"spec":{"volumeLifecycleModes":["Forever"],"fsGroupPolicy":"Sometimes"}}`},
			{drivers, `{"metadata":{"name":"disk.example.com"},"spec":{"tokenRequests":[{"audience":"a"},{"audience":"a","expirationSeconds":60}]}}`},
			{csinodes, `{"metadata":{"name":"n1"},"spec":{"drivers":[{"name":"","nodeID":""},{"name":"bad_driver!","nodeID":"x","topologyKeys":["bad key"]}]}}`},
			{csinodes, `{"metadata":{"name":"n1"},"spec":{"drivers":[{"name":"disk.example.com","nodeID":"a"},{"name":"disk.example.com","nodeID":"b","allocatable":{"count":-1}}]}}`},
			{attachments, `{"metadata":{"name":"va"},"spec":{"attacher":"","source":{},"nodeName":""}}`},
			{attachments, `{"metadata":{"name":"va"},"spec":{"attacher":"disk.example.com","source":{"persistentVolumeName":"pv","inlineVolumeSpec":{}},"nodeName":"n1"}}`},
			{attachments, `{"metadata":{"name":"va"},"spec":{"attacher":"bad_attacher!","source":{"persistentVolumeName":""},"nodeName":"n1"}}`},
		} {
			both.sameRefusal(t, "POST", c.path, c.body)
		}
		both.must(t, http.StatusCreated, "POST", drivers, `{"metadata":{"name":"disk.example.com"},"spec":{"attachRequired":true,"podInfoOnMount":false}}`)
		both.sameRefusal(t, "PATCH", drivers+"/disk.example.com", `{"spec":{"attachRequired":false}}`)
		both.must(t, http.StatusCreated, "POST", attachments, `{"metadata":{"name":"va"},"spec":{"attacher":"disk.example.com","source":{"persistentVolumeName":"pv"},"nodeName":"n1"}}`)
		both.sameRefusal(t, "PATCH", attachments+"/va", `{"spec":{"nodeName":"n2"}}`)
		both.must(t, http.StatusCreated, "POST", csinodes, `{"metadata":{"name":"n1"},"spec":{"drivers":[{"name":"disk.example.com","nodeID":"a","topologyKeys":["zone"]}]}}`)
		both.sameRefusal(t, "PATCH", csinodes+"/n1", `{"spec":{"drivers":[{"name":"disk.example.com","nodeID":"b","topologyKeys":["zone"]}]}}`)
	})

	t.Run("volumeattributesclasses", func(t *testing.T) {
		const vacs = "/apis/storage.k8s.io/v1/volumeattributesclasses"
		for _, body := range []string{
			`{"metadata":{"name":"bad"},"driverName":"example.com/disk"}`,
			`{"metadata":{"name":"bad"},"driverName":"example.com/disk","parameters":{}}`,
			`{"metadata":{"name":"bad"},"parameters":{"iops":"100"}}`,
			`{"metadata":{"name":"bad"},"driverName":"Bad Driver!","parameters":{"":"x"}}`,
			`{"metadata":{"name":"Bad_Name"},"driverName":"example.com/disk","parameters":{"iops":"100"}}`,
		} {
			both.sameRefusal(t, "POST", vacs, body)
		}
		both.must(t, http.StatusCreated, "POST", vacs, `{"metadata":{"name":"gold"},"driverName":"example.com/disk","parameters":{"iops":"100"}}`)
		for _, patch := range []string{
			`{"driverName":"example.com/other"}`,
			`{"parameters":{"iops":"200"}}`,
			`{"driverName":"example.com/other","parameters":null}`,
		} {
			both.sameRefusal(t, "PATCH", vacs+"/gold", patch)
		}
		both.sameAcceptance(t, http.StatusOK, "PATCH", vacs+"/gold", `{"metadata":{"labels":{"tier":"gold"}}}`)
	})
}
