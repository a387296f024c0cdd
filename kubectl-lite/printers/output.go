package printers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"sigs.k8s.io/yaml"
)

// PrintObjects writes objs as -o json or -o yaml: one object as itself,
// several (or a list request) as kubectl's "kind: List".
func PrintObjects(out io.Writer, format string, objs []Obj, asList bool) error {
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
