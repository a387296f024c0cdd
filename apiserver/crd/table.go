package crd

import (
	"context"
	"log/slog"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/registry/customresource/tableconvertor"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/apiserver/printers"
)

// newPrinter makes the table printer of one version from its
// additionalPrinterColumns (an Age column when it has none), with kube's
// table convertor, so cells come out as kube-apiserver writes them.
func newPrinter(v *apiextensionsv1.CustomResourceDefinitionVersion, log *slog.Logger) *printers.Printer {
	cols := v.AdditionalPrinterColumns
	if len(cols) == 0 {
		cols = []apiextensionsv1.CustomResourceColumnDefinition{{Name: "Age", Type: "date",
			Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"], JSONPath: ".metadata.creationTimestamp"}}
	}
	conv, err := tableconvertor.New(cols)
	if err != nil {
		// kube serves the columns it could read, too.
		log.Info("invalid printer columns; serving the ones that parse", "version", v.Name, "err", err)
	}
	headers, err := conv.ConvertToTable(context.Background(), &unstructured.Unstructured{Object: map[string]any{}}, nil)
	var defs []api.TableColumnDefinition
	if err == nil {
		for _, h := range headers.ColumnDefinitions {
			defs = append(defs, api.TableColumnDefinition{Name: h.Name, Type: h.Type, Format: h.Format,
				Description: h.Description, Priority: h.Priority})
		}
	}
	return printers.New(defs, func(obj api.Object, _ time.Time) api.TableRow {
		t, err := conv.ConvertToTable(context.Background(), toUnstructured(obj), nil)
		if err != nil || len(t.Rows) == 0 {
			return api.TableRow{Cells: []any{obj.GetObjectMeta().Name}}
		}
		return api.TableRow{Cells: t.Rows[0].Cells}
	})
}
