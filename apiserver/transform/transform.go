package transform

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/api/field"
	"github.com/minik8s/minik8s/apiserver/printers"
	"github.com/minik8s/minik8s/apiserver/registry"
)

// The shapes a client may ask for.
const (
	KindTable                     = "Table"
	KindPartialObjectMetadata     = "PartialObjectMetadata"
	KindPartialObjectMetadataList = "PartialObjectMetadataList"
)

// Target is what an Accept clause asks for instead of the resource:
// as=Kind;g=Group;v=Version.
type Target struct{ Group, Version, Kind string }

func (t Target) apiVersion() string { return t.Group + "/" + t.Version }

// Allows says whether a response may be written in mediaType
// ("application/json") as target: kube-apiserver's
// AllowsMediaTypeTransform. Tables exist in JSON and YAML, metadata in
// every encoding, both in meta.k8s.io v1 and v1beta1; nothing else.
func Allows(mediaType string, t Target) bool {
	if t.Group != api.MetaGroupName || (t.Version != "v1" && t.Version != "v1beta1") {
		return false
	}
	switch t.Kind {
	case KindTable:
		return mediaType == "application/json" || mediaType == "application/yaml"
	case KindPartialObjectMetadata, KindPartialObjectMetadataList:
		return true
	}
	return false
}

// Converter turns one request's answers into its Target's shape.
type Converter struct {
	target  Target
	info    api.ResourceInfo
	include api.IncludeObjectPolicy
	printer *printers.Printer
	// now dates the AGE cells; kube-apiserver prints as of the request.
	now func() time.Time
	// headers: whether the next table carries the column definitions.
	// A watch sends them in its first table only.
	headers bool
}

// New returns the converter of target for resources of info. query is the
// request's: a table reads includeObject from it, and an unknown value is
// kube's 400.
func New(target Target, info api.ResourceInfo, query url.Values) (*Converter, error) {
	return WithPrinter(target, info, query, printers.For(info.Kind))
}

// WithPrinter is New with the printer of the resource's tables given (a
// custom resource's, made from its additionalPrinterColumns).
func WithPrinter(target Target, info api.ResourceInfo, query url.Values, printer *printers.Printer) (*Converter, error) {
	c := &Converter{target: target, info: info, now: time.Now, headers: true}
	if target.Kind == KindTable {
		c.include = api.IncludeObjectPolicy(query.Get("includeObject"))
		switch c.include {
		case "":
			c.include = api.IncludeMetadata
		case api.IncludeNone, api.IncludeMetadata, api.IncludeObject:
		default:
			err := field.Invalid(field.NewPath("includeObject"), string(c.include), "must be 'Metadata', 'Object', 'None', or empty")
			return nil, apierrors.NewBadRequest("Unable to convert to Table as requested: " + err.Error())
		}
		c.printer = printer
	}
	return c, nil
}

// Object converts one object (a GET's, or a write's answer). data is obj's
// JSON when the caller has it.
func (c *Converter) Object(obj api.Object, data []byte) ([]byte, error) {
	switch c.target.Kind {
	case KindTable:
		row, err := c.row(obj, data)
		if err != nil {
			return nil, err
		}
		return c.table(api.ListMeta{ResourceVersion: obj.GetObjectMeta().ResourceVersion}, []api.TableRow{row})
	case KindPartialObjectMetadata:
		meta, err := json.Marshal(obj.GetObjectMeta())
		if err != nil {
			return nil, err
		}
		return c.partial(meta), nil
	}
	return nil, notAcceptable(fmt.Sprintf("you requested %s, but the requested object is not a list (%s)", c.target.Kind, c.goType(false)))
}

// List converts one page of a list.
func (c *Converter) List(res *registry.ListResult) ([]byte, error) {
	lm := api.ListMeta{ResourceVersion: res.ResourceVersion, Continue: res.Continue, RemainingItemCount: res.RemainingItemCount}
	switch c.target.Kind {
	case KindTable:
		items := res.Items
		if c.printer.Less != nil {
			// kube prints some lists in an order of their own
			// (FlowSchemas by matching precedence).
			items = slices.Clone(items)
			slices.SortStableFunc(items, func(a, b registry.Item) int {
				switch {
				case c.printer.Less(a.Object, b.Object):
					return -1
				case c.printer.Less(b.Object, a.Object):
					return 1
				}
				return 0
			})
		}
		rows := make([]api.TableRow, len(items))
		for i, it := range items {
			row, err := c.row(it.Object, it.JSON)
			if err != nil {
				return nil, err
			}
			rows[i] = row
		}
		if c.printer.List != nil {
			objs := make([]api.Object, len(items))
			for i, it := range items {
				objs[i] = it.Object
			}
			c.printer.List(objs, rows)
		}
		return c.table(lm, rows)
	case KindPartialObjectMetadataList:
		meta, err := json.Marshal(lm)
		if err != nil {
			return nil, err
		}
		b := fmt.Appendf(nil, `{"kind":%q,"apiVersion":%q,"metadata":%s,"items":[`, KindPartialObjectMetadataList, c.target.apiVersion(), meta)
		for i, it := range res.Items {
			m, err := json.Marshal(it.Object.GetObjectMeta())
			if err != nil {
				return nil, err
			}
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, c.partial(m)...)
		}
		return append(b, "]}"...), nil
	}
	return nil, notAcceptable(fmt.Sprintf("you requested %s, but the requested object is a list (%s)", c.target.Kind, c.goType(true)))
}

