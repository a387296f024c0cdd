package printers_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	genericrest "k8s.io/apiserver/pkg/registry/rest"
	cliprinters "k8s.io/cli-runtime/pkg/printers"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	_ "k8s.io/kubernetes/pkg/apis/admissionregistration/install"
	_ "k8s.io/kubernetes/pkg/apis/apps/install"
	_ "k8s.io/kubernetes/pkg/apis/autoscaling/install"
	_ "k8s.io/kubernetes/pkg/apis/batch/install"
	_ "k8s.io/kubernetes/pkg/apis/certificates/install"
	_ "k8s.io/kubernetes/pkg/apis/coordination/install"
	_ "k8s.io/kubernetes/pkg/apis/core/install"
	_ "k8s.io/kubernetes/pkg/apis/discovery/install"
	_ "k8s.io/kubernetes/pkg/apis/events/install"
	_ "k8s.io/kubernetes/pkg/apis/networking/install"
	_ "k8s.io/kubernetes/pkg/apis/policy/install"
	_ "k8s.io/kubernetes/pkg/apis/rbac/install"
	_ "k8s.io/kubernetes/pkg/apis/resource/install"
	_ "k8s.io/kubernetes/pkg/apis/storage/install"
	_ "k8s.io/kubernetes/pkg/apis/storagemigration/install"
	kprinters "k8s.io/kubernetes/pkg/printers"
	printersinternal "k8s.io/kubernetes/pkg/printers/internalversion"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/defaults"
	"github.com/minik8s/minik8s/apiserver/printers"
	"github.com/minik8s/minik8s/apiserver/transform"
	kl "github.com/minik8s/minik8s/kubectl-lite/printers"
)

// tc is one object to print: its kind, apiVersion and JSON, where
// AGO(duration) stands for the time that long before the test runs.
type tc struct{ kind, apiVersion, obj string }

var agoRE = regexp.MustCompile(`AGO\(([^)]*)\)`)

func expand(t *testing.T, s string, now time.Time) string {
	return agoRE.ReplaceAllStringFunc(s, func(m string) string {
		d, err := time.ParseDuration(agoRE.FindStringSubmatch(m)[1])
		if err != nil {
			t.Fatalf("case time %s: %v", m, err)
		}
		return now.Add(-d).UTC().Format(time.RFC3339)
	})
}

var generator = kprinters.NewTableGenerator().With(printersinternal.AddHandlers)

