package api

import (
	"encoding/json"
	"time"
)

// UID is a unique identifier of an object, assigned by the apiserver on create.
type UID string

// TypeMeta describes an individual object in an API response or request with
// strings representing the type of the object and its API schema version.
type TypeMeta struct {
	Kind       string `json:"kind,omitempty"`
	APIVersion string `json:"apiVersion,omitempty"`
}

// GetTypeMeta returns the object's type metadata; every object embeds TypeMeta.
func (t *TypeMeta) GetTypeMeta() *TypeMeta { return t }

// ObjectMeta is metadata that all persisted resources must have.
type ObjectMeta struct {
	Name                       string            `json:"name,omitempty"`
	GenerateName               string            `json:"generateName,omitempty"`
	Namespace                  string            `json:"namespace,omitempty"`
	UID                        UID               `json:"uid,omitempty"`
	ResourceVersion            string            `json:"resourceVersion,omitempty"`
	Generation                 int64             `json:"generation,omitempty"`
	CreationTimestamp          Time              `json:"creationTimestamp,omitzero"`
	DeletionTimestamp          *Time             `json:"deletionTimestamp,omitempty"`
	DeletionGracePeriodSeconds *int64            `json:"deletionGracePeriodSeconds,omitempty"`
	Labels                     map[string]string `json:"labels,omitempty"`
	Annotations                map[string]string `json:"annotations,omitempty"`
	OwnerReferences            []OwnerReference  `json:"ownerReferences,omitempty"`
	Finalizers                 []string          `json:"finalizers,omitempty"`
	// ManagedFields records which manager owns which fields, for
	// server-side apply. The apiserver maintains it on every write
	// (apiserver/fieldmanager); clients read it and may reset it.
	ManagedFields []ManagedFieldsEntry `json:"managedFields,omitempty"`
}

// ManagedFieldsOperationType is the kind of write that owns a set of fields.
type ManagedFieldsOperationType string

// The operations of managedFields entries.
const (
	ManagedFieldsOperationApply  ManagedFieldsOperationType = "Apply"
	ManagedFieldsOperationUpdate ManagedFieldsOperationType = "Update"
)

// ManagedFieldsEntry is the set of fields one manager owns through one
// operation at one API version, in metav1.ManagedFieldsEntry's JSON shape.
type ManagedFieldsEntry struct {
	Manager    string                     `json:"manager,omitempty"`
	Operation  ManagedFieldsOperationType `json:"operation,omitempty"`
	APIVersion string                     `json:"apiVersion,omitempty"`
	Time       *Time                      `json:"time,omitempty"`
	FieldsType string                     `json:"fieldsType,omitempty"`
	FieldsV1   *FieldsV1                  `json:"fieldsV1,omitempty"`
	// Subresource is the subresource written through ("status", "scale"),
	// empty for the object itself.
	Subresource string `json:"subresource,omitempty"`
}

// FieldsV1 is a set of fields in the FieldsV1 encoding: a JSON object
// whose keys are "f:name", "k:{...}", "v:..." or "i:N" and "." for the
// node itself. It is kept as its raw JSON, like metav1.FieldsV1.
type FieldsV1 struct {
	Raw []byte
}

// MarshalJSON implements json.Marshaler.
func (f FieldsV1) MarshalJSON() ([]byte, error) {
	if f.Raw == nil {
		return []byte("null"), nil
	}
	return f.Raw, nil
}

// UnmarshalJSON implements json.Unmarshaler.
func (f *FieldsV1) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		f.Raw = nil
		return nil
	}
	f.Raw = append(f.Raw[:0], b...)
	return nil
}

// GetObjectMeta returns the object's metadata; every object embeds ObjectMeta.
func (m *ObjectMeta) GetObjectMeta() *ObjectMeta { return m }

