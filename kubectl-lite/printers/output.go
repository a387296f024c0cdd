package printers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"sigs.k8s.io/yaml"
)

// PrintObjects writes objs as -o json or -o yaml: one object as itself,
// several (or a list request) as kubectl's "kind: List". Like kubectl
// (without --show-managed-fields), it leaves metadata.managedFields out.
func PrintObjects(out io.Writer, format string, objs []Obj, asList bool) error {
	return PrintObjectsManaged(out, format, objs, asList, false)
}

// PrintObjectsManaged is PrintObjects that keeps metadata.managedFields
// when showManaged is set (get --show-managed-fields).
func PrintObjectsManaged(out io.Writer, format string, objs []Obj, asList, showManaged bool) error {
	if !showManaged {
		objs = withoutManagedFields(objs)
	}
	var v any
	if len(objs) == 1 && !asList {
		v = objs[0]
	} else {
		items := make([]any, len(objs))
		for i, o := range objs {
			items[i] = o
		}
		v = map[string]any{
			"apiVersion": "v1",
			"kind":       "List",
			"items":      items,
			"metadata":   map[string]any{"resourceVersion": ""},
		}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode output: %w", err)
	}
	switch format {
	case "json":
		var buf bytes.Buffer
		if err := json.Indent(&buf, b, "", "    "); err != nil {
			return fmt.Errorf("encode output: %w", err)
		}
		buf.WriteByte('\n')
		_, err = out.Write(buf.Bytes())
		return err
	case "yaml":
		y, err := yaml.JSONToYAML(b)
		if err != nil {
			return fmt.Errorf("encode output: %w", err)
		}
		_, err = out.Write(y)
		return err
	}
	return fmt.Errorf("unable to match a printer suitable for the output format %q, allowed formats are: json,name,wide,yaml", format)
}

// withoutManagedFields returns objs without metadata.managedFields; the
// objects given are not changed.
func withoutManagedFields(objs []Obj) []Obj {
	out := make([]Obj, len(objs))
	for i, o := range objs {
		out[i] = o
		md, ok := o["metadata"].(map[string]any)
		if !ok {
			if inner, ok := o["object"].(map[string]any); ok && len(o) == 2 && o["type"] != nil {
				// A watch event: {"type":..., "object":...}.
				out[i] = Obj{"type": o["type"], "object": withoutManagedFields([]Obj{inner})[0]}
			}
			continue
		}
		if _, has := md["managedFields"]; !has {
			continue
		}
		c := make(Obj, len(o))
		for k, v := range o {
			c[k] = v
		}
		m := make(map[string]any, len(md))
		for k, v := range md {
			if k != "managedFields" {
				m[k] = v
			}
		}
		c["metadata"] = m
		out[i] = c
	}
	return out
}
