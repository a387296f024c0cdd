package manifest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/minik8s/minik8s/api"
)

func TestDecode(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		in      string
		want    []string // kind/name
		wantErr string
	}{
		{"multi-doc yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n",
			[]string{"ConfigMap/a", "Deployment/web"}, ""},
		{"json", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"}}`, []string{"Pod/p"}, ""},
		{"json stream", "\n {\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\"}}\n{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"c\"}}{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{\"name\":\"s\"}}]}\n",
			[]string{"Pod/p", "ConfigMap/c", "Secret/s"}, ""},
		{"json stream with a bad object", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"}} {"apiVersion":`, nil, "error parsing in.yaml (object 2)"},
		{"list", "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Service\n  metadata:\n    name: s\n",
			[]string{"Service/s"}, ""},
		{"unknown kind", "apiVersion: v1\nkind: Frob\nmetadata:\n  name: x\n", nil,
			`resource mapping not found for name: "x" namespace: "" from "in.yaml": no matches for kind "Frob" in version "v1"` + "\nensure CRDs are installed first"},
		{"custom kind", "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n",
			[]string{"Widget/w", "Pod/p"}, ""},
		{"no kind", "metadata:\n  name: x\n", nil, "apiVersion not set, kind not set"},
		{"bad yaml", "a: [\n", nil, "error converting YAML to JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			objs, err := Decode([]byte(tt.in), "in.yaml")
			if err == nil {
				var errs []error
				objs, errs = Resolve(objs, findWidget)
				if len(errs) > 0 {
					err = errs[0]
				}
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, o := range objs {
				got = append(got, o.Info.Kind+"/"+o.Name())
			}
			if strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

// findWidget knows one custom kind, as discovery would.
func findWidget(apiVersion, kind string) (api.ResourceInfo, bool) {
	if apiVersion == "example.com/v1" && kind == "Widget" {
		return api.ResourceInfo{Group: "example.com", Version: "v1", Kind: "Widget", Resource: "widgets", Namespaced: true}, true
	}
	return api.ResourceInfo{}, false
}

func TestReadURL(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	mux.HandleFunc("/web.yaml", func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\napiVersion: v1\nkind: Service\nmetadata: {name: s}\n")
	})
	s := httptest.NewServer(mux)
	defer s.Close()
	objs, err := Read([]string{s.URL + "/web.yaml"}, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 2 || objs[0].Name() != "a" || objs[1].Info.Kind != "Service" || objs[0].Source != s.URL+"/web.yaml" {
		t.Errorf("objects from a URL: %+v", objs)
	}
	_, err = Read([]string{s.URL + "/missing.yaml"}, false, nil)
	if want := `unable to read URL "` + s.URL + `/missing.yaml", server reported 404 Not Found, status code=404`; err == nil || err.Error() != want {
		t.Errorf("missing URL: %v, want %s", err, want)
	}
}