// OwnerReference identifies an owning object; the garbage collector deletes
// dependents whose owners are gone.
type OwnerReference struct {
	APIVersion         string `json:"apiVersion"`
	Kind               string `json:"kind"`
	Name               string `json:"name"`
	UID                UID    `json:"uid"`
	Controller         *bool  `json:"controller,omitempty"`
	BlockOwnerDeletion *bool  `json:"blockOwnerDeletion,omitempty"`
}

// ListMeta describes metadata that synthetic resources (lists) have.
type ListMeta struct {
	ResourceVersion    string `json:"resourceVersion,omitempty"`
	Continue           string `json:"continue,omitempty"`
	RemainingItemCount *int64 `json:"remainingItemCount,omitempty"`
}

// GetListMeta returns the list's metadata.
func (m *ListMeta) GetListMeta() *ListMeta { return m }

// Object is implemented by every API object: it embeds TypeMeta and ObjectMeta.
type Object interface {
	GetTypeMeta() *TypeMeta
	GetObjectMeta() *ObjectMeta
}

// List is the Kubernetes list envelope (PodList, NodeList, ...) for items of type T.
type List[T any] struct {
	TypeMeta `json:",inline"`
	ListMeta `json:"metadata"`
	Items    []T `json:"items"`
}

// Time wraps time.Time so it marshals as RFC 3339 with second precision,
// and as null when zero, like Kubernetes' metav1.Time.
type Time struct {
	time.Time
}

// Now returns the current time truncated to seconds, as stored in objects.
func Now() Time { return Time{time.Now().UTC().Truncate(time.Second)} }

// NewTime wraps t.
func NewTime(t time.Time) Time { return Time{t.UTC().Truncate(time.Second)} }

// MarshalJSON implements json.Marshaler.
func (t Time) MarshalJSON() ([]byte, error) {
	if t.IsZero() {
		return []byte("null"), nil
	}
	return json.Marshal(t.UTC().Format(time.RFC3339))
}

// UnmarshalJSON implements json.Unmarshaler.
func (t *Time) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		t.Time = time.Time{}
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	if s == "" {
		t.Time = time.Time{}
		return nil
	}
	pt, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return err
	}
	t.Time = pt.Local()
	return nil
}

// MicroTime is a Time with microsecond precision (Lease renewTime, Event eventTime).
type MicroTime struct {
	time.Time
}

// NowMicro returns the current time as a MicroTime.
func NowMicro() MicroTime { return MicroTime{time.Now().UTC().Truncate(time.Microsecond)} }

const rfc3339Micro = "2006-01-02T15:04:05.000000Z07:00"

// MarshalJSON implements json.Marshaler.
func (t MicroTime) MarshalJSON() ([]byte, error) {
	if t.IsZero() {
		return []byte("null"), nil
	}
	return json.Marshal(t.UTC().Format(rfc3339Micro))
}

// UnmarshalJSON implements json.Unmarshaler.
func (t *MicroTime) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		t.Time = time.Time{}
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	if s == "" {
		t.Time = time.Time{}
		return nil
	}
	pt, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return err
	}
	t.Time = pt.Local()
	return nil
}

// Duration wraps time.Duration and marshals as a Go duration string ("15s").
type Duration struct {
	time.Duration
}

// MarshalJSON implements json.Marshaler.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.Duration.String()) }

// UnmarshalJSON implements json.Unmarshaler.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	pd, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	d.Duration = pd
	return nil
}

// Status is the return value for calls that do not return other objects, and
// the body of every API error.
type Status struct {
	TypeMeta `json:",inline"`
	ListMeta `json:"metadata"`
	// Status is "Success" or "Failure".
	Status  string         `json:"status,omitempty"`
	Message string         `json:"message,omitempty"`
	Reason  StatusReason   `json:"reason,omitempty"`
	Details *StatusDetails `json:"details,omitempty"`
	Code    int32          `json:"code,omitempty"`
}

// Values of Status.Status.
const (
	StatusSuccess = "Success"
	StatusFailure = "Failure"
)

