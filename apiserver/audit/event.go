package audit

import "github.com/minik8s/minik8s/api"

// Event is the subset of audit.k8s.io/v1 Event that minik8s records, with
// Kubernetes' field names.
type Event struct {
	Kind       string `json:"kind"`
	APIVersion string `json:"apiVersion"`
	// Level is always LevelMetadata: no request or response bodies.
	Level   string `json:"level"`
	AuditID string `json:"auditID"`
	Stage   string `json:"stage"`
	// RequestURI is the path and query as sent.
	RequestURI string   `json:"requestURI"`
	Verb       string   `json:"verb"`
	User       UserInfo `json:"user"`
	// ImpersonatedUser is who the user acted as (Impersonate-* headers).
	ImpersonatedUser *UserInfo `json:"impersonatedUser,omitempty"`
	SourceIPs        []string  `json:"sourceIPs,omitempty"`
	UserAgent        string    `json:"userAgent,omitempty"`
	// ObjectRef is set for resource requests only.
	ObjectRef *ObjectReference `json:"objectRef,omitempty"`
	// ResponseStatus has the code; for a failure answered with a Status,
	// also its status, reason and message (as Kubernetes records them at
	// Metadata level).
	ResponseStatus           *api.Status       `json:"responseStatus,omitempty"`
	RequestReceivedTimestamp api.MicroTime     `json:"requestReceivedTimestamp"`
	StageTimestamp           api.MicroTime     `json:"stageTimestamp"`
	Annotations              map[string]string `json:"annotations,omitempty"`
}

// UserInfo is authentication.k8s.io/v1 UserInfo. It is empty ({}) for a
// request that failed authentication.
type UserInfo struct {
	Username string              `json:"username,omitempty"`
	UID      string              `json:"uid,omitempty"`
	Groups   []string            `json:"groups,omitempty"`
	Extra    map[string][]string `json:"extra,omitempty"`
}

// ObjectReference is what a resource request addresses.
type ObjectReference struct {
	Resource    string `json:"resource,omitempty"`
	Namespace   string `json:"namespace,omitempty"`
	Name        string `json:"name,omitempty"`
	APIGroup    string `json:"apiGroup,omitempty"`
	APIVersion  string `json:"apiVersion,omitempty"`
	Subresource string `json:"subresource,omitempty"`
}

// Values of Event fields.
const (
	EventKind       = "Event"
	EventAPIVersion = "audit.k8s.io/v1"
	LevelMetadata   = "Metadata"
	// StageResponseComplete: the response has been sent (for a watch: the
	// stream has ended).
	StageResponseComplete = "ResponseComplete"
	// StagePanic: the handler panicked.
	StagePanic = "Panic"
	// HeaderAuditID is the response header carrying the event's auditID, so
	// a client can quote it.
	HeaderAuditID = "Audit-ID"
)
