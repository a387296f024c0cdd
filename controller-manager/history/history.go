package history

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"maps"
	"sort"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/controller-manager/controller"
	"github.com/minik8s/minik8s/internal/client"
)

// HashLabel is the label of a revision (and of the pods made from it)
// carrying its hash.
const HashLabel = "controller-revision-hash"

// TemplatePatch is a revision's data for a template, kube's getPatch: a
// strategic merge patch replacing spec.template, byte for byte as kube's
// controllers write it. Clients compare those bytes with their own
// encoding of the parent's template (kube's daemon.Match, which the
// conformance suite's DaemonSet specs use), so the template is encoded as
// k8s.io/api encodes it.
func TemplatePatch(template *api.PodTemplateSpec) (json.RawMessage, error) {
	b, err := json.Marshal(template)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	asKubeEncodes(m)
	m["$patch"] = "replace"
	return json.Marshal(map[string]any{"spec": map[string]any{"template": m}})
}

// asKubeEncodes adds to a template's JSON what k8s.io/api always encodes
// and api leaves out when empty: a container's resources (a struct field
// tagged omitempty, which encoding/json never omits).
func asKubeEncodes(template map[string]any) {
	spec, _ := template["spec"].(map[string]any)
	for _, list := range []string{"initContainers", "containers", "ephemeralContainers"} {
		cs, _ := spec[list].([]any)
		for _, c := range cs {
			if c, ok := c.(map[string]any); ok {
				if _, ok := c["resources"]; !ok {
					c["resources"] = map[string]any{}
				}
			}
		}
	}
}

