package realcomponents

import (
	"encoding/json"
	"net/http"
	"reflect"
	"testing"
)

// TestStorageTablesAsKube: kube-apiserver v1.37 and minik8s print the same
// tables (what kubectl get shows) for the same volumes, claims and
// classes: the column definitions, wide ones included, and every row's
// cells but for the age, which depends on when each server made the
// object. The default class is marked in the list, not in a GET of it.
func TestStorageTablesAsKube(t *testing.T) {
	t.Parallel()
	both := startBoth(t)
	const (
		claims  = "/api/v1/namespaces/default/persistentvolumeclaims"
		volumes = "/api/v1/persistentvolumes"
		classes = "/apis/storage.k8s.io/v1/storageclasses"
		vacs    = "/apis/storage.k8s.io/v1/volumeattributesclasses"
	)
	for _, c := range []struct{ path, body string }{
		{classes, `{"metadata":{"name":"fast"},"provisioner":"example.com/disk","reclaimPolicy":"Retain","volumeBindingMode":"WaitForFirstConsumer","allowVolumeExpansion":true}`},
		{classes, `{"metadata":{"name":"plain","annotations":{"storageclass.kubernetes.io/is-default-class":"true"}},"provisioner":"rancher.io/local-path"}`},
		{vacs, `{"metadata":{"name":"gold"},"driverName":"disk.example.com","parameters":{"iops":"100"}}`},
		{volumes, `{"metadata":{"name":"pv-host"},"spec":{"capacity":{"storage":"2Gi"},"accessModes":["ReadWriteOnce","ReadOnlyMany"],"storageClassName":"fast",
			"hostPath":{"path":"/tmp/pv-host"},"claimRef":{"namespace":"default","name":"data"}}}`},
		{volumes, `{"metadata":{"name":"pv-block"},"spec":{"capacity":{"storage":"500Mi"},"accessModes":["ReadWriteOncePod"],"volumeMode":"Block",
			"persistentVolumeReclaimPolicy":"Delete","local":{"path":"/mnt/disk"},
			"nodeAffinity":{"required":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"kubernetes.io/hostname","operator":"In","values":["n1"]}]}]}}}}`},
		{volumes, `{"metadata":{"name":"pv-csi"},"spec":{"capacity":{"storage":"10Gi"},"accessModes":["ReadWriteMany"],"volumeAttributesClassName":"gold",
			"csi":{"driver":"disk.example.com","volumeHandle":"vol-1"}}}`},
		{claims, `{"metadata":{"name":"data"},"spec":{"accessModes":["ReadWriteOnce"],"storageClassName":"fast","volumeName":"pv-host","resources":{"requests":{"storage":"1Gi"}}}}`},
		{claims, `{"metadata":{"name":"waiting"},"spec":{"accessModes":["ReadWriteOncePod"],"volumeMode":"Block","volumeAttributesClassName":"gold","resources":{"requests":{"storage":"5Gi"}}}}`},
	} {
		both.must(t, http.StatusCreated, "POST", c.path, c.body)
	}
	both.must(t, http.StatusOK, "PATCH", volumes+"/pv-host/status", `{"status":{"phase":"Bound"}}`)
	both.must(t, http.StatusOK, "PATCH", volumes+"/pv-csi/status", `{"status":{"phase":"Failed","reason":"VolumeFailedDelete","message":"gone"}}`)
	both.must(t, http.StatusOK, "PATCH", claims+"/data/status", `{"status":{"phase":"Bound","accessModes":["ReadWriteOnce","ReadOnlyMany"],"capacity":{"storage":"2Gi"}}}`)
	both.must(t, http.StatusOK, "PATCH", claims+"/waiting/status", `{"status":{"currentVolumeAttributesClassName":"gold"}}`)

	const accept = "application/json;as=Table;v=v1;g=meta.k8s.io"
	for _, path := range []string{volumes, claims, classes, vacs, volumes + "/pv-csi", claims + "/waiting", classes + "/plain"} {
		var tables [2]map[string]any
		for i, e := range both.each() {
			code, _, body := getWith(t, e, path, accept, "")
			if code != http.StatusOK {
				t.Fatalf("%s: GET %s as a Table: %d %s", e.name, path, code, body)
			}
			if err := json.Unmarshal(body, &tables[i]); err != nil {
				t.Fatalf("%s: %v", e.name, err)
			}
		}
		kube, ours := tableShape(tables[0]), tableShape(tables[1])
		if !reflect.DeepEqual(kube, ours) {
			kj, _ := json.MarshalIndent(kube, "", "  ")
			oj, _ := json.MarshalIndent(ours, "", "  ")
			t.Errorf("GET %s as a Table:\nkube-apiserver: %s\nminik8s:        %s", path, kj, oj)
		}
	}
}

// tableShape is a Table's column definitions and its rows' cells, the
// Age column's blanked.
func tableShape(table map[string]any) map[string]any {
	cols, _ := table["columnDefinitions"].([]any)
	age := -1
	for i, c := range cols {
		if c.(map[string]any)["name"] == "Age" {
			age = i
		}
	}
	var rows []any
	for _, r := range table["rows"].([]any) {
		cells := r.(map[string]any)["cells"].([]any)
		if age >= 0 && age < len(cells) {
			cells[age] = "<age>"
		}
		rows = append(rows, cells)
	}
	return map[string]any{"columns": cols, "rows": rows}
}
