package openapi

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/minik8s/minik8s/api"
)

// kubeType is what the Kubernetes source says of one API struct: its JSON
// fields and which of them kube-openapi marks required (neither +optional
// nor omitempty).
type kubeType struct {
	fields   map[string]bool
	required map[string]bool
	inlined  []string // definition names of embedded, inlined structs
	lists    map[string]kubeList
}

// kubeList is the patch and list-type metadata of a list field.
type kubeList struct {
	mergeKey, strategy, listType string
	mapKeys                      []string
}

// resolve folds the fields of inlined structs into kt.
func (kt *kubeType) resolve(types map[string]*kubeType) {
	for _, name := range kt.inlined {
		in := types[name]
		if in == nil {
			continue
		}
		in.resolve(types)
		for f := range in.fields {
			kt.fields[f] = true
		}
		for f := range in.required {
			kt.required[f] = true
		}
		for f, l := range in.lists {
			kt.lists[f] = l
		}
	}
	kt.inlined = nil
}

// kubeTypes parses the types.go files of k8s.io/api and apimachinery's
// meta/v1 from the module cache (the versions go.mod pins) and returns them
// by Kubernetes definition name.
func kubeTypes(t *testing.T) map[string]*kubeType {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "k8s.io/api", "k8s.io/apimachinery", "k8s.io/apiextensions-apiserver").Output()
	if err != nil {
		t.Fatalf("go list -m k8s.io/api k8s.io/apimachinery k8s.io/apiextensions-apiserver: %v", err)
	}
	dirs := strings.Fields(string(out))
	if len(dirs) != 3 {
		t.Fatalf("go list printed %q", out)
	}
	type source struct{ prefix, file string }
	sources := []source{
		{metaPrefix, filepath.Join(dirs[1], "pkg/apis/meta/v1/types.go")},
		{metaPrefix, filepath.Join(dirs[1], "pkg/apis/meta/v1/watch.go")},
		{metaPrefix, filepath.Join(dirs[1], "pkg/apis/meta/v1/group_version.go")},
		{"io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1", filepath.Join(dirs[2], "pkg/apis/apiextensions/v1/types.go")},
	}
	for _, gv := range []string{"core/v1", "apps/v1", "batch/v1", "coordination/v1", "discovery/v1", "autoscaling/v1", "policy/v1", "rbac/v1", "certificates/v1",
		"autoscaling/v2", "storage/v1", "resource/v1", "networking/v1", "admissionregistration/v1", "storagemigration/v1", "events/v1",
		"scheduling/v1", "scheduling/v1alpha3", "node/v1", "flowcontrol/v1"} {
		sources = append(sources, source{"io.k8s.api." + strings.ReplaceAll(gv, "/", "."), filepath.Join(dirs[0], gv, "types.go")})
	}
	// apiregistration.k8s.io lives in k8s.io/kube-aggregator, released
	// with k8s.io/api and not a dependency: read from the module cache.
	aggregator := filepath.Join(filepath.Dir(dirs[0]), "kube-aggregator@"+strings.TrimPrefix(filepath.Base(dirs[0]), "api@"), "pkg/apis/apiregistration/v1/types.go")
	if _, err := os.Stat(aggregator); err != nil {
		t.Fatalf("%v: run go mod download k8s.io/kube-aggregator@%s", err, strings.TrimPrefix(filepath.Base(dirs[0]), "api@"))
	}
	sources = append(sources, source{"io.k8s.kube-aggregator.pkg.apis.apiregistration.v1", aggregator})
	types := map[string]*kubeType{}
	fset := token.NewFileSet()
	for _, src := range sources {
		prefix := src.prefix
		f, err := parser.ParseFile(fset, src.file, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			ts, ok := n.(*ast.TypeSpec)
			if !ok {
				return true
			}
			st, ok := ts.Type.(*ast.StructType)
			if !ok {
				return false
			}
			kt := &kubeType{fields: map[string]bool{}, required: map[string]bool{}, lists: map[string]kubeList{}}
			for _, fld := range st.Fields.List {
				if fld.Tag == nil {
					continue
				}
				tag, _ := strconv.Unquote(fld.Tag.Value)
				name, opts, _ := strings.Cut(reflect.StructTag(tag).Get("json"), ",")
				if len(fld.Names) == 0 && name == "" {
					// Embedded and inlined: a type of this package, or
					// TypeMeta/ListMeta of meta/v1.
					switch e := fld.Type.(type) {
					case *ast.Ident:
						kt.inlined = append(kt.inlined, prefix+"."+e.Name)
					case *ast.SelectorExpr:
						kt.inlined = append(kt.inlined, metaPrefix+"."+e.Sel.Name)
					}
					continue
				}
				if name == "" || name == "-" {
					continue
				}
				kt.fields[name] = true
				var doc string
				if fld.Doc != nil {
					// Text() drops "//+marker" lines; read the raw comments.
					for _, c := range fld.Doc.List {
						doc += c.Text + "\n"
					}
				}
				st := reflect.StructTag(tag)
				l := kubeList{mergeKey: st.Get("patchMergeKey"), strategy: st.Get("patchStrategy")}
				for _, line := range strings.Split(doc, "\n") {
					line = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "//"))
					if v, ok := strings.CutPrefix(line, "+listType="); ok {
						l.listType = v
					}
					if v, ok := strings.CutPrefix(line, "+listMapKey="); ok {
						l.mapKeys = append(l.mapKeys, v)
					}
				}
				if l.mergeKey != "" || l.strategy != "" || l.listType != "" || l.mapKeys != nil {
					kt.lists[name] = l
				}
				optional := strings.Contains(doc, "+optional")
				if !optional && !strings.Contains(opts, "omitempty") {
					kt.required[name] = true
				}
			}
			types[prefix+"."+ts.Name.Name] = kt
			return false
		})
	}
	for _, kt := range types {
		kt.resolve(types)
	}
	return types
}

