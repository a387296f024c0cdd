package registry

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/api/fields"
	"github.com/minik8s/minik8s/api/labels"
	"github.com/minik8s/minik8s/apiserver/cacher"
	"github.com/minik8s/minik8s/apiserver/storage"
)

// ListOptions select and page a list or a watch.
type ListOptions struct {
	Labels labels.Selector
	Fields fields.Selector
	// ResourceVersion and ResourceVersionMatch have Kubernetes' meaning:
	// "" = consistent (most recent), "0" = any, N = not older than N
	// (or exactly N with match "Exact", read from etcd).
	ResourceVersion      string
	ResourceVersionMatch string
	Limit                int64
	Continue             string
	// EncodedOnly says the caller reads the items' JSON only: an Item's
	// Object may then be nil (a store that keeps encodings only does not
	// decode them for it).
	EncodedOnly bool
	// Watch only.
	AllowBookmarks    bool
	SendInitialEvents *bool
}

// Item is one object of a list: its encoding, ready to send, and the object
// (shared: copy before changing it).
type Item struct {
	JSON   []byte
	Object api.Object
}

// ListResult is one page of a list.
type ListResult struct {
	Items              []Item
	ResourceVersion    string
	Continue           string
	RemainingItemCount *int64
}

// Predicate returns the cache predicate for opts.
func (s *Store) predicate(ns string, opts ListOptions) cacher.Predicate {
	p := cacher.Predicate{Namespace: ns}
	if opts.Labels != nil && !opts.Labels.Empty() {
		sel := opts.Labels
		p.Label = func(l map[string]string) bool { return sel.Matches(labels.Set(l)) }
	}
	if opts.Fields != nil && !opts.Fields.Empty() {
		sel := opts.Fields
		p.Field = func(f map[string]string) bool { return sel.Matches(fields.Set(f)) }
		if v, ok := sel.RequiresExactMatch("metadata.name"); ok {
			p.Name = v
		}
		p.IndexField, p.IndexValue = s.exactIndex(sel)
	}
	if !s.Info.Namespaced {
		p.Namespace = ""
	}
	return p
}

// exactIndex picks the field watchers are indexed by, so a kubelet watching
// its own pods is not woken for every pod.
func (s *Store) exactIndex(sel fields.Selector) (string, string) {
	for _, f := range []string{"spec.nodeName"} {
		if v, ok := sel.RequiresExactMatch(f); ok {
			return f, v
		}
	}
	return "", ""
}

func (s *Store) matches(p cacher.Predicate, lbls, flds map[string]string) bool {
	if p.Label != nil && !p.Label(lbls) {
		return false
	}
	if p.Field != nil && !p.Field(flds) {
		return false
	}
	return true
}

// List returns the objects in ns ("" = all) that match opts. Unpaged lists
// come from the watch cache; paged lists and exact-revision reads from etcd,
// at one snapshot revision across pages.
func (s *Store) List(ctx context.Context, ns string, opts ListOptions) (*ListResult, error) {
	if opts.Limit > 0 || opts.Continue != "" || opts.ResourceVersionMatch == "Exact" {
		return s.listFromStorage(ctx, ns, opts)
	}
	objs, rev, err := s.cache.List(ctx, cacher.ListOptions{
		Namespace:       nsIf(s.Info.Namespaced, ns),
		Predicate:       s.predicate(ns, opts),
		ResourceVersion: opts.ResourceVersion,
		Consistent:      opts.ResourceVersion == "",
	})
	if err != nil {
		return nil, s.storageError(err, "")
	}
	out := &ListResult{ResourceVersion: strconv.FormatInt(rev, 10), Items: make([]Item, len(objs))}
	for i, o := range objs {
		out.Items[i].JSON = o.JSON
		if o.Value == nil && opts.EncodedOnly {
			continue
		}
		v, ok := o.Decoded().(api.Object)
		if !ok {
			return nil, apierrors.NewInternalError(fmt.Errorf("decode %s %s from the watch cache", s.Info.Resource, o.Key))
		}
		out.Items[i].Object = v
	}
	return out, nil
}

func nsIf(namespaced bool, ns string) string {
	if namespaced {
		return ns
	}
	return ""
}

// continueToken is Kubernetes' continue token: the revision of the first
// page and the key to start the next page at, relative to the list prefix.
type continueToken struct {
	APIVersion      string `json:"v"`
	ResourceVersion int64  `json:"rv"`
	StartKey        string `json:"start"`
}

