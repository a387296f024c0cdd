package realcomponents

import (
	"net/http"
	"testing"
)

// TestStatusJSONPatchAsKube sends the conformance CRUD specs' JSON patches
// of a fresh object's status ('[sig-node] [DRA] CRUD Tests
// resource.k8s.io/v1 ResourceClaim', '[sig-api-machinery]
// StorageVersionMigration CRUD Tests') to the real kube-apiserver v1.37
// and to minik8s' apiserver: an "add" below /status needs the empty
// status object kube writes for a new object, so both accept it and
// answer and store the same object.
func TestStatusJSONPatchAsKube(t *testing.T) {
	t.Parallel()
	both := startBoth(t)

	t.Run("ResourceClaim", func(t *testing.T) {
		const claims = "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims"
		both.sameAcceptance(t, http.StatusCreated, "POST", claims,
			`{"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":"claim"},
"spec":{"devices":{"requests":[{"name":"req-0","exactly":{"deviceClassName":"dra.example.com"}}]}}}`)
		both.sameAcceptance(t, http.StatusOK, "PATCH", claims+"/claim/status?fieldValidation=Strict",
			`[{"op": "add", "path": "/status/allocation", "value": {}}]`, claims+"/claim")
		// Requests get kube's defaults (allocationMode ExactCount, count 1),
		// also each of firstAvailable and in a template's claim.
		both.sameAcceptance(t, http.StatusCreated, "POST", claims,
			`{"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":"first-available"},
"spec":{"devices":{"requests":[{"name":"req-0","firstAvailable":[{"name":"a","deviceClassName":"a.example.com","allocationMode":"All"},{"name":"b","deviceClassName":"b.example.com"}]},
{"name":"req-1","exactly":{"deviceClassName":"dra.example.com","count":3}}]}}}`)
		both.sameAcceptance(t, http.StatusCreated, "POST", "/apis/resource.k8s.io/v1/namespaces/default/resourceclaimtemplates",
			`{"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaimTemplate","metadata":{"name":"template"},
"spec":{"spec":{"devices":{"requests":[{"name":"req-0","exactly":{"deviceClassName":"dra.example.com"}}]}}}}`)
	})

	t.Run("StorageVersionMigration", func(t *testing.T) {
		const migrations = "/apis/storagemigration.k8s.io/v1/storageversionmigrations"
		both.sameAcceptance(t, http.StatusCreated, "POST", migrations,
			`{"apiVersion":"storagemigration.k8s.io/v1","kind":"StorageVersionMigration","metadata":{"name":"migration"},
"spec":{"resource":{"group":"","resource":"foo"}}}`)
		both.sameAcceptance(t, http.StatusOK, "PATCH", migrations+"/migration/status?fieldValidation=Strict",
			`[{"op": "add", "path": "/status/conditions", "value": [{"type": "TestCondition", "status": "True", "reason": "TestReason", "message": "TestMessage", "lastTransitionTime": "2026-01-01T00:00:00Z"}]}]`,
			migrations+"/migration")
	})
}