// Template decodes the template of a revision made by TemplatePatch.
func Template(rev *api.ControllerRevision) (*api.PodTemplateSpec, error) {
	var d struct {
		Spec struct {
			Template api.PodTemplateSpec `json:"template"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(rev.Data, &d); err != nil {
		return nil, fmt.Errorf("decode revision %s: %w", rev.Name, err)
	}
	return &d.Spec.Template, nil
}

// Hash is a revision's hash: FNV-32a of its data and the collision count,
// safe-encoded.
func Hash(data []byte, collisionCount *int32) string {
	h := fnv.New32a()
	h.Write(data)
	if collisionCount != nil {
		buf := make([]byte, 8)
		binary.LittleEndian.PutUint32(buf, uint32(*collisionCount))
		h.Write(buf)
	}
	return controller.SafeEncodeString(fmt.Sprint(h.Sum32()))
}

// New returns the revision of parent (controlled through ref) with data,
// labelled with the template's labels.
func New(parent *api.ObjectMeta, ref api.OwnerReference, templateLabels map[string]string, data json.RawMessage, revision int64, collisionCount *int32) *api.ControllerRevision {
	hash := Hash(data, collisionCount)
	lbls := maps.Clone(templateLabels)
	if lbls == nil {
		lbls = map[string]string{}
	}
	lbls[HashLabel] = hash
	return &api.ControllerRevision{
		TypeMeta: api.TypeMeta{APIVersion: "apps/v1", Kind: "ControllerRevision"},
		ObjectMeta: api.ObjectMeta{Name: Name(parent.Name, hash), Namespace: parent.Namespace, Labels: lbls,
			OwnerReferences: []api.OwnerReference{ref}},
		Data:     data,
		Revision: revision,
	}
}

// Name is kube's ControllerRevisionName: the parent's name, shortened to
// leave room for the hash.
func Name(prefix, hash string) string {
	if len(prefix) > 223 {
		prefix = prefix[:223]
	}
	return prefix + "-" + hash
}

// Equal reports whether two revisions hold the same snapshot.
func Equal(a, b *api.ControllerRevision) bool {
	var ca, cb bytes.Buffer
	if json.Compact(&ca, a.Data) != nil || json.Compact(&cb, b.Data) != nil {
		return bytes.Equal(a.Data, b.Data)
	}
	return bytes.Equal(ca.Bytes(), cb.Bytes())
}

// FindEqual returns the revisions of revs equal to needle.
func FindEqual(revs []*api.ControllerRevision, needle *api.ControllerRevision) []*api.ControllerRevision {
	var out []*api.ControllerRevision
	for _, r := range revs {
		if Equal(r, needle) {
			out = append(out, r)
		}
	}
	return out
}

// Sort orders revisions by revision number, then creation, then name.
func Sort(revs []*api.ControllerRevision) {
	sort.SliceStable(revs, func(i, j int) bool {
		a, b := revs[i], revs[j]
		if a.Revision != b.Revision {
			return a.Revision < b.Revision
		}
		if !a.CreationTimestamp.Time.Equal(b.CreationTimestamp.Time) {
			return a.CreationTimestamp.Time.Before(b.CreationTimestamp.Time)
		}
		return a.Name < b.Name
	})
}

// Next is the number after the highest of sorted revs.
func Next(sorted []*api.ControllerRevision) int64 {
	if len(sorted) == 0 {
		return 1
	}
	return sorted[len(sorted)-1].Revision + 1
}

// Client writes revisions.
type Client struct {
	Client *client.Client
}

func (c Client) revs(ns string) *client.ResourceClient[api.ControllerRevision, *api.ControllerRevision] {
	return client.Resource[api.ControllerRevision](c.Client).Namespace(ns)
}

// Create creates rev; when its name is taken by a different snapshot the
// collision count is raised and the name recomputed, as kube's
// realHistory.CreateControllerRevision. An existing equal revision is
// returned as is.
func (c Client) Create(ctx context.Context, parent *api.ObjectMeta, rev *api.ControllerRevision, collisionCount *int32) (*api.ControllerRevision, error) {
	if collisionCount == nil {
		return nil, fmt.Errorf("collisionCount should not be nil")
	}
	for {
		hash := Hash(rev.Data, collisionCount)
		rev = api.DeepCopy(rev)
		rev.Name = Name(parent.Name, hash)
		rev.Labels[HashLabel] = hash
		created, err := c.revs(parent.Namespace).Create(ctx, rev)
		if apierrors.IsAlreadyExists(err) {
			existing, gerr := c.revs(parent.Namespace).Get(ctx, rev.Name)
			if gerr != nil {
				return nil, gerr
			}
			if Equal(existing, rev) {
				return existing, nil
			}
			*collisionCount++
			continue
		}
		return created, err
	}
}

// UpdateRevision sets rev's revision number.
func (c Client) UpdateRevision(ctx context.Context, rev *api.ControllerRevision, n int64) (*api.ControllerRevision, error) {
	if rev.Revision == n {
		return rev, nil
	}
	patch := fmt.Appendf(nil, `{"revision":%d}`, n)
	return c.revs(rev.Namespace).Patch(ctx, rev.Name, client.MergePatchType, patch)
}

// Delete deletes rev.
func (c Client) Delete(ctx context.Context, rev *api.ControllerRevision) error {
	err := c.revs(rev.Namespace).Delete(ctx, rev.Name, nil)
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// Reconcile returns the revision of template among revs (sorted in place),
// creating it, or renumbering an earlier equal one as the newest (a
// rollback), as kube's StatefulSet and DaemonSet controllers do. collisionCount
// is the parent's status.collisionCount, raised on a hash collision.
func (c Client) Reconcile(ctx context.Context, parent *api.ObjectMeta, ref api.OwnerReference, template *api.PodTemplateSpec, revs []*api.ControllerRevision, collisionCount *int32) (*api.ControllerRevision, error) {
	Sort(revs)
	data, err := TemplatePatch(template)
	if err != nil {
		return nil, err
	}
	want := New(parent, ref, template.Labels, data, Next(revs), collisionCount)
	if equal := FindEqual(revs, want); len(equal) > 0 {
		update := equal[len(equal)-1]
		if update == revs[len(revs)-1] {
			return update, nil
		}
		return c.UpdateRevision(ctx, update, want.Revision)
	}
	return c.Create(ctx, parent, want, collisionCount)
}

// Truncate deletes the oldest of revs not in live beyond limit.
func (c Client) Truncate(ctx context.Context, revs []*api.ControllerRevision, live map[string]bool, limit int) error {
	var old []*api.ControllerRevision
	for _, r := range revs {
		if !live[r.Name] {
			old = append(old, r)
		}
	}
	Sort(old)
	for len(old) > limit {
		if err := c.Delete(ctx, old[0]); err != nil {
			return err
		}
		old = old[1:]
	}
	return nil
}
