package events

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/internal/client"
)

// Recorder records an event about an object. Implementations never block.
type Recorder interface {
	// Event records reason and message about obj; eventType is
	// api.EventTypeNormal or api.EventTypeWarning.
	Event(obj api.Object, eventType, reason, message string)
	// Eventf is Event with a format string.
	Eventf(obj api.Object, eventType, reason, format string, args ...any)
}

// Options configure a Broadcaster.
type Options struct {
	// Component and Host fill the Event's source and reportingComponent
	// ("default-scheduler", "kubelet").
	Component, Host string
	// QueueSize bounds the events waiting to be written; further events are
	// dropped (and logged) rather than blocking the caller. Default 1000.
	QueueSize int
	// Window is how long a repeated event keeps being folded into the same
	// Event object. Default 10 minutes.
	Window time.Duration
	Logger *slog.Logger
}

// Broadcaster writes recorded events to the apiserver. Start its writer with
// Run; Recorder values from it may be shared by any number of goroutines.
type Broadcaster struct {
	events *client.ResourceClient[api.Event, *api.Event]
	opts   Options
	queue  chan *api.Event

	mu   sync.Mutex
	seen map[string]*seenEvent
}

type seenEvent struct {
	name      string
	namespace string
	count     int32
	first     api.Time
	last      time.Time
}

// NewBroadcaster returns a broadcaster writing through c.
func NewBroadcaster(c *client.Client, opts Options) *Broadcaster {
	if opts.QueueSize <= 0 {
		opts.QueueSize = 1000
	}
	if opts.Window <= 0 {
		opts.Window = 10 * time.Minute
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return &Broadcaster{
		events: client.Resource[api.Event](c),
		opts:   opts,
		queue:  make(chan *api.Event, opts.QueueSize),
		seen:   map[string]*seenEvent{},
	}
}

// Recorder returns a Recorder feeding this broadcaster, reporting as
// Options.Component.
func (b *Broadcaster) Recorder() Recorder { return recorder{b, b.opts.Component} }

// RecorderFor returns a Recorder reporting as component (one process
// running several controllers: "replicaset-controller", "node-controller").
func (b *Broadcaster) RecorderFor(component string) Recorder { return recorder{b, component} }

type recorder struct {
	b         *Broadcaster
	component string
}

func (r recorder) Event(obj api.Object, eventType, reason, message string) {
	ev := r.b.newEvent(obj, r.component, eventType, reason, message)
	select {
	case r.b.queue <- ev:
	default:
		r.b.opts.Logger.Warn("event queue full, dropping event", "object", ev.InvolvedObject.Name, "reason", reason)
	}
}

func (r recorder) Eventf(obj api.Object, eventType, reason, format string, args ...any) {
	r.Event(obj, eventType, reason, fmt.Sprintf(format, args...))
}

// Reference builds the ObjectReference for obj. Objects read from lists may
// lack apiVersion and kind; those come from the object's Go type.
func Reference(obj api.Object) api.ObjectReference {
	tm, meta := obj.GetTypeMeta(), obj.GetObjectMeta()
	apiVersion, kind := tm.APIVersion, tm.Kind
	if kind == "" {
		want := reflect.TypeOf(obj)
		for _, info := range api.Resources {
			if info.New != nil && reflect.TypeOf(info.New()) == want {
				kind = info.Kind
				apiVersion = info.GroupVersion()
				break
			}
		}
	}
	return api.ObjectReference{
		Kind:            kind,
		APIVersion:      apiVersion,
		Namespace:       meta.Namespace,
		Name:            meta.Name,
		UID:             meta.UID,
		ResourceVersion: meta.ResourceVersion,
	}
}

func (b *Broadcaster) newEvent(obj api.Object, component, eventType, reason, message string) *api.Event {
	ref := Reference(obj)
	ns := ref.Namespace
	if ns == "" {
		// Events about cluster-scoped objects (nodes) live in "default", as in Kubernetes.
		ns = api.NamespaceDefault
	}
	now := time.Now()
	return &api.Event{
		TypeMeta:            api.TypeMeta{APIVersion: "v1", Kind: "Event"},
		ObjectMeta:          api.ObjectMeta{Name: fmt.Sprintf("%s.%x", ref.Name, now.UnixNano()), Namespace: ns},
		InvolvedObject:      ref,
		Reason:              reason,
		Message:             message,
		Source:              api.EventSource{Component: component, Host: b.opts.Host},
		FirstTimestamp:      api.NewTime(now),
		LastTimestamp:       api.NewTime(now),
		Count:               1,
		Type:                eventType,
		ReportingController: component,
		ReportingInstance:   b.opts.Host,
	}
}

// Run writes queued events until ctx ends.
func (b *Broadcaster) Run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case ev := <-b.queue:
			b.write(ctx, ev)
		}
	}
}

// aggregateKey identifies "the same event again": same object, type,
// reason, message and source.
func aggregateKey(ev *api.Event) string {
	r := ev.InvolvedObject
	return strings.Join([]string{ev.Source.Component, ev.Source.Host, r.Kind, r.Namespace, r.Name, string(r.UID), r.FieldPath, ev.Type, ev.Reason, ev.Message}, "\x00")
}

func (b *Broadcaster) write(ctx context.Context, ev *api.Event) {
	key := aggregateKey(ev)
	now := time.Now()
	b.mu.Lock()
	prev := b.seen[key]
	if prev != nil && now.Sub(prev.last) > b.opts.Window {
		prev = nil
	}
	b.mu.Unlock()
	if prev != nil {
		patch, _ := json.Marshal(map[string]any{
			"count":         prev.count + 1,
			"lastTimestamp": ev.LastTimestamp,
		})
		_, err := b.events.Namespace(prev.namespace).Patch(ctx, prev.name, client.MergePatchType, patch)
		if err == nil {
			b.remember(key, prev.name, prev.namespace, prev.count+1, prev.first, now)
			return
		}
		if !apierrors.IsNotFound(err) {
			b.opts.Logger.Warn("could not update event", "event", prev.name, "err", err)
			return
		}
		// The Event was deleted (TTL, namespace gone): start a new one.
	}
	created, err := b.events.Namespace(ev.Namespace).Create(ctx, ev)
	if err != nil {
		if ctx.Err() == nil && !apierrors.IsNotFound(err) && !apierrors.IsForbidden(err) {
			b.opts.Logger.Warn("could not write event", "object", ev.InvolvedObject.Name, "reason", ev.Reason, "err", err)
		}
		return
	}
	b.remember(key, created.Name, created.Namespace, 1, ev.FirstTimestamp, now)
}

// maxSeen bounds the aggregation cache; past it, the oldest half is dropped.
const maxSeen = 4096

func (b *Broadcaster) remember(key, name, ns string, count int32, first api.Time, last time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.seen) >= maxSeen {
		cutoff := time.Now().Add(-b.opts.Window / 2)
		for k, s := range b.seen {
			if s.last.Before(cutoff) || len(b.seen) >= maxSeen {
				delete(b.seen, k)
			}
		}
	}
	b.seen[key] = &seenEvent{name: name, namespace: ns, count: count, first: first, last: last}
}
