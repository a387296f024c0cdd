package create

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/minik8s/minik8s/kubectl-lite/cli"
	"github.com/minik8s/minik8s/kubectl-lite/write"
)

// ingressRule is kubectl's grammar of a --rule: an optional host of word
// characters, '*', '-' and '.', a path from the first '/', '=', a service
// name and port of word characters and '-', then optionally ",tls" with a
// secret name. Only the start of the rule must match: kubectl does not
// anchor the end.
var ingressRule = regexp.MustCompile(`^[\w*\-.]*/.*=[\w\-]+:[\w\-]+(,tls=?([\w\-]+)?)?`)

const badIngressRule = "rule %s is invalid and should be in format host/path=svcname:svcport[,tls[=secret]]"

func newCreateIngress(streams cli.Streams, g *cli.Globals) *cobra.Command {
	var (
		gen         = write.Generator{Failed: "failed to create ingress: "}
		class       string
		rules       []string
		defBackend  string
		annotations []string
	)
	cmd := &cobra.Command{
		Use:                   "ingress NAME --rule=host/path=service:port[,tls[=secret]] ",
		DisableFlagsInUseLine: true,
		Aliases:               []string{"ing"},
		Short:                 "Create an ingress with the specified name",
		Long:                  "Create an ingress with the specified name.",
		Example: `  # An ingress sending foo.com/bar to port 8080 of Service svc1, with TLS from Secret my-cert
  kubectl-lite create ingress simple --rule="foo.com/bar=svc1:8080,tls=my-cert"

  # Any host, path prefix /api (a trailing '*' makes the path a Prefix), class "internal"
  kubectl-lite create ingress api --class=internal --rule="/api*=api:http"

  # A default backend and an annotation
  kubectl-lite create ingress site --default-backend=web:80 --annotation=team=web --rule="web.example/=web:80,tls"`,
		Args: exactlyOneName,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := gen.DryRun.Validate(); err != nil {
				return err
			}
			if err := write.ValidOutput(gen.Output); err != nil {
				return err
			}
			if err := validateIngressFlags(rules, annotations, defBackend); err != nil {
				return err
			}
			obj, err := buildIngress(args[0], class, rules, defBackend, annotations)
			if err != nil {
				return err
			}
			return gen.Create(cmd, streams, g, obj)
		},
	}
	gen.Bind(cmd)
	cmd.Flags().StringVar(&class, "class", "", "Ingress Class to be used")
	cmd.Flags().StringArrayVar(&rules, "rule", nil, "Rule in format host/path=service:port[,tls=secretname]. Paths containing the leading character '*' are considered pathType=Prefix. tls argument is optional.")
	cmd.Flags().StringVar(&defBackend, "default-backend", "", "Default service for backend, in format of svcname:port")
	cmd.Flags().StringArrayVar(&annotations, "annotation", nil, "Annotation to insert in the ingress object, in the format annotation=value")
	return cmd
}

// validateIngressFlags refuses what kubectl's create ingress refuses, in
// its order and words.
func validateIngressFlags(rules, annotations []string, defBackend string) error {
	if defBackend == "" && len(rules) == 0 {
		return errors.New("not enough information provided: every ingress has to either specify a default-backend (which catches all traffic) or a list of rules (which catch specific paths)")
	}
	for _, r := range rules {
		if !ingressRule.MatchString(r) {
			return fmt.Errorf(badIngressRule, r)
		}
	}
	for _, a := range annotations {
		if !strings.Contains(a, "=") {
			return fmt.Errorf("annotation %s is invalid and should be in format key=[value]", a)
		}
	}
	if defBackend != "" && strings.Count(defBackend, ":") != 1 {
		return errors.New("default-backend should be in format servicename:serviceport")
	}
	return nil
}

