package client

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"strings"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
)

// resource holds what the typed and dynamic clients share: the verbs on
// encoded bodies for one resource in one namespace.
type resource struct {
	c         *Client
	info      api.ResourceInfo
	namespace string
}

func (r resource) gr() apierrors.GroupResource {
	return apierrors.GroupResource{Group: r.info.Group, Resource: r.info.Resource}
}

// nsFor reconciles the client's namespace with the one in an object about to
// be sent. Cluster-scoped resources ignore both.
func (r resource) nsFor(verb, name, objNS string) (string, error) {
	if !r.info.Namespaced {
		return "", nil
	}
	ns := r.namespace
	switch {
	case ns == "":
		ns = objNS
	case objNS != "" && objNS != ns:
		return "", fmt.Errorf("%s %s %q: the namespace of the object (%s) does not match the namespace of the client (%s)",
			verb, r.gr(), name, objNS, ns)
	}
	if ns == "" {
		return "", fmt.Errorf("%s %s %q: a namespace is required for a namespaced resource", verb, r.gr(), name)
	}
	return ns, nil
}

// named validates a name for verbs on one object and returns the namespace to
// address it in.
func (r resource) named(verb, name string) (string, error) {
	if name == "" {
		return "", fmt.Errorf("%s %s: resource name may not be empty", verb, r.gr())
	}
	return r.nsFor(verb, name, "")
}

func (r resource) send(ctx context.Context, req Request, name string) ([]byte, error) {
	return r.c.do(ctx, req, errContext{resource: r.gr(), name: name})
}

func (r resource) get(ctx context.Context, name string, sub ...string) ([]byte, error) {
	ns, err := r.named("get", name)
	if err != nil {
		return nil, err
	}
	return r.send(ctx, Request{Path: ResourcePath(r.info, ns, name, sub...)}, name)
}

func (r resource) list(ctx context.Context, opts ListOptions) ([]byte, error) {
	return r.send(ctx, Request{Path: ResourcePath(r.info, r.namespace, ""), Query: opts.Query()}, "")
}

func (r resource) create(ctx context.Context, objNS, name string, body []byte) ([]byte, error) {
	ns, err := r.nsFor("create", name, objNS)
	if err != nil {
		return nil, err
	}
	return r.send(ctx, Request{Method: http.MethodPost, Path: ResourcePath(r.info, ns, ""), Body: body}, name)
}

func (r resource) update(ctx context.Context, objNS, name string, body []byte, sub ...string) ([]byte, error) {
	if name == "" {
		return nil, fmt.Errorf("update %s: resource name may not be empty", r.gr())
	}
	ns, err := r.nsFor("update", name, objNS)
	if err != nil {
		return nil, err
	}
	return r.send(ctx, Request{Method: http.MethodPut, Path: ResourcePath(r.info, ns, name, sub...), Body: body}, name)
}

func (r resource) patch(ctx context.Context, name string, pt PatchType, data []byte, sub ...string) ([]byte, error) {
	ns, err := r.named("patch", name)
	if err != nil {
		return nil, err
	}
	if pt == "" {
		return nil, fmt.Errorf("patch %s %q: patch type may not be empty", r.gr(), name)
	}
	var q url.Values
	if pt == ApplyPatchType {
		// Server-side apply requires a field manager; name it after the
		// program, as kubectl does.
		q = url.Values{"fieldManager": {fieldManager(r.c.userAgent)}}
	}
	return r.send(ctx, Request{Method: http.MethodPatch, Path: ResourcePath(r.info, ns, name, sub...),
		Query: q, Body: data, ContentType: string(pt)}, name)
}

func deleteBody(opts *api.DeleteOptions) ([]byte, error) {
	if opts == nil {
		return nil, nil
	}
	o := *opts
	o.Kind, o.APIVersion = "DeleteOptions", "v1"
	return json.Marshal(&o)
}

func (r resource) delete(ctx context.Context, name string, opts *api.DeleteOptions) error {
	ns, err := r.named("delete", name)
	if err != nil {
		return err
	}
	body, err := deleteBody(opts)
	if err != nil {
		return fmt.Errorf("delete %s %q: encode options: %w", r.gr(), name, err)
	}
	_, err = r.send(ctx, Request{Method: http.MethodDelete, Path: ResourcePath(r.info, ns, name), Body: body}, name)
	return err
}