func encodeContinue(rev int64, start string) string {
	b, _ := json.Marshal(continueToken{APIVersion: "meta.k8s.io/v1", ResourceVersion: rev, StartKey: start})
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeContinue(tok string) (continueToken, error) {
	var ct continueToken
	b, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil {
		return ct, fmt.Errorf("continue key is not valid: %v", err)
	}
	// A resourceVersion of -1 is the inconsistent continuation a 410 for
	// a compacted token carries: the rest of the list at the latest
	// revision, as kube-apiserver's.
	if err := json.Unmarshal(b, &ct); err != nil || ct.APIVersion != "meta.k8s.io/v1" || ct.ResourceVersion == 0 || ct.ResourceVersion < -1 {
		return ct, errors.New("continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)")
	}
	if strings.Contains(ct.StartKey, "..") || strings.HasPrefix(ct.StartKey, "/") {
		return ct, errors.New("continue key is not valid: invalid start key")
	}
	return ct, nil
}

func (s *Store) listFromStorage(ctx context.Context, ns string, opts ListOptions) (*ListResult, error) {
	prefix := s.prefix(nsIf(s.Info.Namespaced, ns))
	pred := s.predicate(ns, opts)
	var rev int64
	start := ""
	if opts.Continue != "" {
		if opts.ResourceVersion != "" && opts.ResourceVersion != "0" {
			return nil, apierrors.NewBadRequest("specifying resource version is not allowed when using continue")
		}
		ct, err := decodeContinue(opts.Continue)
		if err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		rev, start = max(ct.ResourceVersion, 0), ct.StartKey
	} else if opts.ResourceVersionMatch == "Exact" {
		r, err := strconv.ParseInt(opts.ResourceVersion, 10, 64)
		if err != nil || r <= 0 {
			return nil, apierrors.NewBadRequest("resourceVersionMatch=Exact requires a resourceVersion greater than zero")
		}
		rev = r
	}
	filtered := pred.Label != nil || pred.Field != nil
	out := &ListResult{}
	limit := opts.Limit
	for {
		res, err := s.storage.List(ctx, prefix, storage.ListOptions{Limit: limit, StartKey: prefixed(prefix, start), Revision: rev})
		var compacted *storage.CompactedError
		if errors.As(err, &compacted) && opts.Continue != "" {
			// The Status carries the token of an inconsistent
			// continuation from the same key.
			gone := apierrors.NewResourceExpired("The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.")
			gone.ErrStatus.Continue = encodeContinue(-1, start)
			return nil, gone
		}
		if err != nil {
			return nil, s.storageError(err, "")
		}
		rev = res.Revision
		for _, kv := range res.KVs {
			obj, err := s.decodeItem(kv.Key, kv.Value, kv.ModRevision)
			if err != nil {
				return nil, apierrors.NewInternalError(err)
			}
			start = strings.TrimPrefix(kv.Key, prefix) + "\x00"
			if !s.matches(pred, obj.Labels, obj.Fields) {
				continue
			}
			out.Items = append(out.Items, Item{JSON: obj.JSON, Object: obj.Value.(api.Object)})
			if opts.Limit > 0 && int64(len(out.Items)) == opts.Limit {
				break
			}
		}
		full := opts.Limit > 0 && int64(len(out.Items)) >= opts.Limit
		if full || !res.More {
			if res.More || (full && lastKVNotLast(res, start, prefix)) {
				out.Continue = encodeContinue(rev, start)
				if !filtered {
					remaining := res.RemainingCount
					out.RemainingItemCount = &remaining
				}
			}
			break
		}
	}
	out.ResourceVersion = strconv.FormatInt(rev, 10)
	return out, nil
}

// lastKVNotLast reports whether the page stopped before the last key read.
func lastKVNotLast(res storage.ListResult, start, prefix string) bool {
	if len(res.KVs) == 0 {
		return false
	}
	last := strings.TrimPrefix(res.KVs[len(res.KVs)-1].Key, prefix) + "\x00"
	return last != start
}

func prefixed(prefix, start string) string {
	if start == "" {
		return ""
	}
	return prefix + start
}

// Watch starts a watch on ns ("" = all) from the watch cache.
func (s *Store) Watch(ctx context.Context, ns string, opts ListOptions) (*cacher.Watcher, error) {
	w, err := s.cache.Watch(ctx, cacher.WatchOptions{
		Namespace:         nsIf(s.Info.Namespaced, ns),
		Predicate:         s.predicate(ns, opts),
		ResourceVersion:   opts.ResourceVersion,
		AllowBookmarks:    opts.AllowBookmarks,
		SendInitialEvents: opts.SendInitialEvents,
	})
	if err != nil {
		return nil, s.storageError(err, "")
	}
	return w, nil
}

// DeleteCollection deletes every object in ns matching opts and returns them.
func (s *Store) DeleteCollection(ctx context.Context, ns string, opts ListOptions, del *api.DeleteOptions, dryRun bool) ([]api.Object, error) {
	list, err := s.List(ctx, ns, ListOptions{Labels: opts.Labels, Fields: opts.Fields})
	if err != nil {
		return nil, err
	}
	var out []api.Object
	for _, it := range list.Items {
		m := it.Object.GetObjectMeta()
		obj, _, err := s.Delete(ctx, m.Namespace, m.Name, del, dryRun)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return out, err
		}
		out = append(out, obj)
	}
	return out, nil
}
