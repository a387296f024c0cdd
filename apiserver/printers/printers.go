package printers

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/minik8s/minik8s/api"
)

// Printer prints one kind: its columns, and the row of an object.
type Printer struct {
	// Columns are every column, -o wide ones (Priority > 0) included:
	// kube-apiserver always answers with all of them and kubectl hides
	// the wide ones.
	Columns []api.TableColumnDefinition
	// Less, when set, orders a list's rows (kube sorts FlowSchemas by
	// matching precedence); nil keeps the list's order.
	Less func(a, b api.Object) bool
	// List, when set, amends a list's rows (rows[i] printed from
	// items[i]) with what only the whole list tells: kube marks the
	// effective default StorageClass of a list, never a single object.
	List func(items []api.Object, rows []api.TableRow)
	row  func(obj api.Object, now time.Time) (api.TableRow, bool)
}

// Row is obj's row at time now (ages are relative to it), without its
// object (transform adds it as includeObject asks).
func (p *Printer) Row(obj api.Object, now time.Time) api.TableRow {
	if row, ok := p.row(obj, now); ok {
		return row
	}
	// An object of an unexpected type: the default table's cells, with
	// as many blanks as the kind's other columns.
	row := defaultRow(obj)
	for len(row.Cells) < len(p.Columns) {
		row.Cells = append(row.Cells, "")
	}
	return row
}

// printer makes a Printer of kind T from its columns and its row.
func printer[T api.Object](cols []api.TableColumnDefinition, row func(T, time.Time) api.TableRow) *Printer {
	return &Printer{Columns: cols, row: func(obj api.Object, now time.Time) (api.TableRow, bool) {
		o, ok := obj.(T)
		if !ok {
			return api.TableRow{}, false
		}
		return row(o, now), true
	}}
}

// cells is a row of just cells.
func cells(c ...any) api.TableRow { return api.TableRow{Cells: c} }

// printers is the table of printers by kind, kube's columns for each: a
// kind not here gets kube's default table (Name, Created At), as Role and
// ClusterRole do. Both versions of a kind served at two (Events,
// HorizontalPodAutoscalers) print as their storage version, as
// kube-apiserver prints both from its internal version.
var printers = map[string]*Printer{
	"APIService":                       apiServicePrinter,
	"CSIDriver":                        csiDriverPrinter,
	"CSINode":                          csiNodePrinter,
	"CSIStorageCapacity":               csiStorageCapacityPrinter,
	"CertificateSigningRequest":        certificateSigningRequestPrinter,
	"ClusterRoleBinding":               clusterRoleBindingPrinter,
	"ConfigMap":                        configMapPrinter,
	"ControllerRevision":               controllerRevisionPrinter,
	"CronJob":                          cronJobPrinter,
	"CustomResourceDefinition":         customResourceDefinitionPrinter,
	"DaemonSet":                        daemonSetPrinter,
	"Deployment":                       deploymentPrinter,
	"DeviceClass":                      deviceClassPrinter,
	"DeviceTaintRule":                  deviceTaintRulePrinter,
	"EndpointSlice":                    endpointSlicePrinter,
	"Endpoints":                        endpointsPrinter,
	"Event":                            eventPrinter,
	"HorizontalPodAutoscaler":          horizontalPodAutoscalerPrinter,
	"IPAddress":                        ipAddressPrinter,
	"Job":                              jobPrinter,
	"Lease":                            leasePrinter,
	"MutatingWebhookConfiguration":     mutatingWebhookConfigurationPrinter,
	"Namespace":                        namespacePrinter,
	"Node":                             nodePrinter,
	"PersistentVolume":                 persistentVolumePrinter,
	"PersistentVolumeClaim":            persistentVolumeClaimPrinter,
	"Pod":                              podPrinter,
	"PodCertificateRequest":            podCertificateRequestPrinter,
	"PodDisruptionBudget":              podDisruptionBudgetPrinter,
	"PodTemplate":                      podTemplatePrinter,
	"ReplicaSet":                       replicaSetPrinter,
	"ReplicationController":            replicationControllerPrinter,
	"ResourceClaim":                    resourceClaimPrinter,
	"ResourceClaimTemplate":            resourceClaimTemplatePrinter,
	"ResourceQuota":                    resourceQuotaPrinter,
	"ResourceSlice":                    resourceSlicePrinter,
	"RoleBinding":                      roleBindingPrinter,
	"Scale":                            scalePrinter,
	"Secret":                           secretPrinter,
	"Service":                          servicePrinter,
	"ServiceAccount":                   serviceAccountPrinter,
	"ServiceCIDR":                      serviceCIDRPrinter,
	"StatefulSet":                      statefulSetPrinter,
	"StorageClass":                     storageClassPrinter,
	"StorageVersionMigration":          storageVersionMigrationPrinter,
	"ValidatingAdmissionPolicy":        validatingAdmissionPolicyPrinter,
	"ValidatingAdmissionPolicyBinding": validatingAdmissionPolicyBindingPrinter,
	"ValidatingWebhookConfiguration":   validatingWebhookConfigurationPrinter,
	"VolumeAttachment":                 volumeAttachmentPrinter,
	"VolumeAttributesClass":            volumeAttributesClassPrinter,
	// The kinds served for issue 25 (builtin_kinds.go).
	"Ingress":                        ingressPrinter,
	"IngressClass":                   ingressClassPrinter,
	"NetworkPolicy":                  networkPolicyPrinter,
	"PriorityClass":                  priorityClassPrinter,
	"RuntimeClass":                   runtimeClassPrinter,
	"FlowSchema":                     flowSchemaPrinter,
	"PriorityLevelConfiguration":     priorityLevelConfigurationPrinter,
	"MutatingAdmissionPolicy":        mutatingAdmissionPolicyPrinter,
	"MutatingAdmissionPolicyBinding": mutatingAdmissionPolicyBindingPrinter,
	"ClusterTrustBundle":             clusterTrustBundlePrinter,
	"ComponentStatus":                componentStatusPrinter,
}