// kubeTable is the Table kube-apiserver serves for the object (wide
// columns included, rows carrying PartialObjectMetadata).
func kubeTable(c tc, data []byte) (*metav1.Table, error) {
	gv, err := schema.ParseGroupVersion(c.apiVersion)
	if err != nil {
		return nil, err
	}
	obj, _, err := legacyscheme.Codecs.UniversalDecoder(schema.GroupVersion{Group: gv.Group, Version: runtime.APIVersionInternal}).Decode(data, nil, nil)
	if err != nil {
		return nil, err
	}
	var table *metav1.Table
	if c.kind == "Role" || c.kind == "ClusterRole" {
		// kube-apiserver has no printer for these: the default convertor.
		table, err = genericrest.NewDefaultTableConvertor(schema.GroupResource{}).ConvertToTable(nil, obj, nil)
	} else {
		table, err = generator.GenerateTable(obj, kprinters.GenerateOptions{Wide: true})
	}
	if err != nil {
		return nil, err
	}
	for i := range table.Rows {
		v := reflect.ValueOf(table.Rows[i].Object.Object).Elem().FieldByName("ObjectMeta")
		if !v.IsValid() {
			return nil, fmt.Errorf("%T has no ObjectMeta", table.Rows[i].Object.Object)
		}
		p := &metav1.PartialObjectMetadata{ObjectMeta: v.Interface().(metav1.ObjectMeta)}
		p.APIVersion, p.Kind = "meta.k8s.io/v1", "PartialObjectMetadata"
		table.Rows[i].Object = runtime.RawExtension{Object: p}
	}
	return table, nil
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// printed is one case's table from both servers, ready for the printers.
type printed struct {
	kind string
	kube *metav1.Table
	mine *api.Table
}

// TestTablesMatchKubernetes compares, case by case, what minik8s' server
// puts in a Table with what kube-apiserver's printers put in it, then
// prints both as kubectl and kubectl-lite do, with every decoration.
func TestTablesMatchKubernetes(t *testing.T) {
	now := time.Now()
	var tables []printed
	for _, c := range cases {
		data := []byte(expand(t, c.obj, now))
		var meta struct {
			Metadata struct{ Name string } `json:"metadata"`
		}
		if err := json.Unmarshal(data, &meta); err != nil {
			t.Fatalf("case %s %.60s: %v", c.kind, c.obj, err)
		}
		name := c.kind + "/" + meta.Metadata.Name
		t.Run("cells/"+name, func(t *testing.T) {
			info, ok := api.LookupKind(c.apiVersion, c.kind)
			if !ok {
				t.Fatalf("minik8s does not serve %s %s", c.apiVersion, c.kind)
			}
			obj := info.New()
			if err := json.Unmarshal(data, obj); err != nil {
				t.Fatal(err)
			}
			defaults.Default(obj)
			p := printers.For(c.kind)
			conv, err := transform.New(transform.Target{Group: "meta.k8s.io", Version: "v1", Kind: "Table"}, info, map[string][]string{"includeObject": {"None"}})
			if err != nil {
				t.Fatal(err)
			}
			// Both printers read the clock for ages: a second that ticks
			// between the two calls makes an age differ by one, so a
			// comparison is made again (at most twice) before it counts.
			var (
				kt   *metav1.Table
				row  api.TableRow
				diff []string
			)
			for attempt := 0; attempt < 3; attempt++ {
				before := time.Now()
				if kt, err = kubeTable(c, data); err != nil {
					t.Fatalf("kube printer: %v", err)
				}
				row = p.Row(obj, before)
				mineWire, err := conv.Object(obj, nil)
				if err != nil {
					t.Fatal(err)
				}
				diff = nil
				if k, m := mustJSON(t, kt.ColumnDefinitions), mustJSON(t, p.Columns); k != m {
					diff = append(diff, fmt.Sprintf("columns differ\n kube %s\n mine %s", k, m))
				}
				if k, m := mustJSON(t, kt.Rows[0].Cells), mustJSON(t, row.Cells); k != m {
					diff = append(diff, fmt.Sprintf("cells differ\n kube %s\n mine %s", k, m))
				}
				if k, m := mustJSON(t, kt.Rows[0].Conditions), mustJSON(t, row.Conditions); k != m {
					diff = append(diff, fmt.Sprintf("row conditions differ\n kube %s\n mine %s", k, m))
				}
				// The wire form with includeObject=None.
				kw := kt.DeepCopy()
				for r := range kw.Rows {
					kw.Rows[r].Object = runtime.RawExtension{}
				}
				kw.APIVersion, kw.Kind, kw.ResourceVersion = "meta.k8s.io/v1", "Table", ""
				if k := mustJSON(t, kw); k != string(mineWire) {
					diff = append(diff, fmt.Sprintf("Table on the wire differs\n kube %s\n mine %s", k, mineWire))
				}
				if len(diff) == 0 {
					break
				}
			}
			for _, d := range diff {
				t.Error(d)
			}

			// minik8s' table as kubectl-lite reads it from the wire.
			mt := &api.Table{ColumnDefinitions: p.Columns, Rows: []api.TableRow{{Cells: row.Cells, Object: []byte(mustJSON(t, kt.Rows[0].Object.Object))}}}
			var back api.Table
			dec := json.NewDecoder(bytes.NewReader([]byte(mustJSON(t, mt))))
			dec.UseNumber()
			if err := dec.Decode(&back); err != nil {
				t.Fatal(err)
			}
			tables = append(tables, printed{kind: c.kind, kube: kt, mine: &back})
		})
	}
	if t.Failed() {
		return // the printing below compares whole kinds
	}

	for _, opts := range []struct {
		name string
		k    cliprinters.PrintOptions
		m    kl.TableOptions
	}{
		{"plain", cliprinters.PrintOptions{}, kl.TableOptions{}},
		{"wide", cliprinters.PrintOptions{Wide: true}, kl.TableOptions{Wide: true}},
		{"all-namespaces", cliprinters.PrintOptions{WithNamespace: true}, kl.TableOptions{WithNamespace: true}},
		{"kind-and-labels", cliprinters.PrintOptions{WithKind: true, Kind: schema.GroupKind{Group: "apps", Kind: "Deployment"}, ShowLabels: true, ColumnLabels: []string{"app", "x/tier"}},
			kl.TableOptions{Kind: "deployment.apps", ShowLabels: true, LabelColumns: []string{"app", "x/tier"}}},
		{"no-headers-wide-all-namespaces", cliprinters.PrintOptions{NoHeaders: true, Wide: true, WithNamespace: true}, kl.TableOptions{NoHeaders: true, Wide: true, WithNamespace: true}},
	} {
		// One printed table per kind, as kubectl get KIND prints it.
		for i := 0; i < len(tables); {
			j := i
			for j < len(tables) && tables[j].kind == tables[i].kind {
				j++
			}
			t.Run("print/"+opts.name+"/"+tables[i].kind, func(t *testing.T) {
				var kb, mb bytes.Buffer
				kw := cliprinters.GetNewTabWriter(&kb)
				kp := cliprinters.NewTablePrinter(opts.k)
				mw := kl.NewTabWriter(&mb)
				mp := kl.NewTablePrinter(mw, opts.m)
				for k := i; k < j; k++ {
					if err := kp.PrintObj(kubectlTable(t, tables[k].kube, true), kw); err != nil {
						t.Fatalf("kubectl's printer: %v", err)
					}
					mp.Print(tables[k].mine, "")
				}
				kw.Flush()
				mw.Flush()
				if kb.String() != mb.String() {
					t.Errorf("printed tables differ\n--- kubectl\n%s--- kubectl-lite\n%s", kb.String(), mb.String())
				}
			})
			i = j
		}
	}

	// A watch: a table per event, the columns in the first only, one
	// flush per event, as kubectl get -w [--output-watch-events] prints.
	for _, withEvents := range []bool{false, true} {
		t.Run(fmt.Sprintf("watch/events=%v", withEvents), func(t *testing.T) {
			var kb, mb bytes.Buffer
			kw := cliprinters.GetNewTabWriter(&kb)
			kp := cliprinters.NewTablePrinter(cliprinters.PrintOptions{WithNamespace: true})
			mw := kl.NewTabWriter(&mb)
			mp := kl.NewTablePrinter(mw, kl.TableOptions{WithNamespace: true})
			first := true
			for _, tb := range tables {
				if tb.kind != "Pod" {
					continue
				}
				kt := kubectlTable(t, tb.kube, false)
				mt := *tb.mine
				ev := "ADDED"
				if !first {
					kt.ColumnDefinitions, mt.ColumnDefinitions = nil, nil
					ev = "MODIFIED"
				}
				var obj runtime.Object = kt
				mineEvent := ""
				if withEvents {
					obj = &metav1.WatchEvent{Type: ev, Object: runtime.RawExtension{Object: kt}}
					mineEvent = ev
				}
				if err := kp.PrintObj(obj, kw); err != nil {
					t.Fatalf("kubectl's printer: %v", err)
				}
				kw.Flush()
				mp.Print(&mt, mineEvent)
				mw.Flush()
				first = false
			}
			if kb.String() != mb.String() {
				t.Errorf("printed watch differs\n--- kubectl\n%s--- kubectl-lite\n%s", kb.String(), mb.String())
			}
		})
	}
}

// kubectlTable is the table as kubectl holds it after decoding the
// server's JSON: rows' objects unstructured, and (intNumbers) whole
// numbers as int64, as its decoder makes them.
func kubectlTable(t *testing.T, kt *metav1.Table, intNumbers bool) *metav1.Table {
	t.Helper()
	var out metav1.Table
	if err := json.Unmarshal([]byte(mustJSON(t, kt)), &out); err != nil {
		t.Fatal(err)
	}
	for r := range out.Rows {
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(out.Rows[r].Object.Raw); err != nil {
			t.Fatal(err)
		}
		out.Rows[r].Object.Object = u
		if !intNumbers {
			continue
		}
		for c := range out.Rows[r].Cells {
			if f, ok := out.Rows[r].Cells[c].(float64); ok {
				out.Rows[r].Cells[c] = int64(f)
			}
		}
	}
	return &out
}
