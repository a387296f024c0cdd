package manifest

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/minik8s/minik8s/api"
)

// WithLastApplied returns obj as JSON with its last-applied annotation
// (api.LastAppliedConfigAnnotation, the "original" of apply's next
// three-way merge) set to obj itself without that annotation, as kubectl
// apply and create --save-config store it.
func WithLastApplied(obj map[string]any) ([]byte, error) {
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("encode manifest: %w", err)
	}
	var cp map[string]any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&cp); err != nil {
		return nil, fmt.Errorf("copy manifest: %w", err)
	}
	md, _ := cp["metadata"].(map[string]any)
	if md == nil {
		md = map[string]any{}
		cp["metadata"] = md
	}
	// kubectl records the manifest with an (often empty) annotations map:
	// the same bytes here keep the two tools' applies interchangeable.
	ann, _ := md["annotations"].(map[string]any)
	if ann == nil {
		ann = map[string]any{}
	}
	delete(ann, api.LastAppliedConfigAnnotation)
	md["annotations"] = ann
	last, err := json.Marshal(cp)
	if err != nil {
		return nil, fmt.Errorf("encode manifest: %w", err)
	}
	ann[api.LastAppliedConfigAnnotation] = string(last) + "\n"
	md["annotations"] = ann
	return json.Marshal(cp)
}
