package portforward

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/labels"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/kubectl-lite/cli"
	"github.com/minik8s/minik8s/kubectl-lite/podselect"
	pf "github.com/minik8s/minik8s/kubectl-lite/portforward"
)

// NewCommand returns the port-forward command.
func NewCommand(streams cli.Streams, g *cli.Globals) *cobra.Command {
	var addresses []string
	cmd := &cobra.Command{
		Use:   "port-forward TYPE/NAME [options] [LOCAL_PORT:]REMOTE_PORT [...[LOCAL_PORT_N:]REMOTE_PORT_N]",
		Short: "Forward one or more local ports to a pod",
		Long: `Forward one or more local ports to a pod.

Use resource type/name such as deployment/mydeployment to select a pod.
If there are multiple pods matching the criteria, a pod will be selected
automatically. The forwarding session ends when the selected pod
terminates, and a rerun of the command is needed to resume forwarding.`,
		Example: `  kubectl-lite port-forward pod/mypod 5000 6000
  kubectl-lite port-forward deployment/mydeployment 5000 6000
  kubectl-lite port-forward service/myservice 8443:https
  kubectl-lite port-forward pod/mypod 8888:5000
  kubectl-lite port-forward --address 0.0.0.0 pod/mypod 8888:5000
  kubectl-lite port-forward pod/mypod :5000`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) < 2 {
				return cli.UsageError(cmd, "TYPE/NAME and list of ports are required for port-forward")
			}
			ns, err := g.DefaultNamespace()
			if err != nil {
				return err
			}
			cc, err := g.ClientConfig()
			if err != nil {
				return err
			}
			c, err := client.New(cc)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			pod, resolve, err := target(ctx, streams, c, ns, args[0])
			if err != nil {
				return err
			}
			ports, err := pf.ParsePorts(args[1:], func(name string) (uint16, error) { return resolve(pod, name) })
			if err != nil {
				return cli.UsageError(cmd, err.Error())
			}
			if pod.Status.Phase != api.PodRunning {
				return fmt.Errorf("unable to forward port because pod is not running. Current status=%v", pod.Status.Phase)
			}
			path := client.ResourcePath(client.Resource[api.Pod](c).Info(), ns, pod.Name, "portforward")
			return pf.Forward(ctx, cc, path, pf.Options{Addresses: addresses, Ports: ports, Out: streams.Out, ErrOut: streams.ErrOut})
		},
	}
	cmd.Flags().StringSliceVar(&addresses, "address", []string{"localhost"}, "Addresses to listen on (comma separated). Only accepts IP addresses or localhost as a value. When localhost is supplied, kubectl will try to bind on both 127.0.0.1 and ::1 and will fail if neither of these addresses are available to bind.")
	return cmd
}

// resolver turns a REMOTE port given by the user into the pod's port.
type resolver func(pod *api.Pod, name string) (uint16, error)

// target finds the pod to forward to; for a Service, remote ports are the
// Service's and translate to its target ports, as kubectl does.
func target(ctx context.Context, streams cli.Streams, c *client.Client, ns, arg string) (*api.Pod, resolver, error) {
	kind, name, ok := strings.Cut(arg, "/")
	if !ok || !isService(kind) {
		pod, err := podselect.Pod(ctx, streams, c, ns, arg)
		return pod, containerPort, err
	}
	svc, err := client.Resource[api.Service](c).Namespace(ns).Get(ctx, name)
	if err != nil {
		return nil, nil, err
	}
	if len(svc.Spec.Selector) == 0 {
		return nil, nil, fmt.Errorf("invalid service '%s': Service is defined without a selector", svc.Name)
	}
	pod, _, err := podselect.FirstPod(ctx, c, ns, labels.Set(svc.Spec.Selector))
	if err != nil {
		return nil, nil, err
	}
	return pod, func(pod *api.Pod, port string) (uint16, error) { return servicePort(svc, pod, port) }, nil
}

func isService(kind string) bool {
	switch strings.ToLower(kind) {
	case "svc", "service", "services":
		return true
	}
	return false
}

// containerPort resolves a named port of one of the pod's containers.
func containerPort(pod *api.Pod, name string) (uint16, error) {
	if n, err := strconv.ParseUint(name, 10, 16); err == nil {
		return uint16(n), nil
	}
	for _, c := range pod.Spec.Containers {
		for _, p := range c.Ports {
			if p.Name == name {
				return uint16(p.ContainerPort), nil
			}
		}
	}
	return 0, fmt.Errorf("Pod '%s' does not have a named port '%s'", pod.Name, name)
}

// servicePort translates a Service port (number or name) to the pod's.
func servicePort(svc *api.Service, pod *api.Pod, port string) (uint16, error) {
	n, nerr := strconv.Atoi(port)
	for _, sp := range svc.Spec.Ports {
		if nerr == nil && int(sp.Port) != n || nerr != nil && sp.Name != port {
			continue
		}
		if sp.Protocol == api.ProtocolUDP {
			return 0, fmt.Errorf("UDP protocol is not supported for %s", port)
		}
		switch {
		case sp.TargetPort.Type == api.Int && sp.TargetPort.IntVal > 0:
			return uint16(sp.TargetPort.IntVal), nil
		case sp.TargetPort.Type == api.String && sp.TargetPort.StrVal != "":
			return containerPort(pod, sp.TargetPort.StrVal)
		}
		return uint16(sp.Port), nil
	}
	if nerr == nil {
		return 0, fmt.Errorf("Service %s does not have a service port %d", svc.Name, n)
	}
	return 0, errors.New("Service " + svc.Name + " does not have a named port '" + port + "'")
}
