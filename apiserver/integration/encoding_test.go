package integration

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"reflect"
	"testing"

	"github.com/minik8s/minik8s/apiserver/apiservertest"
)

// TestCreateResponseIsTheStoredObject checks the encodings the create path
// and the watch cache make from the stored bytes (resourceVersion spliced in,
// not encoded again): the create response is byte for byte what GET returns,
// and the watch event and the cached LIST item carry the same object.
func TestCreateResponseIsTheStoredObject(t *testing.T) {
	s := apiservertest.Start(t)
	c := newClient(t, s)
	base := "/api/v1/namespaces/default/pods"
	resp, err := http.Get(s.URL() + base + "?watch=true&resourceVersion=0")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	lines := bufio.NewScanner(resp.Body)
	lines.Buffer(make([]byte, 1<<20), 1<<20)

	p := pod("enc-1", "c")
	p["metadata"].(map[string]any)["annotations"] = map[string]string{
		"note": `quotes " and braces {"metadata":{}} and <html> & unicode é`}
	p["metadata"].(map[string]any)["labels"] = map[string]string{"app": "enc"}
	created := c.do("POST", base, p, "")
	if created.Code != http.StatusCreated {
		t.Fatalf("create: %d %s", created.Code, created.Body)
	}
	got := c.do("GET", base+"/enc-1", nil, "")
	if got.Code != http.StatusOK {
		t.Fatalf("get: %d %s", got.Code, got.Body)
	}
	if !bytes.Equal(created.Body, got.Body) {
		t.Fatalf("create response differs from GET:\n%s\n%s", created.Body, got.Body)
	}
	want := got.obj(t)
	if rv(want) == "" {
		t.Fatalf("no resourceVersion in %s", got.Body)
	}

	for lines.Scan() {
		var ev struct {
			Type   string          `json:"type"`
			Object json.RawMessage `json:"object"`
		}
		if err := json.Unmarshal(lines.Bytes(), &ev); err != nil {
			t.Fatalf("watch line %s: %v", lines.Bytes(), err)
		}
		if ev.Type != "ADDED" {
			continue
		}
		var obj map[string]any
		if err := json.Unmarshal(ev.Object, &obj); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(obj, want) {
			t.Fatalf("watch event object differs from GET:\n%s\n%s", ev.Object, got.Body)
		}
		break
	}

	list := c.must(http.StatusOK, "GET", base+"?labelSelector=app%3Denc", nil)
	items, _ := list["items"].([]any)
	if len(items) != 1 {
		t.Fatalf("list: %d items", len(items))
	}
	item := items[0].(map[string]any)
	// List items carry no kind/apiVersion, as in Kubernetes.
	delete(want, "kind")
	delete(want, "apiVersion")
	delete(item, "kind")
	delete(item, "apiVersion")
	if !reflect.DeepEqual(item, want) {
		t.Fatalf("list item differs from GET:\n%v\n%v", item, want)
	}
}
