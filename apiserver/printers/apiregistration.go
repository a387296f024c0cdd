package printers

import (
	"time"

	"github.com/minik8s/minik8s/api"
)

// kube-aggregator's table of APIServices.
var apiServicePrinter = printer([]api.TableColumnDefinition{
	nameColumn,
	col("Service", "string", "The reference to the service that hosts this API endpoint."),
	col("Available", "string", "Whether this service is available."),
	ageColumn,
}, func(o *api.APIService, now time.Time) api.TableRow {
	service := "Local"
	if s := o.Spec.Service; s != nil {
		service = s.Namespace + "/" + s.Name
	}
	available := "Unknown"
	if c := o.AvailableCondition(); c != nil {
		available = string(c.Status)
		if c.Status != api.ConditionTrue {
			available += " (" + c.Reason + ")"
		}
	}
	return cells(o.Name, service, available, age(&o.ObjectMeta, now))
})
