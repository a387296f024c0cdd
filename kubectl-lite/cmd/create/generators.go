package apply

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/kubectl-lite/cli"
	"github.com/minik8s/minik8s/kubectl-lite/manifest"
	"github.com/minik8s/minik8s/kubectl-lite/printers"
)

// generated is what every "create KIND NAME" subcommand shares: --dry-run,
// -o and the create itself.
type generated struct {
	dryRun DryRun
	output string
	// verb is the result word, "created" unless set ("exposed").
	verb string
}

func (gen *generated) bind(cmd *cobra.Command) {
	gen.dryRun.bind(cmd)
	cmd.Flags().StringVarP(&gen.output, "output", "o", "", "Output format. One of: (json, yaml, name).")
}

// run creates obj (or only prints it with --dry-run=client) and reports it
// as kubectl does: "KIND/NAME created", or the object in the -o format.
func (gen *generated) run(cmd *cobra.Command, streams cli.Streams, g *cli.Globals, obj map[string]any) error {
	if err := gen.dryRun.validate(); err != nil {
		return err
	}
	switch gen.output {
	case "", "json", "yaml", "name":
	default:
		return fmt.Errorf("unable to match a printer suitable for the output format %q, allowed formats are: json,name,yaml", gen.output)
	}
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	info, ok := api.LookupKind(apiVersion, kind)
	if !ok {
		return fmt.Errorf("no matches for kind %q in version %q", kind, apiVersion)
	}
	o := manifest.Object{Info: info, Object: obj}
	if info.Namespaced {
		ns, err := g.DefaultNamespace()
		if err != nil {
			return err
		}
		o.SetNamespace(ns)
	}
	body, err := json.Marshal(obj)
	if err != nil {
		return fmt.Errorf("encode %s: %w", o.Name(), err)
	}
	result := obj
	if gen.dryRun == "client" && g.Namespace == "" {
		// kubectl prints a client dry run without the namespace it was
		// not told explicitly, so the output applies to any namespace.
		md, _ := obj["metadata"].(map[string]any)
		delete(md, "namespace")
	}
	if gen.dryRun != "client" {
		c, err := g.Client()
		if err != nil {
			return err
		}
		resp, err := (&writer{c: c, dry: gen.dryRun}).send(cmd.Context(), "POST", o, "", "", body)
		if err != nil {
			return err
		}
		dec := json.NewDecoder(bytes.NewReader(resp))
		dec.UseNumber()
		if err := dec.Decode(&result); err != nil {
			return fmt.Errorf("decode created %s: %w", o.Name(), err)
		}
	}
	name := printers.ResourceName(info.Kind, info.Group) + "/" + manifest.Object{Object: result}.Name()
	switch gen.output {
	case "":
		verb := gen.verb
		if verb == "" {
			verb = "created"
		}
		fmt.Fprintf(streams.Out, "%s %s%s\n", name, verb, gen.dryRun.suffix())
		return nil
	case "name":
		fmt.Fprintln(streams.Out, name)
		return nil
	}
	return printers.PrintObjects(streams.Out, gen.output, []printers.Obj{result}, false)
}

// addGenerators adds kubectl's most used "create KIND NAME" forms.
func addGenerators(create *cobra.Command, streams cli.Streams, g *cli.Globals) {
	create.AddCommand(
		newCreateNamespace(streams, g),
		newCreateConfigMap(streams, g),
		newCreateSecret(streams, g),
		newCreateDeployment(streams, g),
		newCreateService(streams, g),
	)
}

func newCreateNamespace(streams cli.Streams, g *cli.Globals) *cobra.Command {
	var gen generated
	cmd := &cobra.Command{
		Use:     "namespace NAME [--dry-run=server|client|none]",
		Aliases: []string{"ns"},
		Short:   "Create a namespace with the specified name",
		Long:    "Create a namespace with the specified name.",
		Example: "  kubectl-lite create namespace my-namespace",
		Args:    exactlyOneName,
		RunE: func(cmd *cobra.Command, args []string) error {
			return gen.run(cmd, streams, g, map[string]any{"apiVersion": "v1", "kind": "Namespace",
				"metadata": map[string]any{"name": args[0]}})
		},
	}
	gen.bind(cmd)
	return cmd
}