// StatusDetails carries the extended data of a Status.
type StatusDetails struct {
	Name              string        `json:"name,omitempty"`
	Group             string        `json:"group,omitempty"`
	Kind              string        `json:"kind,omitempty"`
	UID               UID           `json:"uid,omitempty"`
	Causes            []StatusCause `json:"causes,omitempty"`
	RetryAfterSeconds int32         `json:"retryAfterSeconds,omitempty"`
}

// StatusCause is one cause of a failure, usually a field validation error.
type StatusCause struct {
	Type    CauseType `json:"reason,omitempty"`
	Message string    `json:"message,omitempty"`
	Field   string    `json:"field,omitempty"`
}

// StatusReason is a machine-readable description of why a request failed.
type StatusReason string

// Status reasons, as Kubernetes spells them.
const (
	StatusReasonUnknown               StatusReason = ""
	StatusReasonUnauthorized          StatusReason = "Unauthorized"
	StatusReasonForbidden             StatusReason = "Forbidden"
	StatusReasonNotFound              StatusReason = "NotFound"
	StatusReasonAlreadyExists         StatusReason = "AlreadyExists"
	StatusReasonConflict              StatusReason = "Conflict"
	StatusReasonGone                  StatusReason = "Gone"
	StatusReasonInvalid               StatusReason = "Invalid"
	StatusReasonServerTimeout         StatusReason = "ServerTimeout"
	StatusReasonTimeout               StatusReason = "Timeout"
	StatusReasonTooManyRequests       StatusReason = "TooManyRequests"
	StatusReasonBadRequest            StatusReason = "BadRequest"
	StatusReasonMethodNotAllowed      StatusReason = "MethodNotAllowed"
	StatusReasonNotAcceptable         StatusReason = "NotAcceptable"
	StatusReasonRequestEntityTooLarge StatusReason = "RequestEntityTooLarge"
	StatusReasonUnsupportedMediaType  StatusReason = "UnsupportedMediaType"
	StatusReasonInternalError         StatusReason = "InternalError"
	StatusReasonExpired               StatusReason = "Expired"
	StatusReasonServiceUnavailable    StatusReason = "ServiceUnavailable"
)

// CauseType is a machine-readable value providing more detail about what
// caused a failure; field validation causes use the FieldValue* types.
type CauseType string

// Cause types, as Kubernetes spells them.
const (
	CauseTypeFieldValueNotFound       CauseType = "FieldValueNotFound"
	CauseTypeFieldValueRequired       CauseType = "FieldValueRequired"
	CauseTypeFieldValueDuplicate      CauseType = "FieldValueDuplicate"
	CauseTypeFieldValueInvalid        CauseType = "FieldValueInvalid"
	CauseTypeFieldValueNotSupported   CauseType = "FieldValueNotSupported"
	CauseTypeFieldValueForbidden      CauseType = "FieldValueForbidden"
	CauseTypeFieldValueTooLong        CauseType = "FieldValueTooLong"
	CauseTypeFieldValueTooMany        CauseType = "FieldValueTooMany"
	CauseTypeUnexpectedServerResponse CauseType = "UnexpectedServerResponse"
	CauseTypeFieldManagerConflict     CauseType = "FieldManagerConflict"
	CauseTypeResourceVersionTooLarge  CauseType = "ResourceVersionTooLarge"
)

// Watch event types.
const (
	Added    = "ADDED"
	Modified = "MODIFIED"
	Deleted  = "DELETED"
	Bookmark = "BOOKMARK"
	Error    = "ERROR"
)

// WatchEvent is one line of a watch stream. Object is the encoded object (a
// Status for ERROR events).
type WatchEvent struct {
	Type   string          `json:"type"`
	Object json.RawMessage `json:"object"`
}

// InitialEventsAnnotation marks the BOOKMARK that ends the initial events of a
// watch with sendInitialEvents=true.
const InitialEventsAnnotation = "k8s.io/initial-events-end"

