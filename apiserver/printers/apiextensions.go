package printers

import (
	"slices"
	"strings"
	"time"

	"github.com/minik8s/minik8s/api"
)

// apiextensions-apiserver's table of CustomResourceDefinitions (its
// tableconvertor package, as v1.37 serves it): the scope and the served versions, the
// storage one marked, then -o wide the group, kind, short names and
// whether the CRD is established.
var customResourceDefinitionPrinter = printer([]api.TableColumnDefinition{
	nameColumn,
	col("Scope", "string", "Cluster/Namespaced"),
	col("Versions", "string", "Served versions"),
	{Name: "Created At", Type: "date", Description: metaDoc["creationTimestamp"]},
	wide(col("Group", "string", "API group"))[0],
	wide(col("Kind", "string", "CustomResource kind"))[0],
	wide(col("ShortNames", "string", "Short names"))[0],
	wide(col("Established", "boolean", "Established status"))[0],
}, func(o *api.CustomResourceDefinition, _ time.Time) api.TableRow {
	var versions []string
	for _, v := range o.Spec.Versions {
		if !v.Served {
			continue
		}
		label := v.Name
		if v.Storage {
			label += "(storage)"
		}
		versions = append(versions, label)
	}
	slices.Sort(versions)
	established := false
	for _, c := range o.Status.Conditions {
		if c.Type == api.CRDEstablished && c.Status == api.ConditionTrue {
			established = true
		}
	}
	return cells(o.Name, string(o.Spec.Scope), strings.Join(versions, ","),
		o.CreationTimestamp.UTC().Format(time.RFC3339),
		o.Spec.Group, o.Spec.Names.Kind, strings.Join(o.Spec.Names.ShortNames, ","), established)
})
