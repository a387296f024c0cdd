package api

import "encoding/json"

// MetaGroupName is the group of the server's alternative shapes of an
// object: tables and metadata-only objects (meta.k8s.io).
const MetaGroupName = "meta.k8s.io"

// Table is meta.k8s.io's tabular view of objects, what kube-apiserver answers
// to Accept: application/json;as=Table;g=meta.k8s.io;v=v1 and kubectl prints.
// ColumnDefinitions is absent (null) in the second and later tables of a
// watch: they reuse the first one's.
type Table struct {
	TypeMeta          `json:",inline"`
	ListMeta          `json:"metadata"`
	ColumnDefinitions []TableColumnDefinition `json:"columnDefinitions"`
	Rows              []TableRow              `json:"rows"`
}

// TableColumnDefinition describes one column. Type is an OpenAPI type
// (string, integer, number, boolean, date); Format "name" marks the column
// holding the object's name. Priority 0 columns are always shown, higher
// ones with -o wide.
type TableColumnDefinition struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	Format      string `json:"format"`
	Description string `json:"description"`
	Priority    int32  `json:"priority"`
}

// TableRow is one object's cells, in column order: strings, integers
// (int64) or booleans. Object is the object itself, its metadata only
// (a PartialObjectMetadata), or null, as includeObject asked.
type TableRow struct {
	Cells      []any               `json:"cells"`
	Conditions []TableRowCondition `json:"conditions,omitempty"`
	Object     json.RawMessage     `json:"object"`
}

// TableRowCondition says something about a row; kube-apiserver marks
// finished pods Completed.
type TableRowCondition struct {
	Type    string          `json:"type"`
	Status  ConditionStatus `json:"status"`
	Reason  string          `json:"reason,omitempty"`
	Message string          `json:"message,omitempty"`
}

// RowCompleted is the condition of a row whose object finished its work.
const RowCompleted = "Completed"

// IncludeObjectPolicy is a table request's includeObject parameter: what
// each row carries besides its cells.
type IncludeObjectPolicy string

const (
	// IncludeNone leaves rows without their object.
	IncludeNone IncludeObjectPolicy = "None"
	// IncludeMetadata, the default, gives each row a PartialObjectMetadata.
	IncludeMetadata IncludeObjectPolicy = "Metadata"
	// IncludeObject gives each row the whole object.
	IncludeObject IncludeObjectPolicy = "Object"
)

// PartialObjectMetadata is an object reduced to its metadata, what
// metadata-only clients (the garbage collector, quota) read and watch.
type PartialObjectMetadata struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata"`
}

// PartialObjectMetadataList is a list of PartialObjectMetadata.
type PartialObjectMetadataList struct {
	TypeMeta `json:",inline"`
	ListMeta `json:"metadata"`
	Items    []PartialObjectMetadata `json:"items"`
}
