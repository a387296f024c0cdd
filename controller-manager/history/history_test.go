package history

import (
	"strings"
	"testing"

	"github.com/minik8s/minik8s/api"
)

func TestTemplatePatchRoundTrip(t *testing.T) {
	t.Parallel()
	tmpl := &api.PodTemplateSpec{ObjectMeta: api.ObjectMeta{Labels: map[string]string{"app": "web"}},
		Spec: api.PodSpec{Containers: []api.Container{{Name: "c", Image: "nginx:1"}}}}
	data, err := TemplatePatch(tmpl)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"$patch":"replace"`) {
		t.Errorf("patch %s does not replace the template", data)
	}
	got, err := Template(&api.ControllerRevision{Data: data})
	if err != nil || got.Spec.Containers[0].Image != "nginx:1" || got.Labels["app"] != "web" {
		t.Fatalf("Template = %+v, %v", got, err)
	}
}

func TestNewNameHashAndEqual(t *testing.T) {
	t.Parallel()
	meta := &api.ObjectMeta{Name: "web", Namespace: "ns"}
	a := New(meta, api.OwnerReference{Name: "web"}, map[string]string{"app": "web"}, []byte(`{"a": 1}`), 1, nil)
	if a.Name != "web-"+a.Labels[HashLabel] || a.Labels["app"] != "web" || a.Namespace != "ns" || a.Revision != 1 {
		t.Fatalf("revision %+v", a)
	}
	one := int32(1)
	if c := New(meta, api.OwnerReference{}, nil, []byte(`{"a": 1}`), 1, &one); c.Name == a.Name {
		t.Errorf("a collision count does not change the name")
	}
	b := New(meta, api.OwnerReference{}, nil, []byte(`{"a":1}`), 2, nil)
	if !Equal(a, b) {
		t.Errorf("revisions differing in whitespace only are not equal")
	}
	if Equal(a, New(meta, api.OwnerReference{}, nil, []byte(`{"a":2}`), 2, nil)) {
		t.Errorf("different data equal")
	}
}

func TestSortAndNext(t *testing.T) {
	t.Parallel()
	revs := []*api.ControllerRevision{{Revision: 3}, {Revision: 1}, {Revision: 2}}
	Sort(revs)
	if revs[0].Revision != 1 || revs[2].Revision != 3 || Next(revs) != 4 || Next(nil) != 1 {
		t.Fatalf("sorted %d %d %d, next %d", revs[0].Revision, revs[1].Revision, revs[2].Revision, Next(revs))
	}
}