func exactlyOneName(cmd *cobra.Command, args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("exactly one NAME is required, got %d", len(args))
	}
	return nil
}

// sources are the --from-literal / --from-file / --from-env-file flags of
// configmaps and secrets.
type sources struct {
	literals, files, envFiles []string
}

func (s *sources) bind(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringArrayVar(&s.literals, "from-literal", nil, "Specify a key and literal value to insert (i.e. mykey=somevalue)")
	f.StringSliceVar(&s.files, "from-file", nil, "Key file can be specified using its file path, in which case file basename will be used as key, or optionally with a key and file path, in which case the given key will be used.  Specifying a directory will iterate each named file in the directory whose basename is a valid key.")
	f.StringSliceVar(&s.envFiles, "from-env-file", nil, "Specify the path to a file to read lines of key=val pairs to create.")
}

var keyPattern = regexp.MustCompile(`^[-._a-zA-Z0-9]+$`)

// read returns the key/value pairs the flags name, refusing duplicates and
// keys kubectl would refuse.
func (s *sources) read() (map[string][]byte, error) {
	if len(s.envFiles) > 0 && (len(s.files) > 0 || len(s.literals) > 0) {
		return nil, fmt.Errorf("from-env-file cannot be combined with from-file or from-literal")
	}
	out := map[string][]byte{}
	add := func(k string, v []byte) error {
		if !keyPattern.MatchString(k) {
			return fmt.Errorf("%q is not a valid key name: a valid config key must consist of alphanumeric characters, '-', '_' or '.'", k)
		}
		if _, dup := out[k]; dup {
			return fmt.Errorf("cannot add key %q, another key by that name already exists", k)
		}
		out[k] = v
		return nil
	}
	for _, l := range s.literals {
		k, v, ok := strings.Cut(l, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("invalid literal source %s, expected key=value", l)
		}
		if err := add(k, []byte(v)); err != nil {
			return nil, err
		}
	}
	for _, f := range s.files {
		key, path, ok := strings.Cut(f, "=")
		if !ok {
			key, path = "", f
		}
		st, err := os.Stat(path)
		if err != nil {
			return nil, fmt.Errorf("error reading %s: no such file or directory", path)
		}
		if st.IsDir() {
			if key != "" {
				return nil, fmt.Errorf("cannot give a key name for a directory path")
			}
			ents, err := os.ReadDir(path)
			if err != nil {
				return nil, fmt.Errorf("error listing files in %s: %w", path, err)
			}
			for _, e := range ents {
				if !e.Type().IsRegular() || !keyPattern.MatchString(e.Name()) {
					continue
				}
				b, err := os.ReadFile(filepath.Join(path, e.Name()))
				if err != nil {
					return nil, err
				}
				if err := add(e.Name(), b); err != nil {
					return nil, err
				}
			}
			continue
		}
		if key == "" {
			key = filepath.Base(path)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		if err := add(key, b); err != nil {
			return nil, err
		}
	}
	for _, p := range s.envFiles {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("error reading %s: no such file or directory", p)
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		for n := 1; sc.Scan(); n++ {
			line := strings.TrimSpace(sc.Text())
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			k, v, ok := strings.Cut(line, "=")
			if !ok {
				v = os.Getenv(k)
			}
			if err := add(k, []byte(v)); err != nil {
				return nil, fmt.Errorf("%s line %d: %w", p, n, err)
			}
		}
	}
	return out, nil
}

func newCreateConfigMap(streams cli.Streams, g *cli.Globals) *cobra.Command {
	var (
		gen generated
		src sources
	)
	cmd := &cobra.Command{
		Use:     "configmap NAME [--from-file=[key=]source] [--from-literal=key1=value1] [--dry-run=server|client|none]",
		Aliases: []string{"cm"},
		Short:   "Create a config map from a local file, directory or literal value",
		Long:    "Create a config map based on a file, directory, or specified literal value.",
		Example: `  kubectl-lite create configmap my-config --from-file=path/to/bar
  kubectl-lite create configmap my-config --from-literal=key1=config1 --from-literal=key2=config2`,
		Args: exactlyOneName,
		RunE: func(cmd *cobra.Command, args []string) error {
			kv, err := src.read()
			if err != nil {
				return err
			}
			obj := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": args[0]}}
			data, binary := map[string]any{}, map[string]any{}
			for k, v := range kv {
				if isText(v) {
					data[k] = string(v)
				} else {
					binary[k] = base64.StdEncoding.EncodeToString(v)
				}
			}
			if len(data) > 0 {
				obj["data"] = data
			}
			if len(binary) > 0 {
				obj["binaryData"] = binary
			}
			return gen.run(cmd, streams, g, obj)
		},
	}
	gen.bind(cmd)
	src.bind(cmd)
	return cmd
}

// isText says whether v can be a ConfigMap's data value: UTF-8 text, as
// kubectl decides between data and binaryData.
func isText(v []byte) bool { return utf8.Valid(v) }

func newCreateSecret(streams cli.Streams, g *cli.Globals) *cobra.Command {
	secret := &cobra.Command{
		Use:   "secret (generic) NAME",
		Short: "Create a secret using a specified subcommand",
		Long:  "Create a secret with specified type. A generic secret is made from local files, directories or literal values.",
	}
	var (
		gen generated
		src sources
		typ string
	)
	generic := &cobra.Command{
		Use:   "generic NAME [--type=string] [--from-file=[key=]source] [--from-literal=key1=value1] [--dry-run=server|client|none]",
		Short: "Create a secret from a local file, directory, or literal value",
		Long:  "Create a secret based on a file, directory, or specified literal value.",
		Example: `  kubectl-lite create secret generic my-secret --from-file=path/to/bar
  kubectl-lite create secret generic my-secret --from-literal=key1=supersecret --from-literal=key2=topsecret`,
		Args: exactlyOneName,
		RunE: func(cmd *cobra.Command, args []string) error {
			kv, err := src.read()
			if err != nil {
				return err
			}
			data := map[string]any{}
			for k, v := range kv {
				data[k] = base64.StdEncoding.EncodeToString(v)
			}
			obj := map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": args[0]}}
			if len(data) > 0 {
				obj["data"] = data
			}
			if typ != "" {
				obj["type"] = typ
			}
			return gen.run(cmd, streams, g, obj)
		},
	}
	gen.bind(generic)
	src.bind(generic)
	generic.Flags().StringVar(&typ, "type", "", "The type of secret to create")
	secret.AddCommand(generic)
	return secret
}

// containerName is kubectl's container name for an image:
// "registry:5000/team/nginx:1.25" gives "nginx".
func containerName(image string) string {
	n := image
	if i := strings.LastIndex(n, "/"); i >= 0 {
		n = n[i+1:]
	}
	n, _, _ = strings.Cut(n, "@")
	n, _, _ = strings.Cut(n, ":")
	n = strings.ToLower(regexp.MustCompile(`[^a-zA-Z0-9-]+`).ReplaceAllString(n, "-"))
	return strings.Trim(n, "-")
}

func newCreateDeployment(streams cli.Streams, g *cli.Globals) *cobra.Command {
	var (
		gen      generated
		images   []string
		replicas int32
		port     int32
	)
	cmd := &cobra.Command{
		Use:     "deployment NAME --image=image -- [COMMAND] [args...]",
		Aliases: []string{"deploy"},
		Short:   "Create a deployment with the specified name",
		Long:    "Create a deployment with the specified name.",
		Example: `  kubectl-lite create deployment my-dep --image=busybox -- date
  kubectl-lite create deployment my-dep --image=nginx --replicas=3 --port=80
  kubectl-lite create deployment web --image=nginx --dry-run=client -o yaml`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			command := args[1:]
			if dash := cmd.ArgsLenAtDash(); dash >= 0 && dash != 1 {
				return fmt.Errorf("exactly one NAME is required, got %d", dash)
			}
			if len(images) == 0 {
				return fmt.Errorf("required flag(s) \"image\" not set")
			}
			if len(images) > 1 && len(command) > 0 {
				return fmt.Errorf("cannot specify multiple --image options and command")
			}
			labels := map[string]any{"app": name}
			var ctrs []any
			for _, img := range images {
				c := map[string]any{"name": containerName(img), "image": img, "resources": map[string]any{}}
				if len(command) > 0 {
					c["command"] = command
				}
				if port >= 0 {
					c["ports"] = []any{map[string]any{"containerPort": port}}
				}
				ctrs = append(ctrs, c)
			}
			obj := map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
				"metadata": map[string]any{"name": name, "labels": labels},
				"spec": map[string]any{"replicas": replicas, "selector": map[string]any{"matchLabels": labels}, "strategy": map[string]any{},
					"template": map[string]any{"metadata": map[string]any{"labels": labels}, "spec": map[string]any{"containers": ctrs}}},
				"status": map[string]any{}}
			return gen.run(cmd, streams, g, obj)
		},
	}
	gen.bind(cmd)
	cmd.Flags().StringSliceVar(&images, "image", nil, "Image names to run. A deployment can have multiple images set for multi-container pod.")
	cmd.Flags().Int32VarP(&replicas, "replicas", "r", 1, "Number of replicas to create. Default is 1.")
	cmd.Flags().Int32Var(&port, "port", -1, "The containerPort that this deployment exposes.")
	return cmd
}

