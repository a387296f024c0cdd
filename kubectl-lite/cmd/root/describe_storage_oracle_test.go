package root_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/oracle"
)

// storageObjects are volumes of the three sources a minik8s cluster uses
// (hostPath, local, CSI) and NFS, a bound claim used by pods and a pending
// one, and classes with and without their optional fields.
const storageObjects = `apiVersion: v1
kind: Namespace
metadata: {name: dsc-st}
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: fast, labels: {tier: gold}, annotations: {storageclass.kubernetes.io/is-default-class: "true", note: ssd}}
provisioner: example.com/disk
parameters: {type: ssd, iops: "3000"}
reclaimPolicy: Retain
volumeBindingMode: WaitForFirstConsumer
allowVolumeExpansion: true
mountOptions: [noatime, "nfsvers=4.1"]
allowedTopologies:
- matchLabelExpressions:
  - {key: topology.kubernetes.io/zone, values: [zone-a, zone-b]}
  - {key: kubernetes.io/arch, values: [amd64]}
- matchLabelExpressions:
  - {key: topology.kubernetes.io/zone, values: [zone-c]}
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: plain}
provisioner: rancher.io/local-path
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv-host, labels: {disk: host}, annotations: {pv.kubernetes.io/bound-by-controller: "yes"}}
spec:
  capacity: {storage: 2Gi}
  accessModes: [ReadWriteOnce, ReadOnlyMany, ReadWriteOnce]
  persistentVolumeReclaimPolicy: Delete
  storageClassName: fast
  hostPath: {path: /var/lib/minik8s/storage/pv-host, type: DirectoryOrCreate}
  claimRef: {namespace: dsc-st, name: data}
  nodeAffinity:
    required:
      nodeSelectorTerms:
      - matchExpressions:
        - {key: kubernetes.io/hostname, operator: In, values: [node-1, node-2]}
        - {key: disk, operator: Exists}
      - matchExpressions:
        - {key: kubernetes.io/hostname, operator: NotIn, values: [node-3]}
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv-local}
spec:
  capacity: {storage: 500Mi}
  accessModes: [ReadWriteOncePod]
  volumeMode: Block
  local: {path: /mnt/disks/ssd1}
  nodeAffinity:
    required:
      nodeSelectorTerms:
      - matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [node-1]}]
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv-csi}
spec:
  capacity: {storage: 10Gi}
  accessModes: [ReadWriteMany]
  storageClassName: plain
  csi:
    driver: disk.example.com
    volumeHandle: vol-0123
    fsType: ext4
    readOnly: true
    volumeAttributes: {zone: zone-a, storage.kubernetes.io/csiProvisionerIdentity: 1700000000000-8081-disk.example.com}
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv-nfs}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteMany]
  nfs: {server: nfs.example.com, path: /exports/a}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data, namespace: dsc-st, labels: {app: db}, annotations: {pv.kubernetes.io/bind-completed: "yes"}}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: fast
  volumeName: pv-host
  resources: {requests: {storage: 1Gi}}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: waiting, namespace: dsc-st}
spec:
  accessModes: [ReadWriteOncePod]
  volumeMode: Block
  resources: {requests: {storage: 5Gi}}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: clone, namespace: dsc-st}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: ""
  dataSource: {kind: PersistentVolumeClaim, name: data}
  resources: {requests: {storage: 1Gi}}
---
apiVersion: v1
kind: Pod
metadata: {name: db-1, namespace: dsc-st}
spec:
  containers: [{name: db, image: busybox}]
  volumes: [{name: data, persistentVolumeClaim: {claimName: data}}]
---
apiVersion: v1
kind: Pod
metadata: {name: db-0, namespace: dsc-st}
spec:
  containers: [{name: db, image: busybox}]
  volumes: [{name: data, persistentVolumeClaim: {claimName: data, readOnly: true}}, {name: scratch, emptyDir: {}}]
---
apiVersion: v1
kind: Pod
metadata: {name: other, namespace: dsc-st}
spec:
  containers: [{name: c, image: busybox}]
`