func (r resource) deleteCollection(ctx context.Context, opts *api.DeleteOptions, lo ListOptions) error {
	body, err := deleteBody(opts)
	if err != nil {
		return fmt.Errorf("delete collection of %s: encode options: %w", r.gr(), err)
	}
	_, err = r.send(ctx, Request{Method: http.MethodDelete, Path: ResourcePath(r.info, r.namespace, ""),
		Query: lo.Query(), Body: body}, "")
	return err
}

// watch opens a watch stream. The initial request is rate limited and its
// failure (a 410 for a too old resourceVersion, say) is returned as an error;
// the long read after it is not limited.
func (r resource) watch(ctx context.Context, opts ListOptions) (io.ReadCloser, error) {
	q := opts.Query()
	q.Set("watch", "true")
	return r.c.stream(ctx, Request{Path: ResourcePath(r.info, r.namespace, ""), Query: q}, errContext{resource: r.gr()})
}

func (r resource) subresource(name, sub string) *SubresourceRequest {
	ns, err := r.named("request", name)
	return &SubresourceRequest{c: r.c, path: ResourcePath(r.info, ns, name, sub), err: err,
		ec: errContext{resource: r.gr(), name: name}}
}

// ResourceClient is a typed client for one kind in one namespace. T is the Go
// struct (api.Lease); the pointer type *T must implement api.Object. Values
// are immutable: Namespace returns a copy.
type ResourceClient[T any, PT interface {
	*T
	api.Object
}] struct {
	r resource
}

// Resource returns the typed client for T, whose ResourceInfo is the entry of
// api.Resources whose New returns a *T. It panics when T is not registered: a
// programming error to be seen at start-up, not at the first request. Types
// outside the table use ResourceFor.
func Resource[T any, PT interface {
	*T
	api.Object
}](c *Client) *ResourceClient[T, PT] {
	info, err := InfoFor[T, PT]()
	if err != nil {
		panic(err)
	}
	return ResourceFor[T, PT](c, info)
}

// InfoFor finds the ResourceInfo of T in api.Resources.
func InfoFor[T any, PT interface {
	*T
	api.Object
}]() (api.ResourceInfo, error) {
	want := reflect.TypeFor[PT]()
	for _, info := range api.Resources {
		if info.New != nil && reflect.TypeOf(info.New()) == want {
			return info, nil
		}
	}
	return api.ResourceInfo{}, fmt.Errorf("client: %s is not a registered API kind (not in api.Resources); use ResourceFor with an explicit ResourceInfo", want)
}

// ResourceFor returns the typed client for T served as info. It panics on an
// info without a version, kind or resource name.
func ResourceFor[T any, PT interface {
	*T
	api.Object
}](c *Client, info api.ResourceInfo) *ResourceClient[T, PT] {
	if info.Version == "" || info.Kind == "" || info.Resource == "" {
		panic(fmt.Sprintf("client: incomplete ResourceInfo %+v", info))
	}
	return &ResourceClient[T, PT]{r: resource{c: c, info: info}}
}

// Namespace returns a copy of the client scoped to ns. For namespaced kinds an
// empty namespace means all namespaces for List, Watch and DeleteCollection,
// and the object's own namespace for Create and Update. Cluster-scoped kinds
// ignore it.
func (rc *ResourceClient[T, PT]) Namespace(ns string) *ResourceClient[T, PT] {
	cp := *rc
	cp.r.namespace = ns
	return &cp
}

// Info returns the resource the client addresses.
func (rc *ResourceClient[T, PT]) Info() api.ResourceInfo { return rc.r.info }

// GroupResource returns the resource's group and plural name, for messages
// and NotFound errors.
func (rc *ResourceClient[T, PT]) GroupResource() apierrors.GroupResource { return rc.r.gr() }

// decode decodes one object and fills in apiVersion and kind if the server
// left them out (list items usually do).
func (rc *ResourceClient[T, PT]) decode(b []byte) (*T, error) {
	obj := new(T)
	if err := json.Unmarshal(b, obj); err != nil {
		return nil, fmt.Errorf("decode %s: %w", rc.r.info.Kind, err)
	}
	rc.setTypeMeta(obj)
	return obj, nil
}

func (rc *ResourceClient[T, PT]) setTypeMeta(obj *T) {
	tm := PT(obj).GetTypeMeta()
	if tm.Kind == "" {
		tm.Kind = rc.r.info.Kind
	}
	if tm.APIVersion == "" {
		tm.APIVersion = rc.r.info.GroupVersion()
	}
}

