package request

import (
	"context"
	"net/http"
	"net/url"
	"strings"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/api/fields"
)

// Info is what a request addresses, parsed from its method and URL the way
// kube-apiserver's RequestInfoFactory does.
type Info struct {
	// IsResourceRequest is false for /healthz, /version, discovery and the like.
	IsResourceRequest bool
	Path              string
	// Verb is one of get, list, watch, create, update, patch, delete,
	// deletecollection for resource requests; the lower-case HTTP method otherwise.
	Verb        string
	APIPrefix   string // "api" or "apis"
	APIGroup    string // "" for core
	APIVersion  string
	Namespace   string
	Resource    string
	Subresource string
	Name        string
	// Parts are the path segments after the group/version.
	Parts []string
	// FieldSelector and LabelSelector are the unparsed fieldSelector and
	// labelSelector query parameters of a list, watch or deletecollection,
	// as kube-apiserver's RequestInfo keeps them for authorizers (the Node
	// authorizer lets a kubelet list pods only with spec.nodeName=itself).
	// They stay empty for other verbs and for the legacy /watch/ paths,
	// where kube-apiserver does not authorize selectors either.
	FieldSelector string
	LabelSelector string
}

// specialVerbs are path prefixes that change the verb (legacy watch paths).
const watchPrefix = "watch"

// ParseInfo parses r. It never fails on unknown paths: those are simply not
// resource requests, and routing decides whether they exist.
func ParseInfo(r *http.Request) *Info {
	info := &Info{Path: r.URL.Path, Verb: strings.ToLower(r.Method)}
	segs := splitPath(r.URL.Path)
	if len(segs) == 0 {
		return info
	}
	switch segs[0] {
	case "api":
		if len(segs) < 2 {
			return info
		}
		info.APIPrefix, info.APIVersion = "api", segs[1]
		segs = segs[2:]
	case "apis":
		if len(segs) < 3 {
			return info
		}
		info.APIPrefix, info.APIGroup, info.APIVersion = "apis", segs[1], segs[2]
		segs = segs[3:]
	default:
		return info
	}
	if len(segs) == 0 {
		return info
	}
	info.IsResourceRequest = true
	watchPath := false
	if segs[0] == watchPrefix {
		watchPath = true
		segs = segs[1:]
	}
	// namespaces/NS/RESOURCE/... addresses a namespaced resource; namespaces,
	// namespaces/NAME and namespaces/NAME/SUB address the namespace itself.
	if segs[0] == "namespaces" && len(segs) >= 3 && !isNamespaceSubresource(segs[2], len(segs)) {
		info.Namespace = segs[1]
		segs = segs[2:]
	} else if segs[0] == "namespaces" && len(segs) >= 2 {
		// the namespace object: its name is also its "namespace" for authorization
		info.Namespace = segs[1]
	}
	info.Parts = segs
	if len(segs) > 0 {
		info.Resource = segs[0]
	}
	if len(segs) > 1 {
		info.Name = segs[1]
	}
	if len(segs) > 2 {
		info.Subresource = segs[2]
	}
	if segs[0] == "namespaces" {
		// the namespace object is cluster-scoped
		info.Namespace = ""
		if len(segs) > 1 {
			info.Name = segs[1]
		}
	}
	q := r.URL.Query()
	isWatch := watchPath || QueryBool(q, "watch")
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		switch {
		case info.Name == "" && isWatch:
			info.Verb = "watch"
		case info.Name == "":
			info.Verb = "list"
		case isWatch:
			info.Verb = "watch"
		default:
			info.Verb = "get"
		}
		// A list or watch of one name (fieldSelector=metadata.name=NAME)
		// names it, as in kube-apiserver, so RBAC rules limited to
		// resourceNames allow it (an informer on one ConfigMap).
		if (info.Verb == "list" || info.Verb == "watch") && info.Name == "" {
			if sel, err := fields.Parse(q.Get("fieldSelector")); err == nil {
				if name, ok := sel.RequiresExactMatch("metadata.name"); ok && name != "" && name != "." && name != ".." &&
					!strings.ContainsAny(name, "/%") {
					info.Name = name
				}
			}
		}
	case http.MethodPost:
		info.Verb = "create"
	case http.MethodPut:
		info.Verb = "update"
	case http.MethodPatch:
		info.Verb = "patch"
	case http.MethodDelete:
		if info.Name == "" {
			info.Verb = "deletecollection"
		} else {
			info.Verb = "delete"
		}
	default:
		// OPTIONS (proxied to a pod by pods/NAME/proxy) and any other
		// method: no verb, as kube-apiserver's RequestInfoFactory.
		info.Verb = ""
	}
	switch info.Verb {
	case "list", "watch", "deletecollection":
		if !watchPath {
			if v, ok := q["fieldSelector"]; ok && len(v) > 0 {
				info.FieldSelector = v[0]
			}
			if v, ok := q["labelSelector"]; ok && len(v) > 0 {
				info.LabelSelector = v[0]
			}
		}
	}
	return info
}

// isNamespaceSubresource tells namespaces/NAME/status and namespaces/NAME/finalize
// apart from namespaces/NS/RESOURCE.
func isNamespaceSubresource(seg string, n int) bool {
	return n == 3 && (seg == "status" || seg == "finalize")
}

func splitPath(p string) []string {
	p = strings.Trim(p, "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

// User is the authenticated identity of a request.
type User struct {
	Name   string
	UID    string
	Groups []string
	Extra  map[string][]string
}

type ctxKey int

const (
	infoKey ctxKey = iota
	userKey
)

// WithInfo returns ctx carrying info.
func WithInfo(ctx context.Context, info *Info) context.Context {
	return context.WithValue(ctx, infoKey, info)
}

// InfoFrom returns the request info of ctx, if any.
func InfoFrom(ctx context.Context) (*Info, bool) {
	i, ok := ctx.Value(infoKey).(*Info)
	return i, ok
}

// WithUser returns ctx carrying u.
func WithUser(ctx context.Context, u *User) context.Context {
	return context.WithValue(ctx, userKey, u)
}

// UserFrom returns the user of ctx, if any.
func UserFrom(ctx context.Context) (*User, bool) {
	u, ok := ctx.Value(userKey).(*User)
	return u, ok
}

// StatusWriter writes an error Status as the response, encoded as the
// request negotiated (JSON, YAML or protobuf).
type StatusWriter func(w http.ResponseWriter, r *http.Request, st api.Status)

type statusWriterKey struct{}

// WithStatusWriter returns ctx carrying the server's negotiating writer, so
// filters outside the server package (authentication, authorization) answer
// in the encoding the client asked for, as kube-apiserver's do.
func WithStatusWriter(ctx context.Context, fn StatusWriter) context.Context {
	return context.WithValue(ctx, statusWriterKey{}, fn)
}

// WriteStatus writes st with the writer of r's context, or as JSON when
// there is none.
func WriteStatus(w http.ResponseWriter, r *http.Request, st api.Status) {
	if fn, ok := r.Context().Value(statusWriterKey{}).(StatusWriter); ok {
		fn(w, r, st)
		return
	}
	apierrors.WriteStatus(w, st)
}

// QueryBool reads a boolean query parameter as kube-apiserver converts one
// (apimachinery's Convert_Slice_string_To_bool): absent is false, "0" and
// "false" in any case are false, and any other value, the empty one
// included, is true ("?watch=True", "?watch=yes", "?watch=").
func QueryBool(q url.Values, key string) bool {
	vs, ok := q[key]
	if !ok || len(vs) == 0 {
		return false
	}
	return vs[0] != "0" && !strings.EqualFold(vs[0], "false")
}