// TestIntegrationDescribeStorageOracle describes volumes, claims and
// classes with kubectl-lite and the real kubectl v1.37 against the same
// objects and events: the outputs are identical byte for byte. It also
// lists them with get (the server's tables, printed by both).
func TestIntegrationDescribeStorageOracle(t *testing.T) {
	oracle.Path(t, "kubectl")
	c := startCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c.mustRun(storageObjects, "create", "-f", "-")

	now := time.Now().UTC()
	ago := func(d time.Duration) string { return now.Add(-d).Format(time.RFC3339) }
	status := func(resource, ns, name, body string) {
		t.Helper()
		info, ok := api.FindResource(resource)
		if !ok {
			t.Fatalf("no resource %s", resource)
		}
		if _, err := c.client.Dynamic(info).Namespace(ns).Patch(ctx, name, client.MergePatchType, []byte(body), "status"); err != nil {
			t.Fatalf("status of %s %s: %v", resource, name, err)
		}
	}
	status("persistentvolumes", "", "pv-host", `{"status":{"phase":"Bound"}}`)
	status("persistentvolumes", "", "pv-local", `{"status":{"phase":"Available"}}`)
	status("persistentvolumes", "", "pv-csi", `{"status":{"phase":"Failed","message":"the volume is gone","reason":"VolumeFailedDelete"}}`)
	status("persistentvolumeclaims", "dsc-st", "data", `{"status":{"phase":"Bound","accessModes":["ReadWriteOnce","ReadOnlyMany"],"capacity":{"storage":"2Gi"},`+
		`"conditions":[{"type":"Resizing","status":"True","lastTransitionTime":"`+ago(time.Hour)+`","reason":"Grow","message":"growing"}]}}`)

	evs := client.Resource[api.Event](c.client)
	for i, e := range []struct {
		kind, resource, ns, name, typ, reason, msg, from string
		count                                            int32
	}{
		{"PersistentVolumeClaim", "persistentvolumeclaims", "dsc-st", "waiting", "Normal", "WaitForFirstConsumer", "waiting for first consumer to be created before binding", "persistentvolume-controller", 1},
		{"PersistentVolumeClaim", "persistentvolumeclaims", "dsc-st", "waiting", "Warning", "ProvisioningFailed", `storageclass.storage.k8s.io "x" not found`, "persistentvolume-controller", 4},
		{"PersistentVolumeClaim", "persistentvolumeclaims", "dsc-st", "data", "Normal", "ProvisioningSucceeded", "Successfully provisioned volume pv-host", "rancher.io/local-path", 1},
		{"PersistentVolume", "persistentvolumes", "default", "pv-csi", "Warning", "VolumeFailedDelete", "the volume is gone", "persistentvolume-controller", 1},
	} {
		info, _ := api.FindResource(e.resource)
		ns := e.ns
		if e.kind == "PersistentVolume" {
			ns = ""
		}
		u, err := c.client.Dynamic(info).Namespace(ns).Get(ctx, e.name)
		if err != nil {
			t.Fatalf("%s %s: %v", e.resource, e.name, err)
		}
		uid, _ := u.Object["metadata"].(map[string]any)["uid"].(string)
		first := now.Add(-time.Duration(3+i) * time.Hour)
		last := first
		if e.count > 1 {
			last = now.Add(-2 * time.Hour)
		}
		if _, err := evs.Namespace(e.ns).Create(ctx, &api.Event{
			ObjectMeta:     api.ObjectMeta{Name: fmt.Sprintf("%s.%d", e.name, i)},
			InvolvedObject: api.ObjectReference{Kind: e.kind, Namespace: ns, Name: e.name, UID: api.UID(uid)},
			Type:           e.typ, Reason: e.reason, Message: e.msg, Count: e.count,
			Source:         api.EventSource{Component: e.from},
			FirstTimestamp: api.Time{Time: first}, LastTimestamp: api.Time{Time: last},
		}); err != nil {
			t.Fatal(err)
		}
	}

	for _, args := range []string{
		"describe pv pv-host",
		"describe pv pv-local",
		"describe pv pv-csi",
		"describe pv pv-nfs --show-events=false",
		"describe pvc data",
		"describe pvc waiting",
		"describe pvc clone",
		"describe sc fast",
		"describe storageclass plain",
		"describe pv",
		"describe pvc --show-events=true",
		"describe sc",
		"get pv,pvc,sc",
		"get pv -o wide",
		"get pvc -o wide --show-labels",
		"get sc fast plain",
	} {
		t.Run(strings.ReplaceAll(args, " ", "-"), func(t *testing.T) {
			full := append([]string{"-n", "dsc-st"}, strings.Fields(args)...)
			want, wantErr, wantCode := c.kubectl(full...)
			got, gotErr, gotCode := c.run("", full...)
			if strings.HasPrefix(args, "get") {
				// Ages of objects made during the test.
				got, want = maskVolatile(got), maskVolatile(want)
			}
			if got != want {
				t.Errorf("kubectl-lite %s differs from kubectl:\n--- kubectl-lite\n%s\n--- kubectl\n%s", args, got, want)
			}
			if gotErr != wantErr || gotCode != wantCode {
				t.Errorf("kubectl-lite %s: exit %d, stderr %q; kubectl: exit %d, stderr %q", args, gotCode, gotErr, wantCode, wantErr)
			}
		})
	}
}