// WatchLine converts one watch event line ({"type":...,"object":{...}}\n)
// and returns the new line. Status objects (ERROR events) pass as they
// are; so does an object that cannot take the shape (a
// PartialObjectMetadataList asked of a watch), as kube-apiserver sends the
// object when its transformation fails. A table carries the column
// definitions in the watch's first event only.
func (c *Converter) WatchLine(line []byte) ([]byte, error) {
	var ev struct {
		Type   string          `json:"type"`
		Object json.RawMessage `json:"object"`
	}
	if err := json.Unmarshal(line, &ev); err != nil {
		return nil, fmt.Errorf("read watch event: %w", err)
	}
	var tm api.TypeMeta
	if err := json.Unmarshal(ev.Object, &tm); err != nil {
		return nil, fmt.Errorf("read watch event object: %w", err)
	}
	if tm.Kind == "Status" {
		return line, nil
	}
	var out []byte
	switch c.target.Kind {
	case KindTable:
		obj := c.info.New()
		if err := json.Unmarshal(ev.Object, obj); err != nil {
			return nil, fmt.Errorf("decode %s from watch event: %w", c.info.Kind, err)
		}
		var err error
		if out, err = c.Object(obj, ev.Object); err != nil {
			return nil, err
		}
		c.headers = false
	case KindPartialObjectMetadata:
		var o struct {
			Metadata json.RawMessage `json:"metadata"`
		}
		if err := json.Unmarshal(ev.Object, &o); err != nil {
			return nil, fmt.Errorf("read watch event object: %w", err)
		}
		out = c.partial(o.Metadata)
	default:
		return line, nil
	}
	return fmt.Appendf(nil, "{\"type\":%q,\"object\":%s}\n", ev.Type, out), nil
}

// row is obj's table row with the object includeObject asks for; the
// bookmark that ends a watch's initial events keeps its metadata (its
// annotation) whatever was asked, as in kube-apiserver.
func (c *Converter) row(obj api.Object, data []byte) (api.TableRow, error) {
	row := c.printer.Row(obj, c.now())
	include := c.include
	if include == api.IncludeNone && obj.GetObjectMeta().Annotations[api.InitialEventsAnnotation] == "true" {
		include = api.IncludeMetadata
	}
	switch include {
	case api.IncludeObject:
		if data == nil {
			var err error
			if data, err = json.Marshal(obj); err != nil {
				return row, err
			}
		}
		row.Object = data
	case api.IncludeMetadata:
		meta, err := json.Marshal(obj.GetObjectMeta())
		if err != nil {
			return row, err
		}
		row.Object = c.partial(meta)
	}
	return row, nil
}

// table encodes a Table of rows; its columns unless a watch sent them.
func (c *Converter) table(lm api.ListMeta, rows []api.TableRow) ([]byte, error) {
	t := api.Table{TypeMeta: api.TypeMeta{Kind: KindTable, APIVersion: c.target.apiVersion()}, ListMeta: lm, Rows: rows}
	if c.headers {
		t.ColumnDefinitions = c.printer.Columns
	}
	return json.Marshal(t)
}

// partial is the PartialObjectMetadata of metadata (an object's metadata
// JSON).
func (c *Converter) partial(metadata json.RawMessage) []byte {
	if len(metadata) == 0 {
		metadata = json.RawMessage("{}")
	}
	return fmt.Appendf(nil, `{"kind":%q,"apiVersion":%q,"metadata":%s}`, KindPartialObjectMetadata, c.target.apiVersion(), metadata)
}

// goType names the Go type kube-apiserver's messages show for the
// resource: its internal type, "*core.Pod", "*apps.DeploymentList".
func (c *Converter) goType(list bool) string {
	pkg := "core"
	if c.info.Group != "" {
		pkg, _, _ = strings.Cut(c.info.Group, ".")
	}
	t := "*" + pkg + "." + c.info.Kind
	if list {
		t += "List"
	}
	return t
}

func notAcceptable(msg string) error {
	return apierrors.NewGeneric(http.StatusNotAcceptable, api.StatusReasonNotAcceptable, msg)
}
