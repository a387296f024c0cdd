package printers

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	certificatesv1beta1 "k8s.io/api/certificates/v1beta1"
	coordinationv1 "k8s.io/api/coordination/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	rbacv1beta1 "k8s.io/api/rbac/v1beta1"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/minik8s/minik8s/api"
)

var leasePrinter = printer([]api.TableColumnDefinition{
	nameColumn, col("Holder", "string", coordinationv1.LeaseSpec{}.SwaggerDoc()["holderIdentity"]), ageColumn,
}, func(l *api.Lease, now time.Time) api.TableRow {
	holder := ""
	if l.Spec.HolderIdentity != nil {
		holder = *l.Spec.HolderIdentity
	}
	return cells(l.Name, holder, age(&l.ObjectMeta, now))
})

var endpointSliceDoc = discoveryv1.EndpointSlice{}.SwaggerDoc()

var endpointSlicePrinter = printer([]api.TableColumnDefinition{
	nameColumn,
	col("AddressType", "string", endpointSliceDoc["addressType"]),
	col("Ports", "string", endpointSliceDoc["ports"]),
	col("Endpoints", "string", endpointSliceDoc["endpoints"]),
	ageColumn,
}, endpointSliceRow)

var csrSpecDoc = certificatesv1beta1.CertificateSigningRequestSpec{}.SwaggerDoc()

var certificateSigningRequestPrinter = printer([]api.TableColumnDefinition{
	nameColumn,
	ageColumn,
	col("SignerName", "string", csrSpecDoc["signerName"]),
	col("Requestor", "string", csrSpecDoc["request"]),
	col("RequestedDuration", "string", csrSpecDoc["expirationSeconds"]),
	col("Condition", "string", certificatesv1beta1.CertificateSigningRequestStatus{}.SwaggerDoc()["conditions"]),
}, csrRow)

var roleBindingPrinter = printer(bindingColumns("roleBinding", rbacv1beta1.RoleBinding{}.SwaggerDoc()["roleRef"]),
	func(b *api.RoleBinding, now time.Time) api.TableRow {
		return bindingRow(&b.ObjectMeta, b.RoleRef, b.Subjects, now)
	})

var clusterRoleBindingPrinter = printer(bindingColumns("clusterRoleBinding", rbacv1beta1.ClusterRoleBinding{}.SwaggerDoc()["roleRef"]),
	func(b *api.ClusterRoleBinding, now time.Time) api.TableRow {
		return bindingRow(&b.ObjectMeta, b.RoleRef, b.Subjects, now)
	})

// endpointSliceRow is kube's printEndpointSlice: three ports (by number,
// else name, else "*") and three addresses at most, "<unset>" for none.
func endpointSliceRow(s *api.EndpointSlice, now time.Time) api.TableRow {
	const max = 3
	var ports []string
	for _, p := range s.Ports {
		if len(ports) == max {
			break
		}
		n := "*"
		if p.Port != nil {
			n = strconv.Itoa(int(*p.Port))
		} else if p.Name != nil {
			n = *p.Name
		}
		ports = append(ports, n)
	}
	var addrs []string
	count := 0
	for _, e := range s.Endpoints {
		for _, a := range e.Addresses {
			if len(addrs) < max {
				addrs = append(addrs, a)
			}
			count++
		}
	}
	return cells(s.Name, string(s.AddressType), orUnset(moreThan(ports, len(s.Ports), max)),
		orUnset(moreThan(addrs, count, max)), age(&s.ObjectMeta, now))
}

func orUnset(s string) string {
	if s == "" {
		return "<unset>"
	}
	return s
}

// csrRow is kube's printCertificateSigningRequest; CONDITION is Denied,
// Approved or Pending, then ",Failed" and ",Issued" as they apply.
func csrRow(csr *api.CertificateSigningRequest, now time.Time) api.TableRow {
	var approved, denied, failed bool
	for _, c := range csr.Status.Conditions {
		switch c.Type {
		case api.CertificateApproved:
			approved = true
		case api.CertificateDenied:
			denied = true
		case api.CertificateFailed:
			failed = true
		}
	}
	status := "Pending"
	if denied {
		status = "Denied"
	} else if approved {
		status = "Approved"
	}
	if failed {
		status += ",Failed"
	}
	if len(csr.Status.Certificate) > 0 {
		status += ",Issued"
	}
	requested := "<none>"
	if csr.Spec.ExpirationSeconds != nil {
		requested = duration.HumanDuration(time.Duration(*csr.Spec.ExpirationSeconds) * time.Second)
	}
	return cells(csr.Name, age(&csr.ObjectMeta, now), orNone(csr.Spec.SignerName), csr.Spec.Username, requested, status)
}

func bindingColumns(what, roleRefDoc string) []api.TableColumnDefinition {
	return append([]api.TableColumnDefinition{nameColumn, col("Role", "string", roleRefDoc), ageColumn},
		wide(col("Users", "string", "Users in the "+what),
			col("Groups", "string", "Groups in the "+what),
			col("ServiceAccounts", "string", "ServiceAccounts in the "+what))...)
}

// bindingRow is kube's printRoleBinding: ROLE is kind/name; subjects split
// by kind, service accounts as namespace/name.
func bindingRow(m *api.ObjectMeta, ref api.RoleRef, subjects []api.Subject, now time.Time) api.TableRow {
	var users, groups, sas []string
	for _, s := range subjects {
		switch s.Kind {
		case api.ServiceAccountKind:
			sas = append(sas, s.Namespace+"/"+s.Name)
		case api.UserKind:
			users = append(users, s.Name)
		case api.GroupKind:
			groups = append(groups, s.Name)
		}
	}
	return cells(m.Name, fmt.Sprintf("%s/%s", ref.Kind, ref.Name), age(m, now),
		strings.Join(users, ", "), strings.Join(groups, ", "), strings.Join(sas, ", "))
}
