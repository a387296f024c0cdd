package cli

import (
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/api/field"
)

func TestFormatError(t *testing.T) {
	t.Parallel()
	pods := apierrors.GroupResource{Resource: "pods"}
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"not found", apierrors.NewNotFound(pods, "x"), `Error from server (NotFound): pods "x" not found`},
		{"wrapped forbidden", fmt.Errorf("delete: %w", apierrors.NewForbidden(pods, "x", errors.New("nope"))),
			`Error from server (Forbidden): pods "x" is forbidden: nope`},
		{"no reason", apierrors.FromStatus(api.Status{Message: "boom"}), "Error from server: boom"},
		{"plain", errors.New("the server doesn't have a resource type \"foo\""), `error: the server doesn't have a resource type "foo"`},
		{"already prefixed", errors.New("error: x"), "error: x"},
		{"invalid", apierrors.NewInvalid(apierrors.GroupKind{Kind: "ConfigMap"}, "Bad_Name", field.ErrorList{field.Invalid(field.NewPath("metadata", "name"), "Bad_Name", "not a DNS name")}),
			`The ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": not a DNS name`},
		{"invalid, two causes", apierrors.NewInvalid(apierrors.GroupKind{Group: "apps", Kind: "Deployment"}, "web", field.ErrorList{
			field.Invalid(field.NewPath("spec", "replicas"), -1, "must be greater than or equal to 0"), field.Required(field.NewPath("spec", "selector"), "")}),
			"The Deployment \"web\" is invalid: \n* spec.replicas: Invalid value: -1: must be greater than or equal to 0\n* spec.selector: Required value"},
		{"invalid without details", apierrors.FromStatus(api.Status{Reason: api.StatusReasonInvalid, Message: "operation 0 failed", Code: 422}),
			"The request is invalid: operation 0 failed"},
		{"unauthorized", apierrors.NewUnauthorized("Unauthorized"), "error: You must be logged in to the server (Unauthorized)"},
		{"connection refused", fmt.Errorf("GET https://127.0.0.1:1/api: %w", &net.OpError{Op: "dial", Net: "tcp",
			Addr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1}, Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}),
			"The connection to the server 127.0.0.1:1 was refused - did you specify the right host or port?"},
		{"unreachable", fmt.Errorf("GET https://10.9.9.9/api: %w", &net.OpError{Op: "dial", Net: "tcp",
			Addr: &net.TCPAddr{IP: net.IPv4(10, 9, 9, 9), Port: 443}, Err: os.NewSyscallError("connect", syscall.EHOSTUNREACH)}),
			"Unable to connect to the server: dial tcp 10.9.9.9:443: connect: no route to host"},
		{"api error with source", AddSource("creating", "web.yaml", apierrors.NewNotFound(apierrors.GroupResource{Resource: "namespaces"}, "x")),
			`Error from server (NotFound): error when creating "web.yaml": namespaces "x" not found`},
		{"plain error with source", AddSource("deleting", "STDIN", errors.New("boom")), `error: error when deleting "STDIN": boom`},
		{"no source", AddSource("creating", "", apierrors.NewNotFound(pods, "x")), `Error from server (NotFound): pods "x" not found`},
	}
	for _, tt := range tests {
		if got := FormatError(tt.err); got != tt.want {
			t.Errorf("%s: FormatError = %q, want %q", tt.name, got, tt.want)
		}
	}
}