// For returns the printer of kind ("Pod", "Deployment"); a kind kube has no
// printer for gets the default table.
func For(kind string) *Printer {
	if p, ok := printers[kind]; ok {
		return p
	}
	return defaultPrinter
}

var metaDoc = metav1.ObjectMeta{}.SwaggerDoc()

// nameColumn and ageColumn are the columns nearly every table has.
var (
	nameColumn = api.TableColumnDefinition{Name: "Name", Type: "string", Format: "name", Description: metaDoc["name"]}
	ageColumn  = api.TableColumnDefinition{Name: "Age", Type: "string", Description: metaDoc["creationTimestamp"]}
)

// wide marks columns shown with -o wide only.
func wide(cols ...api.TableColumnDefinition) []api.TableColumnDefinition {
	for i := range cols {
		cols[i].Priority = 1
	}
	return cols
}

func col(name, typ, desc string) api.TableColumnDefinition {
	return api.TableColumnDefinition{Name: name, Type: typ, Description: desc}
}

// defaultPrinter is kube's default table convertor (rest.NewDefaultTableConvertor):
// the name and the creation time, for kinds without a printer (Role,
// ClusterRole).
var defaultPrinter = &Printer{
	Columns: []api.TableColumnDefinition{nameColumn,
		{Name: "Created At", Type: "date", Description: metaDoc["creationTimestamp"]}},
	row: func(obj api.Object, _ time.Time) (api.TableRow, bool) { return defaultRow(obj), true },
}

func defaultRow(obj api.Object) api.TableRow {
	m := obj.GetObjectMeta()
	return cells(m.Name, m.CreationTimestamp.UTC().Format(time.RFC3339))
}

// since is kube's translateTimestampSince: how long ago t was, "<unknown>"
// for no time.
func since(t time.Time, now time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t))
}

func age(m *api.ObjectMeta, now time.Time) string { return since(m.CreationTimestamp.Time, now) }

// orNone is the value, or "<none>" when empty.
func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

// New returns a printer of the given columns whose rows row makes: the
// printer of a kind known only at run time (a custom resource's).
func New(cols []api.TableColumnDefinition, row func(obj api.Object, now time.Time) api.TableRow) *Printer {
	return &Printer{Columns: cols, row: func(obj api.Object, now time.Time) (api.TableRow, bool) {
		return row(obj, now), true
	}}
}
