package openapi

import (
	"encoding/json"
	"fmt"
	"maps"
	"time"
)

// Extension is what the served custom resources add to the documents:
// their OpenAPI v2 paths and definitions, merged into /openapi/v2, and one
// OpenAPI v3 document per group-version they serve, listed in /openapi/v3
// beside the built-in ones.
type Extension struct {
	V2Paths       map[string]json.RawMessage
	V2Definitions map[string]json.RawMessage
	// V3 maps "apis/GROUP/VERSION" to the group-version's document.
	V3 map[string][]byte
}

// SetExtension replaces the documents' extension: the built-in documents
// plus e are served from now on. A group-version of e that the built-in
// kinds serve too is ignored.
func (d *Docs) SetExtension(e Extension) error {
	v3 := maps.Clone(d.baseV3)
	for gv, doc := range e.V3 {
		if _, builtin := v3[gv]; !builtin {
			v3[gv] = newRepresentations(doc, v3ProtoType, v3ToProto)
		}
	}
	index := v3Discovery{Paths: map[string]v3DiscoveryEntry{}}
	for gv, rep := range v3 {
		index.Paths[gv] = v3DiscoveryEntry{ServerRelativeURL: "/openapi/v3/" + gv + "?hash=" + rep.etag}
	}
	indexJSON, err := json.Marshal(index)
	if err != nil {
		return fmt.Errorf("encode openapi v3 discovery: %w", err)
	}
	indexRep := newRepresentations(indexJSON, "", nil)
	d.mu.Lock()
	// The v2 document is one large document: it is merged when next asked for.
	d.v2, d.pendingV2 = nil, &e
	d.v3, d.v3Index, d.modified = v3, indexRep, time.Now()
	d.mu.Unlock()
	return nil
}

// currentV2 returns the v2 document, merging a pending extension in first.
func (d *Docs) currentV2() (*representations, error) {
	d.mu.RLock()
	v2 := d.v2
	d.mu.RUnlock()
	if v2 != nil {
		return v2, nil
	}
	d.v2Build.Lock()
	defer d.v2Build.Unlock()
	d.mu.RLock()
	v2, e := d.v2, d.pendingV2
	d.mu.RUnlock()
	if v2 != nil {
		return v2, nil
	}
	data, err := mergeV2(d.baseV2, e)
	if err != nil {
		return nil, err
	}
	v2 = newRepresentations(data, v2ProtoType, v2ToProto)
	d.mu.Lock()
	if d.pendingV2 == e {
		d.v2 = v2
	}
	d.mu.Unlock()
	return v2, nil
}

// mergeV2 adds an extension's paths and definitions to the built-in v2
// document; the built-in ones win.
func mergeV2(base []byte, e *Extension) ([]byte, error) {
	var v2 map[string]json.RawMessage
	if err := json.Unmarshal(base, &v2); err != nil {
		return nil, fmt.Errorf("read openapi v2: %w", err)
	}
	for _, part := range []struct {
		key   string
		extra map[string]json.RawMessage
	}{{"paths", e.V2Paths}, {"definitions", e.V2Definitions}} {
		if len(part.extra) == 0 {
			continue
		}
		var m map[string]json.RawMessage
		if raw, ok := v2[part.key]; ok {
			if err := json.Unmarshal(raw, &m); err != nil {
				return nil, fmt.Errorf("read openapi v2 %s: %w", part.key, err)
			}
		}
		if m == nil {
			m = map[string]json.RawMessage{}
		}
		for k, v := range part.extra {
			if _, builtin := m[k]; !builtin {
				m[k] = v
			}
		}
		raw, err := json.Marshal(m)
		if err != nil {
			return nil, err
		}
		v2[part.key] = raw
	}
	data, err := json.Marshal(v2)
	if err != nil {
		return nil, fmt.Errorf("encode openapi v2: %w", err)
	}
	return data, nil
}
