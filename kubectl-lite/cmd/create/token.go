package create

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/kubectl-lite/cli"
	"github.com/minik8s/minik8s/kubectl-lite/printers"
	"github.com/minik8s/minik8s/kubectl-lite/write"
)

func newCreateServiceAccount(streams cli.Streams, g *cli.Globals) *cobra.Command {
	gen := write.Generator{Failed: "failed to create serviceaccount: "}
	cmd := &cobra.Command{
		Use:     "serviceaccount NAME [--dry-run=server|client|none]",
		Aliases: []string{"sa"},
		Short:   "Create a service account with the specified name",
		Long:    "Create a service account with the specified name.",
		Example: "  # Create a new service account named my-service-account\n  kubectl-lite create serviceaccount my-service-account",
		Args:    exactlyOneName,
		RunE: func(cmd *cobra.Command, args []string) error {
			return gen.Create(cmd, streams, g, map[string]any{"apiVersion": "v1", "kind": "ServiceAccount",
				"metadata": map[string]any{"name": args[0]}})
		},
	}
	gen.Bind(cmd)
	return cmd
}

// boundObjectKinds are the kinds a token may be bound to, with their
// apiVersion (kubectl's table).
var boundObjectKinds = map[string]string{"Node": "v1", "Pod": "v1", "Secret": "v1"}

// tokenOptions are kubectl create token's flags.
type tokenOptions struct {
	audiences                      []string
	duration                       time.Duration
	boundKind, boundName, boundUID string
	output                         string
}

// validate is kubectl's TokenOptions.Validate, messages included.
func (o *tokenOptions) validate() error {
	if o.duration < 0 {
		return fmt.Errorf("--duration must be greater than or equal to 0")
	}
	if o.duration%time.Second != 0 {
		return fmt.Errorf("--duration cannot be expressed in units less than seconds")
	}
	for _, a := range o.audiences {
		if a == "" {
			return fmt.Errorf("--audience must not be an empty string")
		}
	}
	if o.boundKind == "" {
		if o.boundName != "" {
			return fmt.Errorf("--bound-object-name can only be set if --bound-object-kind is provided")
		}
		if o.boundUID != "" {
			return fmt.Errorf("--bound-object-uid can only be set if --bound-object-kind is provided")
		}
		return nil
	}
	if _, ok := boundObjectKinds[o.boundKind]; !ok {
		return fmt.Errorf("supported --bound-object-kind values are %s", strings.Join(kinds(), ", "))
	}
	if o.boundName == "" {
		return fmt.Errorf("--bound-object-name is required if --bound-object-kind is provided")
	}
	return nil
}

func kinds() []string {
	var ks []string
	for k := range boundObjectKinds {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// request is the TokenRequest the flags ask for.
func (o *tokenOptions) request() *api.TokenRequest {
	req := &api.TokenRequest{TypeMeta: api.TypeMeta{APIVersion: api.AuthenticationGroupName + "/v1", Kind: "TokenRequest"},
		Spec: api.TokenRequestSpec{Audiences: o.audiences}}
	if o.duration > 0 {
		secs := int64(o.duration / time.Second)
		req.Spec.ExpirationSeconds = &secs
	}
	if o.boundKind != "" {
		req.Spec.BoundObjectRef = &api.BoundObjectReference{Kind: o.boundKind, APIVersion: boundObjectKinds[o.boundKind],
			Name: o.boundName, UID: api.UID(o.boundUID)}
	}
	return req
}

func newCreateToken(streams cli.Streams, g *cli.Globals) *cobra.Command {
	var o tokenOptions
	cmd := &cobra.Command{
		Use:   "token SERVICE_ACCOUNT_NAME",
		Short: "Request a service account token",
		Long:  "Request a service account token.",
		Example: "  # Request a token to authenticate to the kube-apiserver as the service account \"myapp\" in the current namespace\n" +
			"  kubectl-lite create token myapp\n\n" +
			"  # Request a token with a custom expiration\n  kubectl-lite create token myapp --duration 10m\n\n" +
			"  # Request a token with a custom audience\n  kubectl-lite create token myapp --audience https://example.com\n\n" +
			"  # Request a token bound to an instance of a Secret object\n  kubectl-lite create token myapp --bound-object-kind Secret --bound-object-name mysecret",
		Args: exactlyOneName,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			if err := write.ValidOutput(o.output); err != nil {
				return err
			}
			ns, err := g.DefaultNamespace()
			if err != nil {
				return err
			}
			c, err := g.Client()
			if err != nil {
				return err
			}
			var resp api.TokenRequest
			if err := client.Resource[api.ServiceAccount](c).Namespace(ns).Subresource(args[0], "token").Post(cmd.Context(), o.request(), &resp); err != nil {
				return fmt.Errorf("failed to create token: %v", err)
			}
			if resp.Status.Token == "" {
				return fmt.Errorf("failed to create token: no token in server response")
			}
			if o.output != "" {
				data, err := json.Marshal(&resp)
				if err != nil {
					return err
				}
				var obj map[string]any
				if err := json.Unmarshal(data, &obj); err != nil {
					return err
				}
				return printers.PrintObjects(streams.Out, o.output, []printers.Obj{obj}, false)
			}
			// A newline only for a terminal, as kubectl: the bare token
			// pipes cleanly into files and headers.
			if f, ok := streams.Out.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
				fmt.Fprintf(streams.Out, "%s\n", resp.Status.Token)
			} else {
				fmt.Fprint(streams.Out, resp.Status.Token)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&o.audiences, "audience", nil, "Audience of the requested token. If unset, defaults to requesting a token for use with the Kubernetes API server. May be repeated to request a token valid for multiple audiences.")
	f.DurationVar(&o.duration, "duration", 0, "Requested lifetime of the issued token. If not set or if set to 0, the lifetime will be determined by the server automatically. The server may return a token with a longer or shorter lifetime.")
	f.StringVar(&o.boundKind, "bound-object-kind", "", "Kind of an object to bind the token to. Supported kinds are "+strings.Join(kinds(), ", ")+". If set, --bound-object-name must be provided.")
	f.StringVar(&o.boundName, "bound-object-name", "", "Name of an object to bind the token to. The token will expire when the object is deleted. Requires --bound-object-kind.")
	f.StringVar(&o.boundUID, "bound-object-uid", "", "UID of an object to bind the token to. Requires --bound-object-kind and --bound-object-name. If unset, the UID of the existing object is used.")
	write.BindOutput(cmd, &o.output)
	return cmd
}