// buildIngress makes the Ingress kubectl makes from validated flags: one
// rule per host in the order hosts first appear, a path per --rule (Exact,
// or Prefix with the trailing '*' dropped), and TLS entries grouped by
// secret, each host in at most one of them. Rules kubectl's grammar lets
// through but kubectl then cannot take apart (it panics on them) are
// refused as invalid.
func buildIngress(name, class string, rules []string, defBackend string, annotations []string) (map[string]any, error) {
	meta := map[string]any{"name": name}
	if len(annotations) > 0 {
		ann := map[string]any{}
		for _, a := range annotations {
			k, v, _ := strings.Cut(a, "=")
			ann[k] = v
		}
		meta["annotations"] = ann
	}
	spec := map[string]any{}
	if class != "" {
		spec["ingressClassName"] = class
	}
	if defBackend != "" {
		b, err := ingressServiceBackend(defBackend)
		if err != nil {
			return nil, errors.New("default-backend should be in format servicename:serviceport")
		}
		spec["defaultBackend"] = b
	}

	// TLS, from the rules with exactly one ",".
	type tlsEntry struct {
		secret string
		hosts  []any
	}
	var tls []*tlsEntry
	seenHost := map[string]bool{}
	for _, r := range rules {
		parts := strings.Split(r, ",")
		if len(parts) != 2 {
			continue
		}
		host, _, _ := strings.Cut(r, "/")
		secret := ""
		if s := strings.Split(parts[1], "="); len(s) > 1 {
			secret = s[1]
		}
		if seenHost[host] {
			continue
		}
		seenHost[host] = true
		var same *tlsEntry
		for _, e := range tls {
			if e.secret == secret {
				same = e
				break
			}
		}
		if same != nil {
			same.hosts = append(same.hosts, host)
			continue
		}
		e := &tlsEntry{secret: secret}
		if host != "" {
			e.hosts = []any{host}
		}
		if e.secret != "" || len(e.hosts) > 0 {
			tls = append(tls, e)
		}
	}
	if len(tls) > 0 {
		var out []any
		for _, e := range tls {
			m := map[string]any{}
			if len(e.hosts) > 0 {
				m["hosts"] = e.hosts
			}
			if e.secret != "" {
				m["secretName"] = e.secret
			}
			out = append(out, m)
		}
		spec["tls"] = out
	}

	// Rules, a host's paths together.
	var hostRules []map[string]any
	for _, r := range rules {
		bare, _, _ := strings.Cut(r, ",")
		host, rest, ok := strings.Cut(bare, "/")
		if !ok {
			return nil, fmt.Errorf(badIngressRule, r)
		}
		path, err := ingressPath(rest)
		if err != nil {
			return nil, fmt.Errorf(badIngressRule, r)
		}
		var same map[string]any
		for _, hr := range hostRules {
			if h, _ := hr["host"].(string); h == host {
				same = hr
				break
			}
		}
		if same != nil {
			http := same["http"].(map[string]any)
			http["paths"] = append(http["paths"].([]any), path)
			continue
		}
		hr := map[string]any{"http": map[string]any{"paths": []any{path}}}
		if host != "" {
			hr["host"] = host
		}
		hostRules = append(hostRules, hr)
	}
	if len(hostRules) > 0 {
		out := make([]any, len(hostRules))
		for i, hr := range hostRules {
			out[i] = hr
		}
		spec["rules"] = out
	}
	return map[string]any{
		"apiVersion": "networking.k8s.io/v1",
		"kind":       "Ingress",
		"metadata":   meta,
		"spec":       spec,
		"status":     map[string]any{"loadBalancer": map[string]any{}},
	}, nil
}

// ingressPath is a rule's path and backend, "path=svc:port" after the
// host's '/': the path up to the first '=', the backend from there to the
// next '='.
func ingressPath(s string) (map[string]any, error) {
	parts := strings.Split(s, "=")
	if len(parts) < 2 {
		return nil, errors.New("no backend")
	}
	path, pathType := "/"+parts[0], "Exact"
	if strings.HasSuffix(path, "*") {
		path, pathType = strings.TrimSuffix(path, "*"), "Prefix"
	}
	b, err := ingressServiceBackend(parts[1])
	if err != nil {
		return nil, err
	}
	return map[string]any{"path": path, "pathType": pathType, "backend": b}, nil
}

// ingressServiceBackend is "svc:port"'s Service backend: a port that
// parses as an integer is a number (0 none), any other a port name. Only
// the text between the first and second ':' is the port.
func ingressServiceBackend(s string) (map[string]any, error) {
	parts := strings.Split(s, ":")
	if len(parts) < 2 {
		return nil, errors.New("no port")
	}
	port := map[string]any{}
	if n, err := strconv.Atoi(parts[1]); err == nil {
		// intstr.FromInt keeps the low 32 bits of a larger number.
		if n32 := int32(n); n32 != 0 {
			port["number"] = n32
		}
	} else if parts[1] != "" {
		port["name"] = parts[1]
	}
	return map[string]any{"service": map[string]any{"name": parts[0], "port": port}}, nil
}
