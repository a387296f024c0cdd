package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/minik8s/minik8s/api"
)

// TableAccept is the Accept header kubectl get sends: a meta.k8s.io Table
// (v1, else v1beta1), else the resource itself.
const TableAccept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"

// TableAnswer is a server's answer to a table request: the Table, or, from
// a server that serves no tables, the objects themselves.
type TableAnswer struct {
	Table *api.Table
	Items []Unstructured
	// ResourceVersion is the table's or the list's, where a watch resumes.
	ResourceVersion string
}

// TableClient reads a resource as tables, as kubectl get does.
type TableClient struct {
	r       resource
	include api.IncludeObjectPolicy
}

// Tables returns a client asking for tables whose rows carry the object
// include says ("": the server's default, the metadata).
func (d *DynamicClient) Tables(include api.IncludeObjectPolicy) *TableClient {
	return &TableClient{r: d.r, include: include}
}

func (t *TableClient) request(path string, opts ListOptions) Request {
	q := opts.Query()
	if t.include != "" {
		q.Set("includeObject", string(t.include))
	}
	return Request{Path: path, Query: q, Accept: TableAccept}
}

// Get reads the named object as a table of one row.
func (t *TableClient) Get(ctx context.Context, name string) (*TableAnswer, error) {
	ns, err := t.r.named("get", name)
	if err != nil {
		return nil, err
	}
	b, err := t.r.send(ctx, t.request(ResourcePath(t.r.info, ns, name), ListOptions{}), name)
	if err != nil {
		return nil, err
	}
	return decodeTableAnswer(b)
}

// List reads the objects matching opts as a table.
func (t *TableClient) List(ctx context.Context, opts ListOptions) (*TableAnswer, error) {
	b, err := t.r.send(ctx, t.request(ResourcePath(t.r.info, t.r.namespace, ""), opts), "")
	if err != nil {
		return nil, err
	}
	return decodeTableAnswer(b)
}

// Watch watches as tables: each event's object is a table of one row
// (the first with the columns, the others without).
func (t *TableClient) Watch(ctx context.Context, opts ListOptions) (Watcher[TableAnswer], error) {
	req := t.request(ResourcePath(t.r.info, t.r.namespace, ""), opts)
	req.Query.Set("watch", "true")
	body, err := t.r.c.stream(ctx, req, errContext{resource: t.r.gr()})
	if err != nil {
		return nil, err
	}
	return newStreamWatcher(ctx, body, decodeTableAnswer), nil
}

// decodeTableAnswer reads a Table, an object or a list. Numbers in cells
// stay as written (json.Number).
func decodeTableAnswer(b []byte) (*TableAnswer, error) {
	var head struct {
		api.TypeMeta
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
		Items json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return nil, fmt.Errorf("decode table: %w", err)
	}
	a := &TableAnswer{ResourceVersion: head.Metadata.ResourceVersion}
	switch {
	case head.Kind == "Table" && (head.APIVersion == "meta.k8s.io/v1" || head.APIVersion == "meta.k8s.io/v1beta1"):
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		a.Table = &api.Table{}
		if err := dec.Decode(a.Table); err != nil {
			return nil, fmt.Errorf("decode table: %w", err)
		}
	case head.Items != nil:
		var l UnstructuredList
		if err := json.Unmarshal(b, &l); err != nil {
			return nil, fmt.Errorf("decode %s: %w", head.Kind, err)
		}
		a.Items = l.Items
	default:
		var u Unstructured
		if err := json.Unmarshal(b, &u); err != nil {
			return nil, fmt.Errorf("decode %s: %w", head.Kind, err)
		}
		a.Items = []Unstructured{u}
	}
	return a, nil
}
