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
// plus e are served from now on, merged when next asked for. A
// group-version of e that the built-in kinds serve too is ignored.
func (d *Docs) SetExtension(e Extension) error {
	d.mu.Lock()
	d.ext = &e
	d.v2, d.v3, d.v3Index = nil, nil, nil
	d.modified = time.Now()
	d.mu.Unlock()
	return nil
}

// currentV2 returns the v2 document, merging the extension in first.
func (d *Docs) currentV2() (*representations, error) {
	if err := d.base(); err != nil {
		return nil, err
	}
	d.mu.RLock()
	v2 := d.v2
	d.mu.RUnlock()
	if v2 != nil {
		return v2, nil
	}
	d.v2Build.Lock()
	defer d.v2Build.Unlock()
	d.mu.RLock()
	v2, e := d.v2, d.ext
	d.mu.RUnlock()
	if v2 != nil {
		return v2, nil
	}
	v2 = d.baseV2
	if e != nil {
		base, err := d.baseV2.json.plain()
		if err != nil {
			return nil, err
		}
		data, err := mergeV2(base, e)
		if err != nil {
			return nil, err
		}
		v2 = newRepresentations(data, v2ProtoType, v2ToProto)
	}
	d.mu.Lock()
	if d.ext == e {
		d.v2 = v2
	}
	d.mu.Unlock()
	return v2, nil
}

// currentV3 returns the v3 documents by group-version and their index,
// adding the extension's group-versions first.
func (d *Docs) currentV3() (map[string]*representations, *representations, error) {
	if err := d.base(); err != nil {
		return nil, nil, err
	}
	d.mu.RLock()
	v3, index := d.v3, d.v3Index
	d.mu.RUnlock()
	if index != nil {
		return v3, index, nil
	}
	d.v3Build.Lock()
	defer d.v3Build.Unlock()
	d.mu.RLock()
	v3, index, e := d.v3, d.v3Index, d.ext
	d.mu.RUnlock()
	if index != nil {
		return v3, index, nil
	}
	v3 = maps.Clone(d.baseV3)
	if e != nil {
		for gv, doc := range e.V3 {
			if _, builtin := v3[gv]; !builtin {
				v3[gv] = newRepresentations(doc, v3ProtoType, v3ToProto)
			}
		}
	}
	index, err := v3IndexOf(v3)
	if err != nil {
		return nil, nil, err
	}
	d.mu.Lock()
	if d.ext == e {
		d.v3, d.v3Index = v3, index
	}
	d.mu.Unlock()
	return v3, index, nil
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
