package create

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	utilsnet "k8s.io/utils/net"

	"github.com/minik8s/minik8s/kubectl-lite/cli"
	"github.com/minik8s/minik8s/kubectl-lite/write"
)

// servicePorts is kubectl's parsePorts: "port[:targetPort]", the target
// a port number or name.
func servicePorts(spec string) (int32, intstr.IntOrString, error) {
	parts := strings.Split(spec, ":")
	port, err := utilsnet.ParsePort(parts[0], true)
	if err != nil {
		return 0, intstr.FromInt32(0), err
	}
	if len(parts) == 1 {
		return int32(port), intstr.FromInt32(int32(port)), nil
	}
	if n, err := strconv.Atoi(parts[1]); err != nil {
		if errs := validation.IsValidPortName(parts[1]); len(errs) != 0 {
			return 0, intstr.FromInt32(0), errors.New(strings.Join(errs, ","))
		}
		return int32(port), intstr.FromString(parts[1]), nil
	} else if errs := validation.IsValidPortNum(n); len(errs) != 0 {
		return 0, intstr.FromInt32(0), errors.New(strings.Join(errs, ","))
	} else {
		return int32(port), intstr.FromInt32(int32(n)), nil
	}
}

// newCreateServiceOfType is create service loadbalancer or externalname.
func newCreateServiceOfType(streams cli.Streams, g *cli.Globals, typ corev1.ServiceType) *cobra.Command {
	var (
		gen          = write.Generator{Failed: "failed to create " + string(typ) + " service: "}
		tcp          []string
		externalName string
	)
	cmd := &cobra.Command{
		Use:                   "loadbalancer NAME [--tcp=port:targetPort] [--dry-run=server|client|none]",
		DisableFlagsInUseLine: true,
		Short:                 "Create a LoadBalancer service",
		Long:                  "Create a LoadBalancer service with the specified name.",
		Example: `  # Create a new LoadBalancer service named my-lbs
  kubectl-lite create service loadbalancer my-lbs --tcp=5678:8080`,
		Args: oneName,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := gen.DryRun.Validate(); err != nil {
				return err
			}
			if err := write.ValidOutput(gen.Output); err != nil {
				return err
			}
			if len(tcp) == 0 && typ != corev1.ServiceTypeExternalName {
				return fmt.Errorf("at least one tcp port specifier must be provided")
			}
			if typ == corev1.ServiceTypeExternalName {
				if errs := validation.IsDNS1123Subdomain(externalName); len(errs) != 0 {
					return fmt.Errorf("invalid service external name %s", externalName)
				}
			}
			ports := []corev1.ServicePort{}
			for _, spec := range tcp {
				port, target, err := servicePorts(spec)
				if err != nil {
					return err
				}
				ports = append(ports, corev1.ServicePort{Name: strings.ReplaceAll(spec, ":", "-"),
					Port: port, TargetPort: target, Protocol: corev1.ProtocolTCP})
			}
			name := args[0]
			obj, err := asMap(corev1.Service{
				TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
				ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": name}},
				Spec: corev1.ServiceSpec{Type: typ, Selector: map[string]string{"app": name},
					Ports: ports, ExternalName: externalName},
			})
			if err != nil {
				return err
			}
			return gen.Create(cmd, streams, g, obj)
		},
	}
	gen.Bind(cmd)
	cmd.Flags().StringSliceVar(&tcp, "tcp", nil, "Port pairs can be specified as '<port>:<targetPort>'.")
	if typ == corev1.ServiceTypeExternalName {
		cmd.Use = "externalname NAME --external-name external.name [--dry-run=server|client|none]"
		cmd.Short = "Create an ExternalName service"
		cmd.Long = "Create an ExternalName service with the specified name.\n\nExternalName service references to an external DNS address instead of only pods, which will allow application authors to reference services that exist off platform, on other clusters, or locally."
		cmd.Example = `  # Create a new ExternalName service named my-ns
  kubectl-lite create service externalname my-ns --external-name bar.com`
		cmd.Flags().StringVar(&externalName, "external-name", "", "External name of service")
		_ = cmd.MarkFlagRequired("external-name")
	}
	cmd.SetFlagErrorFunc(flagUsage)
	return cmd
}