func (rc *ResourceClient[T, PT]) encode(verb string, obj *T) (ns, name string, body []byte, err error) {
	if obj == nil {
		return "", "", nil, fmt.Errorf("%s %s: nil object", verb, rc.r.gr())
	}
	m := PT(obj).GetObjectMeta()
	// Send apiVersion/kind even when the caller left them out, without
	// touching the caller's object.
	cp := *obj
	rc.setTypeMeta(&cp)
	body, err = json.Marshal(&cp)
	if err != nil {
		return "", "", nil, fmt.Errorf("%s %s %q: encode: %w", verb, rc.r.gr(), m.Name, err)
	}
	return m.Namespace, m.Name, body, nil
}

// Get returns the named object.
func (rc *ResourceClient[T, PT]) Get(ctx context.Context, name string) (*T, error) {
	b, err := rc.r.get(ctx, name)
	if err != nil {
		return nil, err
	}
	return rc.decode(b)
}

// List returns the objects matching opts. Items carry apiVersion and kind.
func (rc *ResourceClient[T, PT]) List(ctx context.Context, opts ListOptions) (*api.List[T], error) {
	b, err := rc.r.list(ctx, opts)
	if err != nil {
		return nil, err
	}
	var l api.List[T]
	if err := json.Unmarshal(b, &l); err != nil {
		return nil, fmt.Errorf("decode %s: %w", rc.r.info.ListKind(), err)
	}
	if l.Kind == "" {
		l.Kind = rc.r.info.ListKind()
	}
	if l.APIVersion == "" {
		l.APIVersion = rc.r.info.GroupVersion()
	}
	for i := range l.Items {
		rc.setTypeMeta(&l.Items[i])
	}
	return &l, nil
}

// Create creates obj (in the client's namespace, or the object's when the
// client has none) and returns the stored object. obj is not modified.
func (rc *ResourceClient[T, PT]) Create(ctx context.Context, obj *T) (*T, error) {
	ns, name, body, err := rc.encode("create", obj)
	if err != nil {
		return nil, err
	}
	b, err := rc.r.create(ctx, ns, name, body)
	if err != nil {
		return nil, err
	}
	return rc.decode(b)
}

// Update replaces obj. Its metadata.resourceVersion is the optimistic-lock
// precondition: a stale one fails with a Conflict (apierrors.IsConflict).
func (rc *ResourceClient[T, PT]) Update(ctx context.Context, obj *T) (*T, error) {
	return rc.put(ctx, "update", obj)
}

// UpdateStatus replaces obj's status through the /status subresource.
func (rc *ResourceClient[T, PT]) UpdateStatus(ctx context.Context, obj *T) (*T, error) {
	return rc.put(ctx, "update status", obj, "status")
}

func (rc *ResourceClient[T, PT]) put(ctx context.Context, verb string, obj *T, sub ...string) (*T, error) {
	ns, name, body, err := rc.encode(verb, obj)
	if err != nil {
		return nil, err
	}
	b, err := rc.r.update(ctx, ns, name, body, sub...)
	if err != nil {
		return nil, err
	}
	return rc.decode(b)
}

// Patch applies a patch of type pt to the named object, or to its status
// ("status"), and returns the result. Subresources answering with another
// kind (/scale answers a Scale) are patched with Subresource(name,
// sub).Patch; asking Patch for them is an error, not a half-decoded T.
func (rc *ResourceClient[T, PT]) Patch(ctx context.Context, name string, pt PatchType, data []byte, subresource ...string) (*T, error) {
	if len(subresource) > 0 && !(len(subresource) == 1 && subresource[0] == "status") {
		sub := strings.Join(subresource, "/")
		return nil, fmt.Errorf("patch %s %q: the %s subresource answers another kind than %s; use Subresource(%q, %q).Patch",
			rc.r.gr(), name, sub, rc.r.info.Kind, name, sub)
	}
	b, err := rc.r.patch(ctx, name, pt, data, subresource...)
	if err != nil {
		return nil, err
	}
	return rc.decode(b)
}

// Delete deletes the named object; opts may be nil.
func (rc *ResourceClient[T, PT]) Delete(ctx context.Context, name string, opts *api.DeleteOptions) error {
	return rc.r.delete(ctx, name, opts)
}

// DeleteCollection deletes every object matching lo; opts may be nil.
func (rc *ResourceClient[T, PT]) DeleteCollection(ctx context.Context, opts *api.DeleteOptions, lo ListOptions) error {
	return rc.r.deleteCollection(ctx, opts, lo)
}

