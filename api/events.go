package api

// EventV1 is the events.k8s.io/v1 Event. Kubernetes keeps one storage for
// it and the core v1 Event: an events.k8s.io Event is a core Event seen
// through EventToV1 and EventFromV1 (its Go name differs only because
// package api holds every group).
type EventV1 struct {
	TypeMeta            `json:",inline"`
	ObjectMeta          `json:"metadata"`
	EventTime           MicroTime        `json:"eventTime"`
	Series              *EventSeries     `json:"series,omitempty"`
	ReportingController string           `json:"reportingController,omitempty"`
	ReportingInstance   string           `json:"reportingInstance,omitempty"`
	Action              string           `json:"action,omitempty"`
	Reason              string           `json:"reason,omitempty"`
	Regarding           ObjectReference  `json:"regarding,omitzero"`
	Related             *ObjectReference `json:"related,omitempty"`
	Note                string           `json:"note,omitempty"`
	Type                string           `json:"type,omitempty"`
	// The core Event's fields the events.k8s.io API deprecates.
	DeprecatedSource         EventSource `json:"deprecatedSource"`         // written even when empty, as kube does
	DeprecatedFirstTimestamp Time        `json:"deprecatedFirstTimestamp"` // null when unset, as kube writes it
	DeprecatedLastTimestamp  Time        `json:"deprecatedLastTimestamp"`  // null when unset, as kube writes it
	DeprecatedCount          int32       `json:"deprecatedCount,omitempty"`
}

// EventV1List is a list of events.k8s.io Events.
type EventV1List = List[EventV1]

// EventToV1 is Kubernetes' Convert_core_Event_To_v1_Event: involvedObject
// is regarding, message note, source deprecatedSource, and the legacy
// counters the deprecated ones. The result shares no memory with e.
func EventToV1(e *Event) *EventV1 {
	c := DeepCopy(e)
	return &EventV1{
		TypeMeta:                 TypeMeta{Kind: "Event", APIVersion: "events.k8s.io/v1"},
		ObjectMeta:               c.ObjectMeta,
		EventTime:                c.EventTime,
		Series:                   c.Series,
		ReportingController:      c.ReportingController,
		ReportingInstance:        c.ReportingInstance,
		Action:                   c.Action,
		Reason:                   c.Reason,
		Regarding:                c.InvolvedObject,
		Related:                  c.Related,
		Note:                     c.Message,
		Type:                     c.Type,
		DeprecatedSource:         c.Source,
		DeprecatedFirstTimestamp: c.FirstTimestamp,
		DeprecatedLastTimestamp:  c.LastTimestamp,
		DeprecatedCount:          c.Count,
	}
}

// EventFromV1 is Kubernetes' Convert_v1_Event_To_core_Event, the inverse of
// EventToV1. The result shares no memory with e.
func EventFromV1(e *EventV1) *Event {
	c := DeepCopy(e)
	return &Event{
		TypeMeta:            TypeMeta{Kind: "Event", APIVersion: "v1"},
		ObjectMeta:          c.ObjectMeta,
		InvolvedObject:      c.Regarding,
		Reason:              c.Reason,
		Message:             c.Note,
		Source:              c.DeprecatedSource,
		FirstTimestamp:      c.DeprecatedFirstTimestamp,
		LastTimestamp:       c.DeprecatedLastTimestamp,
		Count:               c.DeprecatedCount,
		Type:                c.Type,
		EventTime:           c.EventTime,
		Series:              c.Series,
		Action:              c.Action,
		Related:             c.Related,
		ReportingController: c.ReportingController,
		ReportingInstance:   c.ReportingInstance,
	}
}
