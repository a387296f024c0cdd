package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/minik8s/minik8s/api"
)

// Unstructured is an object of a kind known only at run time, as decoded
// JSON. Numbers are json.Number so that large integers survive a round trip.
type Unstructured struct {
	Object map[string]any
}

// MarshalJSON implements json.Marshaler.
func (u Unstructured) MarshalJSON() ([]byte, error) {
	if u.Object == nil {
		return []byte("{}"), nil
	}
	return json.Marshal(u.Object)
}

// UnmarshalJSON implements json.Unmarshaler.
func (u *Unstructured) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return err
	}
	u.Object = m
	return nil
}

func (u *Unstructured) str(path ...string) string {
	var cur any = u.Object
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return ""
		}
		cur = m[p]
	}
	s, _ := cur.(string)
	return s
}

func (u *Unstructured) setStr(v string, path ...string) {
	if u.Object == nil {
		u.Object = map[string]any{}
	}
	m := u.Object
	for _, p := range path[:len(path)-1] {
		next, ok := m[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[p] = next
		}
		m = next
	}
	m[path[len(path)-1]] = v
}

// GetAPIVersion returns apiVersion.
func (u *Unstructured) GetAPIVersion() string { return u.str("apiVersion") }

// GetKind returns kind.
func (u *Unstructured) GetKind() string { return u.str("kind") }

// GetName returns metadata.name.
func (u *Unstructured) GetName() string { return u.str("metadata", "name") }

// GetNamespace returns metadata.namespace.
func (u *Unstructured) GetNamespace() string { return u.str("metadata", "namespace") }

// GetResourceVersion returns metadata.resourceVersion.
func (u *Unstructured) GetResourceVersion() string { return u.str("metadata", "resourceVersion") }

// UnstructuredList is a list of Unstructured with its metadata.
type UnstructuredList struct {
	APIVersion string         `json:"apiVersion,omitempty"`
	Kind       string         `json:"kind,omitempty"`
	ListMeta   api.ListMeta   `json:"metadata"`
	Items      []Unstructured `json:"items"`
}

// DynamicClient has the verbs of ResourceClient for a kind known only at run
// time (the CLI applying manifests). Values are immutable: Namespace returns
// a copy.
type DynamicClient struct {
	r resource
}

// Dynamic returns a client for the resource described by info.
func (c *Client) Dynamic(info api.ResourceInfo) *DynamicClient {
	return &DynamicClient{r: resource{c: c, info: info}}
}

// Namespace returns a copy of the client scoped to ns (see
// ResourceClient.Namespace).
func (d *DynamicClient) Namespace(ns string) *DynamicClient {
	cp := *d
	cp.r.namespace = ns
	return &cp
}

// Info returns the resource the client addresses.
func (d *DynamicClient) Info() api.ResourceInfo { return d.r.info }

func (d *DynamicClient) decode(b []byte) (*Unstructured, error) {
	var u Unstructured
	if err := json.Unmarshal(b, &u); err != nil {
		return nil, fmt.Errorf("decode %s: %w", d.r.info.Kind, err)
	}
	d.setTypeMeta(&u)
	return &u, nil
}

func (d *DynamicClient) setTypeMeta(u *Unstructured) {
	if u.GetKind() == "" {
		u.setStr(d.r.info.Kind, "kind")
	}
	if u.GetAPIVersion() == "" {
		u.setStr(d.r.info.GroupVersion(), "apiVersion")
	}
}

func (d *DynamicClient) encode(verb string, obj *Unstructured) ([]byte, error) {
	if obj == nil || obj.Object == nil {
		return nil, fmt.Errorf("%s %s: nil object", verb, d.r.gr())
	}
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("%s %s %q: encode: %w", verb, d.r.gr(), obj.GetName(), err)
	}
	return b, nil
}

// Get returns the named object.
func (d *DynamicClient) Get(ctx context.Context, name string, subresource ...string) (*Unstructured, error) {
	b, err := d.r.get(ctx, name, subresource...)
	if err != nil {
		return nil, err
	}
	return d.decode(b)
}

// List returns the objects matching opts.
func (d *DynamicClient) List(ctx context.Context, opts ListOptions) (*UnstructuredList, error) {
	b, err := d.r.list(ctx, opts)
	if err != nil {
		return nil, err
	}
	var l UnstructuredList
	if err := json.Unmarshal(b, &l); err != nil {
		return nil, fmt.Errorf("decode %s: %w", d.r.info.ListKind(), err)
	}
	if l.Kind == "" {
		l.Kind = d.r.info.ListKind()
	}
	if l.APIVersion == "" {
		l.APIVersion = d.r.info.GroupVersion()
	}
	for i := range l.Items {
		d.setTypeMeta(&l.Items[i])
	}
	return &l, nil
}

// Create creates obj and returns the stored object.
func (d *DynamicClient) Create(ctx context.Context, obj *Unstructured) (*Unstructured, error) {
	body, err := d.encode("create", obj)
	if err != nil {
		return nil, err
	}
	b, err := d.r.create(ctx, obj.GetNamespace(), obj.GetName(), body)
	if err != nil {
		return nil, err
	}
	return d.decode(b)
}

// Update replaces obj (optimistic lock on its resourceVersion).
func (d *DynamicClient) Update(ctx context.Context, obj *Unstructured) (*Unstructured, error) {
	return d.put(ctx, "update", obj)
}

// UpdateStatus replaces obj's status through /status.
func (d *DynamicClient) UpdateStatus(ctx context.Context, obj *Unstructured) (*Unstructured, error) {
	return d.put(ctx, "update status", obj, "status")
}

func (d *DynamicClient) put(ctx context.Context, verb string, obj *Unstructured, sub ...string) (*Unstructured, error) {
	body, err := d.encode(verb, obj)
	if err != nil {
		return nil, err
	}
	b, err := d.r.update(ctx, obj.GetNamespace(), obj.GetName(), body, sub...)
	if err != nil {
		return nil, err
	}
	return d.decode(b)
}

// Patch patches the named object or one of its subresources.
func (d *DynamicClient) Patch(ctx context.Context, name string, pt PatchType, data []byte, subresource ...string) (*Unstructured, error) {
	b, err := d.r.patch(ctx, name, pt, data, subresource...)
	if err != nil {
		return nil, err
	}
	return d.decode(b)
}

// Delete deletes the named object; opts may be nil.
func (d *DynamicClient) Delete(ctx context.Context, name string, opts *api.DeleteOptions) error {
	return d.r.delete(ctx, name, opts)
}

// DeleteCollection deletes every object matching lo; opts may be nil.
func (d *DynamicClient) DeleteCollection(ctx context.Context, opts *api.DeleteOptions, lo ListOptions) error {
	return d.r.deleteCollection(ctx, opts, lo)
}

// Watch starts a watch (see ResourceClient.Watch).
func (d *DynamicClient) Watch(ctx context.Context, opts ListOptions) (Watcher[Unstructured], error) {
	body, err := d.r.watch(ctx, opts)
	if err != nil {
		return nil, err
	}
	return newStreamWatcher(ctx, body, d.decode), nil
}

// Subresource returns a request on the named object's subresource.
func (d *DynamicClient) Subresource(name, subresource string) *SubresourceRequest {
	return d.r.subresource(name, subresource)
}
