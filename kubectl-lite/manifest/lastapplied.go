package manifest

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// LastAppliedAnnotation holds the manifest last applied, the "original" of
// the next three-way merge of apply. create --save-config writes it too,
// and describe and rollout leave it out of what they show or copy.
const LastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

// WithLastApplied returns obj as JSON with the last-applied annotation set
// to obj itself (without that annotation), as kubectl stores it.
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
	delete(ann, LastAppliedAnnotation)
	md["annotations"] = ann
	last, err := json.Marshal(cp)
	if err != nil {
		return nil, fmt.Errorf("encode manifest: %w", err)
	}
	ann[LastAppliedAnnotation] = string(last) + "\n"
	md["annotations"] = ann
	return json.Marshal(cp)
}
