package admission

import (
	"fmt"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
)

// KeepServerFields is what kube-apiserver checks and keeps after a
// mutating webhook or policy changed an object: it refuses a mutation
// that moves the object to another namespace or name, and gives after
// what the server set before admission (uid, creation time, generation,
// resourceVersion, deletion), which kube sets after it.
func KeepServerFields(before, after *api.ObjectMeta) error {
	if after.Namespace != before.Namespace {
		return apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
	if after.Name != before.Name {
		return apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", after.Name, before.Name))
	}
	after.UID, after.CreationTimestamp = before.UID, before.CreationTimestamp
	after.Generation, after.ResourceVersion = before.Generation, before.ResourceVersion
	after.DeletionTimestamp, after.DeletionGracePeriodSeconds = before.DeletionTimestamp, before.DeletionGracePeriodSeconds
	return nil
}