func newCreateService(streams cli.Streams, g *cli.Globals) *cobra.Command {
	svc := &cobra.Command{
		Use:     "service (clusterip | nodeport) NAME",
		Aliases: []string{"svc"},
		Short:   "Create a service using a specified subcommand",
		Long:    "Create a service using a specified subcommand. Its selector is app=NAME, as kubectl sets it.",
	}
	for _, typ := range []string{"ClusterIP", "NodePort"} {
		var (
			gen       generated
			tcp       []string
			clusterIP string
			nodePort  int32
		)
		sub := &cobra.Command{
			Use:     strings.ToLower(typ) + " NAME [--tcp=<port>:<targetPort>] [--dry-run=server|client|none]",
			Short:   "Create a " + typ + " service",
			Long:    "Create a " + typ + " service with the specified name.",
			Example: "  kubectl-lite create service " + strings.ToLower(typ) + " my-svc --tcp=5678:8080",
			Args:    exactlyOneName,
			RunE: func(cmd *cobra.Command, args []string) error {
				name := args[0]
				if len(tcp) == 0 && clusterIP != "None" {
					return fmt.Errorf("at least one tcp port specifier must be provided")
				}
				var ports []any
				for _, spec := range tcp {
					ps, ts, hasTarget := strings.Cut(spec, ":")
					p, err := strconv.Atoi(ps)
					if err != nil {
						return fmt.Errorf("invalid --tcp %q: port %q is not a number", spec, ps)
					}
					var target any = p
					if hasTarget {
						if tn, err := strconv.Atoi(ts); err == nil {
							target = tn
						} else {
							target = ts
						}
					}
					port := map[string]any{"name": strings.ReplaceAll(spec, ":", "-"), "port": p, "targetPort": target, "protocol": "TCP"}
					if nodePort > 0 {
						port["nodePort"] = nodePort
					}
					ports = append(ports, port)
				}
				spec := map[string]any{"type": typ, "selector": map[string]any{"app": name}}
				if len(ports) > 0 {
					spec["ports"] = ports
				}
				if clusterIP != "" {
					spec["clusterIP"] = clusterIP
				}
				return gen.run(cmd, streams, g, map[string]any{"apiVersion": "v1", "kind": "Service",
					"metadata": map[string]any{"name": name, "labels": map[string]any{"app": name}}, "spec": spec, "status": map[string]any{"loadBalancer": map[string]any{}}})
			},
		}
		gen.bind(sub)
		sub.Flags().StringSliceVar(&tcp, "tcp", nil, "Port pairs can be specified as '<port>:<targetPort>'.")
		if typ == "ClusterIP" {
			sub.Flags().StringVar(&clusterIP, "clusterip", "", "Assign your own ClusterIP or set to 'None' for a 'headless' service (no loadbalancing).")
		} else {
			sub.Flags().Int32Var(&nodePort, "node-port", 0, "Port used to expose the service on each node in a cluster.")
		}
		svc.AddCommand(sub)
	}
	return svc
}
