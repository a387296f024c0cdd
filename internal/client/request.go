package client

import (
	"net/url"
	"strconv"
	"strings"

	"github.com/minik8s/minik8s/api"
)

// ListOptions are the query parameters of a list or watch.
type ListOptions struct {
	// LabelSelector and FieldSelector in Kubernetes' text syntax
	// ("app=web,tier!=db", "spec.nodeName=n1").
	LabelSelector string
	FieldSelector string
	// ResourceVersion: "" is a consistent read, "0" any cached state; for a
	// watch, the version to resume after.
	ResourceVersion string
	// ResourceVersionMatch is "NotOlderThan" or "Exact" (lists only).
	ResourceVersionMatch string
	// Limit and Continue page a list.
	Limit    int64
	Continue string
	// TimeoutSeconds asks the server to end the list or watch after it.
	TimeoutSeconds *int64
	// AllowWatchBookmarks asks for BOOKMARK events on a watch.
	AllowWatchBookmarks bool
	// SendInitialEvents asks a watch to start with synthetic ADDED events for
	// the current state, ended by a BOOKMARK annotated
	// api.InitialEventsAnnotation.
	SendInitialEvents *bool
}

// Query encodes the options as URL query parameters; zero fields are left out.
func (o ListOptions) Query() url.Values {
	q := url.Values{}
	set := func(k, v string) {
		if v != "" {
			q.Set(k, v)
		}
	}
	set("labelSelector", o.LabelSelector)
	set("fieldSelector", o.FieldSelector)
	set("resourceVersion", o.ResourceVersion)
	set("resourceVersionMatch", o.ResourceVersionMatch)
	if o.Limit > 0 {
		q.Set("limit", strconv.FormatInt(o.Limit, 10))
	}
	set("continue", o.Continue)
	if o.TimeoutSeconds != nil {
		q.Set("timeoutSeconds", strconv.FormatInt(*o.TimeoutSeconds, 10))
	}
	if o.AllowWatchBookmarks {
		q.Set("allowWatchBookmarks", "true")
	}
	if o.SendInitialEvents != nil {
		q.Set("sendInitialEvents", strconv.FormatBool(*o.SendInitialEvents))
	}
	return q
}

// PatchType is the Content-Type of a patch body.
type PatchType string

// The patch types Kubernetes understands.
const (
	JSONPatchType           PatchType = "application/json-patch+json"
	MergePatchType          PatchType = "application/merge-patch+json"
	StrategicMergePatchType PatchType = "application/strategic-merge-patch+json"
	ApplyPatchType          PatchType = "application/apply-patch+yaml"
)

// ResourcePath returns the URL path of a resource: the collection when name
// is empty, an object, or one of its subresources:
//
//	/api/v1/namespaces/default/pods/web-1/binding
//	/apis/apps/v1/deployments            (all namespaces)
//	/api/v1/nodes/n1/status              (cluster-scoped)
//
// The namespace is ignored for cluster-scoped resources; an empty namespace
// on a namespaced resource addresses all namespaces (valid for list, watch).
func ResourcePath(info api.ResourceInfo, namespace, name string, subresource ...string) string {
	var b strings.Builder
	if info.Group == "" {
		b.WriteString("/api/")
		b.WriteString(info.Version)
	} else {
		b.WriteString("/apis/")
		b.WriteString(info.Group)
		b.WriteByte('/')
		b.WriteString(info.Version)
	}
	if info.Namespaced && namespace != "" {
		b.WriteString("/namespaces/")
		b.WriteString(url.PathEscape(namespace))
	}
	b.WriteByte('/')
	b.WriteString(info.Resource)
	if name != "" {
		b.WriteByte('/')
		b.WriteString(url.PathEscape(name))
		for _, s := range subresource {
			if s != "" {
				b.WriteByte('/')
				b.WriteString(s)
			}
		}
	}
	return b.String()
}