// TestAgainstKubernetesSource checks the generated definitions against the
// Kubernetes types they stand for: every definition exists there under the
// same name with the same fields, and nothing is required that Kubernetes
// leaves optional (kubectl's client-side validation would then reject
// manifests that real clusters accept).
func TestAgainstKubernetesSource(t *testing.T) {
	t.Parallel()
	kube := kubeTypes(t)
	if len(kube) < 100 || kube["io.k8s.api.core.v1.PodSpec"] == nil || kube[metaPrefix+".ObjectMeta"] == nil {
		t.Fatalf("parsed only %d Kubernetes types", len(kube))
	}
	d, err := New(api.Resources)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Definitions map[string]struct {
			Properties map[string]struct {
				Type        string   `json:"type"`
				MergeKey    string   `json:"x-kubernetes-patch-merge-key"`
				Strategy    string   `json:"x-kubernetes-patch-strategy"`
				ListType    string   `json:"x-kubernetes-list-type"`
				ListMapKeys []string `json:"x-kubernetes-list-map-keys"`
			} `json:"properties"`
			Required []string `json:"required"`
		} `json:"definitions"`
	}
	if err := json.Unmarshal(mustV2(d).plainJSON(), &doc); err != nil {
		t.Fatal(err)
	}
	// Definitions that are not structs in Kubernetes, or not of these files.
	scalars := map[string]bool{timeName: true, microTimeName: true, fieldsV1Name: true, patchName: true, quantityName: true, intOrStringName: true}
	for name, def := range doc.Definitions {
		if scalars[name] {
			continue
		}
		kt := kube[name]
		if kt == nil {
			if strings.HasSuffix(name, "List") && kube[strings.TrimSuffix(name, "List")] != nil {
				continue // api.List[T] stands for every TList
			}
			t.Errorf("%s: no such Kubernetes type", name)
			continue
		}
		for p, ps := range def.Properties {
			if p == "apiVersion" || p == "kind" || (p == "metadata" && kt.fields["metadata"]) {
				continue
			}
			if !kt.fields[p] {
				t.Errorf("%s.%s: Kubernetes has no such field", name, p)
				continue
			}
			if ps.Type != "array" {
				continue
			}
			kl := kt.lists[p]
			if ps.MergeKey != kl.mergeKey || ps.Strategy != kl.strategy {
				t.Errorf("%s.%s: patch merge key %q strategy %q; Kubernetes has %q %q", name, p, ps.MergeKey, ps.Strategy, kl.mergeKey, kl.strategy)
			}
			if ps.ListType != "" && (ps.ListType != kl.listType || !slices.Equal(ps.ListMapKeys, kl.mapKeys)) {
				t.Errorf("%s.%s: list type %q keys %v; Kubernetes has %q %v", name, p, ps.ListType, ps.ListMapKeys, kl.listType, kl.mapKeys)
			}
			if ps.ListType == "" && ps.MergeKey != "" && kl.listType != "" {
				t.Logf("%s.%s: no list type; Kubernetes has %q %v", name, p, kl.listType, kl.mapKeys)
			}
		}
		for _, r := range def.Required {
			if !kt.required[r] {
				t.Errorf("%s.%s is marked required; Kubernetes leaves it optional", name, r)
			}
		}
	}
}
