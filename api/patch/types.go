package patch

import (
	"errors"
	"fmt"
)

// Type is a patch format, named by its HTTP Content-Type.
type Type string

// Patch content types of the Kubernetes API.
const (
	JSONPatchType           Type = "application/json-patch+json"
	MergePatchType          Type = "application/merge-patch+json"
	StrategicMergePatchType Type = "application/strategic-merge-patch+json"
	// ApplyPatchType is server-side apply, which this package does not
	// apply: the apiserver merges it (apiserver/fieldmanager).
	ApplyPatchType Type = "application/apply-patch+yaml"
)

// ErrUnsupportedType: the content type is not a patch format this package
// applies. A server answers 415 Unsupported Media Type.
var ErrUnsupportedType = errors.New("unsupported patch type")

// Apply applies patch to original in format t; schema is used by strategic
// merge patches only.
func Apply(t Type, original, patch []byte, schema Schema) ([]byte, error) {
	switch t {
	case JSONPatchType:
		return JSONPatch(original, patch)
	case MergePatchType:
		return MergePatch(original, patch)
	case StrategicMergePatchType:
		return StrategicMergePatch(original, patch, schema)
	case ApplyPatchType:
		return nil, &patchError{class: ErrUnsupportedType, msg: "server-side apply (application/apply-patch+yaml) is merged by the apiserver, not by this package"}
	}
	return nil, &patchError{class: ErrUnsupportedType, msg: fmt.Sprintf("unsupported patch type %q; supported: %s, %s, %s", string(t), JSONPatchType, MergePatchType, StrategicMergePatchType)}
}