// Watch starts a watch. The returned Watcher delivers events until the server
// ends the stream, ctx ends or Stop is called, then closes its channel.
func (rc *ResourceClient[T, PT]) Watch(ctx context.Context, opts ListOptions) (Watcher[T], error) {
	body, err := rc.r.watch(ctx, opts)
	if err != nil {
		return nil, err
	}
	return newStreamWatcher(ctx, body, rc.decode), nil
}

// Subresource returns a request on the named object's subresource
// (/binding, /scale, /log, /status, ...).
func (rc *ResourceClient[T, PT]) Subresource(name, subresource string) *SubresourceRequest {
	return rc.r.subresource(name, subresource)
}

// SubresourceRequest is a request to one object's subresource. Values are
// immutable: Param returns a copy.
type SubresourceRequest struct {
	c     *Client
	path  string
	query url.Values
	ec    errContext
	err   error
	// contentType of the body; empty means application/json.
	contentType string
}

// Path returns the request path.
func (s *SubresourceRequest) Path() string { return s.path }

// Param returns a copy of the request with the query parameter k=v added
// (container=, follow=true, tailLines= for /log).
func (s *SubresourceRequest) Param(k, v string) *SubresourceRequest {
	cp := *s
	cp.query = url.Values{}
	for key, vals := range s.query {
		cp.query[key] = append([]string(nil), vals...)
	}
	cp.query.Add(k, v)
	return &cp
}

// Get reads the subresource into out (see Post for out).
func (s *SubresourceRequest) Get(ctx context.Context, out any) error {
	return s.call(ctx, http.MethodGet, nil, out)
}

// Post sends in and decodes the answer into out. in may be []byte (sent as
// is) or any value to encode as JSON; out may be nil (answer discarded),
// *[]byte (raw answer) or a pointer to decode JSON into.
func (s *SubresourceRequest) Post(ctx context.Context, in, out any) error {
	return s.call(ctx, http.MethodPost, in, out)
}

// Put is like Post with PUT (replacing /scale, /status).
func (s *SubresourceRequest) Put(ctx context.Context, in, out any) error {
	return s.call(ctx, http.MethodPut, in, out)
}

// Patch sends a patch of type pt (PATCH /scale, /status) and decodes the
// answer into out (see Post for out).
func (s *SubresourceRequest) Patch(ctx context.Context, pt PatchType, data []byte, out any) error {
	if s.err != nil {
		return s.err
	}
	if pt == "" {
		return fmt.Errorf("patch %s: patch type may not be empty", s.path)
	}
	req := *s
	if pt == ApplyPatchType {
		req = *s.Param("fieldManager", fieldManager(s.c.userAgent))
	}
	req.contentType = string(pt)
	return req.call(ctx, http.MethodPatch, data, out)
}

// Stream sends a GET and returns the open body, for /log?follow=true. The
// caller must close it.
func (s *SubresourceRequest) Stream(ctx context.Context) (io.ReadCloser, error) {
	if s.err != nil {
		return nil, s.err
	}
	return s.c.stream(ctx, Request{Path: s.path, Query: s.query, Accept: "*/*"}, s.ec)
}

func (s *SubresourceRequest) call(ctx context.Context, method string, in, out any) error {
	if s.err != nil {
		return s.err
	}
	var body []byte
	switch v := in.(type) {
	case nil:
	case []byte:
		body = v
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("%s %s: encode body: %w", method, s.path, err)
		}
		body = b
	}
	if method != http.MethodGet && body == nil {
		body = []byte("{}")
	}
	b, err := s.c.do(ctx, Request{Method: method, Path: s.path, Query: s.query, Body: body, ContentType: s.contentType,
		Accept: "application/json, */*"}, s.ec)
	if err != nil {
		return err
	}
	switch o := out.(type) {
	case nil:
		return nil
	case *[]byte:
		*o = b
		return nil
	default:
		if err := json.Unmarshal(b, out); err != nil {
			return fmt.Errorf("%s %s: decode answer: %w", method, s.path, err)
		}
		return nil
	}
}

// fieldManager derives a field manager name from a User-Agent:
// "minik8s-scheduler/v0.1.0 (linux/amd64)" -> "minik8s-scheduler".
func fieldManager(userAgent string) string {
	name, _, _ := strings.Cut(userAgent, "/")
	name, _, _ = strings.Cut(name, " ")
	if name == "" {
		return "minik8s"
	}
	return name
}