// LastAppliedConfigAnnotation holds the manifest kubectl apply last applied
// to an object, the "original" of its three-way merge.
const LastAppliedConfigAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

// DeletionPropagation decides whether and how garbage collection is done.
type DeletionPropagation string

// Propagation policies.
const (
	DeletePropagationOrphan     DeletionPropagation = "Orphan"
	DeletePropagationBackground DeletionPropagation = "Background"
	DeletePropagationForeground DeletionPropagation = "Foreground"
)

// Finalizers the apiserver and garbage collector understand.
const (
	FinalizerOrphanDependents = "orphan"
	FinalizerDeleteDependents = "foregroundDeletion"
)

// Preconditions must be fulfilled before an operation is carried out.
type Preconditions struct {
	UID             *UID    `json:"uid,omitempty"`
	ResourceVersion *string `json:"resourceVersion,omitempty"`
}

// DeleteOptions may be provided when deleting an API object.
type DeleteOptions struct {
	TypeMeta           `json:",inline"`
	GracePeriodSeconds *int64               `json:"gracePeriodSeconds,omitempty"`
	Preconditions      *Preconditions       `json:"preconditions,omitempty"`
	OrphanDependents   *bool                `json:"orphanDependents,omitempty"`
	PropagationPolicy  *DeletionPropagation `json:"propagationPolicy,omitempty"`
	DryRun             []string             `json:"dryRun,omitempty"`
}

// LabelSelector is a label query over a set of resources (matchLabels are ANDed
// with matchExpressions). An empty selector matches everything; a nil one
// matches nothing.
type LabelSelector struct {
	MatchLabels      map[string]string          `json:"matchLabels,omitempty"`
	MatchExpressions []LabelSelectorRequirement `json:"matchExpressions,omitempty"`
}

// LabelSelectorRequirement is a selector requirement: a key, an operator
// (In, NotIn, Exists, DoesNotExist) and values.
type LabelSelectorRequirement struct {
	Key      string   `json:"key"`
	Operator string   `json:"operator"`
	Values   []string `json:"values,omitempty"`
}

// Condition is the generic condition shape used by newer types.
type Condition struct {
	Type               string `json:"type"`
	Status             string `json:"status"`
	ObservedGeneration int64  `json:"observedGeneration,omitempty"`
	LastTransitionTime Time   `json:"lastTransitionTime,omitzero"`
	Reason             string `json:"reason,omitempty"`
	Message            string `json:"message,omitempty"`
}

// ConditionStatus values.
const (
	ConditionTrue    = "True"
	ConditionFalse   = "False"
	ConditionUnknown = "Unknown"
)

// IntOrString holds an int32 or a string ("25%", "http"), as in Kubernetes.
type IntOrString struct {
	Type   IntOrStringType
	IntVal int32
	StrVal string
}

// IntOrStringType says which member of IntOrString is set.
type IntOrStringType int

// IntOrString kinds.
const (
	Int IntOrStringType = iota
	String
)

// FromInt returns an IntOrString holding i.
func FromInt(i int32) IntOrString { return IntOrString{Type: Int, IntVal: i} }

// FromString returns an IntOrString holding s.
func FromString(s string) IntOrString { return IntOrString{Type: String, StrVal: s} }

// MarshalJSON implements json.Marshaler.
func (v IntOrString) MarshalJSON() ([]byte, error) {
	if v.Type == String {
		return json.Marshal(v.StrVal)
	}
	return json.Marshal(v.IntVal)
}

// UnmarshalJSON implements json.Unmarshaler.
func (v *IntOrString) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		v.Type = String
		return json.Unmarshal(b, &v.StrVal)
	}
	v.Type = Int
	return json.Unmarshal(b, &v.IntVal)
}

// String returns the value as text.
func (v IntOrString) String() string {
	if v.Type == String {
		return v.StrVal
	}
	b, _ := json.Marshal(v.IntVal)
	return string(b)
}
