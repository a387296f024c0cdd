package autoscale

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/resource"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/kubectl-lite/cli"
	"github.com/minik8s/minik8s/kubectl-lite/manifest"
)

// FieldManager is kubectl autoscale's default --field-manager.
const FieldManager = "kubectl-autoscale"

const cpuPercentDeprecation = "Use --cpu with percentage or resource quantity format (e.g., '70%' for utilization or '500m' for milliCPU)."

// noResources is kubectl's resource builder's error without arguments.
const noResources = `You must provide one or more resources by argument or filename.
Example resource specifications include:
   '-f rsrc.yaml'
   '--filename=rsrc.json'
   '<resource> <name>'
   '<resource>'`

// options are autoscale's flags.
type options struct {
	min, max, cpuPercent int32
	cpu, memory, name    string
	dryRun               cli.DryRun
	output               string
	files                manifest.Files
	saveConfig, record   bool
	fieldManager         string
	showManagedFields    bool
	namespace            string
	enforceNamespace     bool
	commandLine          string
	streams              cli.Streams
	client               *client.Client
	ctx                  context.Context
}

// NewCommand returns the autoscale command.
func NewCommand(streams cli.Streams, g *cli.Globals) *cobra.Command {
	o := &options{streams: streams}
	cmd := &cobra.Command{
		Use:                   "autoscale (-f FILENAME | TYPE NAME | TYPE/NAME) [--min=MINPODS] --max=MAXPODS [--cpu=CPU] [--memory=MEMORY]",
		DisableFlagsInUseLine: true,
		Short:                 "Auto-scale a deployment, replica set, stateful set, or replication controller",
		Long: `Creates an autoscaler that automatically chooses and sets the number of pods that run in a Kubernetes cluster.
The command will attempt to use the autoscaling/v2 API first, in case of an error, it will fall back to autoscaling/v1 API.

Looks up a deployment, replica set, stateful set, or replication controller by name and creates an autoscaler that uses the given resource as a reference.
An autoscaler can automatically increase or decrease number of pods deployed within the system as needed.`,
		Example: `  # Auto scale a deployment "foo", with the number of pods between 2 and 10, no target CPU utilization specified so a default autoscaling policy will be used
  kubectl-lite autoscale deployment foo --min=2 --max=10

  # Auto scale a replication controller "foo", with the number of pods between 1 and 5, target CPU utilization at 80%
  kubectl-lite autoscale rc foo --max=5 --cpu=80%

  # Auto scale a deployment "bar", with the number of pods between 3 and 6, target average CPU of 500m and memory of 200Mi
  kubectl-lite autoscale deployment bar --min=3 --max=6 --cpu=500m --memory=200Mi

  # Auto scale a deployment "bar", with the number of pods between 2 and 8, target CPU utilization 60% and memory utilization 70%
  kubectl-lite autoscale deployment bar --min=2 --max=8 --cpu=60% --memory=70%`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("cpu-percent") {
				// kubectl's cobra prints a deprecated flag's notice on
				// stderr (kubectl-lite's root writes cobra's own output
				// to stdout, so the notice is printed here).
				fmt.Fprintf(streams.ErrOut, "Flag --cpu-percent has been deprecated, %s\n", cpuPercentDeprecation)
			}
			if err := o.dryRun.Validate(); err != nil {
				return err
			}
			ns, err := g.DefaultNamespace()
			if err != nil {
				return err
			}
			o.namespace, o.enforceNamespace = ns, g.Namespace != ""
			o.commandLine = cli.RecordedCommand()
			if err := o.validate(); err != nil {
				return err
			}
			if o.client, err = g.Client(); err != nil {
				return err
			}
			o.ctx = cmd.Context()
			return o.run(g, args)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.record, "record", false, "Record current kubectl command in the resource annotation. If set to false, do not record the command. If set to true, record the command. If not set, default to updating the existing annotation value only if one already exists.")
	f.StringVarP(&o.output, "output", "o", "", "Output format. One of: (json, yaml, name).")
	f.BoolVar(&o.showManagedFields, "show-managed-fields", false, "If true, keep the managedFields when printing objects in JSON or YAML format.")
	f.Int32Var(&o.min, "min", -1, "The lower limit for the number of pods that can be set by the autoscaler. If it's not specified or negative, the server will apply a default value.")
	f.Int32Var(&o.max, "max", -1, "The upper limit for the number of pods that can be set by the autoscaler. Required.")
	_ = cmd.MarkFlagRequired("max")
	f.Int32Var(&o.cpuPercent, "cpu-percent", -1, "The target average CPU utilization (represented as a percent of requested CPU) over all the pods. If it's not specified or negative, a default autoscaling policy will be used.")
	f.StringVar(&o.cpu, "cpu", "", `Target CPU utilization over all the pods. When specified as a percentage (e.g."70%" for 70% of requested CPU) it will target average utilization. When specified as quantity (e.g."500m" for 500 milliCPU) it will target average value. Value without units is treated as a quantity with miliCPU being the unit (e.g."500" is "500m").`)
	f.StringVar(&o.memory, "memory", "", `Target memory utilization over all the pods. When specified  as a percentage (e.g."60%" for 60% of requested memory) it will target average utilization. When specified as quantity (e.g."200Mi" for 200 MiB, "1Gi" for 1 GiB) it will target average value. Value without units is treated as a quantity with mebibytes being the unit (e.g."200" is "200Mi").`)
	f.StringVar(&o.name, "name", "", "The name for the newly created object. If not specified, the name of the input resource will be used.")
	_ = f.MarkHidden("cpu-percent")
	o.dryRun.Bind(cmd)
	o.files.Bind(cmd, "Filename, directory, or URL to files identifying the resource to autoscale.")
	f.BoolVar(&o.saveConfig, "save-config", false, "If true, the configuration of current object will be saved in its annotation. Otherwise, the annotation will be unchanged. This flag is useful when you want to perform kubectl apply on this object in the future.")
	f.StringVar(&o.fieldManager, "field-manager", FieldManager, "Name of the manager used to track field ownership.")
	return cmd
}

// validate is kubectl's Validate: the bounds and the metric targets.
func (o *options) validate() error {
	if o.max < 1 {
		return fmt.Errorf("--max=MAXPODS is required and must be at least 1, max: %d", o.max)
	}
	if o.max < o.min {
		return fmt.Errorf("--max=MAXPODS must be larger or equal to --min=MINPODS, max: %d, min: %d", o.max, o.min)
	}
	if o.cpuPercent > 0 && o.cpu != "" {
		return errors.New("--cpu-percent and --cpu are mutually exclusive")
	}
	if o.cpu != "" {
		if _, err := parseTarget(o.cpu, api.ResourceCPU); err != nil {
			return err
		}
	}
	if o.memory != "" {
		if _, err := parseTarget(o.memory, api.ResourceMemory); err != nil {
			return err
		}
	}
	return nil
}

// target is one parsed --cpu or --memory: a utilization percentage or an
// average value.
type target struct {
	utilization *int32
	value       *resource.Quantity
}

// parseTarget is kubectl's parseResourceInput: "70%" a utilization, a
// quantity an average value, a bare number in millicores or mebibytes.
func parseTarget(input string, res api.ResourceName) (target, error) {
	input = strings.TrimSpace(input)
	if input == "" {
		return target{}, errors.New("empty input")
	}
	if v, ok := strings.CutSuffix(input, "%"); ok {
		n, err := strconv.ParseInt(v, 10, 32)
		if err != nil || n < 0 {
			return target{}, fmt.Errorf("invalid percentage value: %s", v)
		}
		u := int32(n)
		return target{utilization: &u}, nil
	}
	if f, err := strconv.ParseFloat(input, 64); err == nil {
		unit := map[api.ResourceName]string{api.ResourceCPU: "m", api.ResourceMemory: "Mi"}[res]
		q, err := resource.ParseQuantity(fmt.Sprintf("%g%s", f, unit))
		if err != nil {
			return target{}, err
		}
		return target{value: &q}, nil
	}
	q, err := resource.ParseQuantity(input)
	if err != nil {
		return target{}, fmt.Errorf("invalid resource %s value: %s", res, input)
	}
	return target{value: &q}, nil
}

// subject is one object to autoscale: its kind, as the resource mapping
// gives it, and name.
type subject struct {
	info api.ResourceInfo
	name string
}

// run is kubectl's Run: each object named (read from the server) or in
// the -f files gets an HPA; the errors are reported together.
func (o *options) run(g *cli.Globals, args []string) error {
	subjects, errs, err := o.subjects(g, args)
	if err != nil {
		return err
	}
	count := 0
	for _, s := range subjects {
		if s.err != nil {
			errs = append(errs, s.err)
			continue
		}
		if err := o.autoscale(s.subject); err != nil {
			errs = append(errs, err)
			continue
		}
		count++
	}
	if len(errs) > 0 {
		return cli.Aggregate(errs)
	}
	if count == 0 {
		return errors.New("no objects passed to autoscale")
	}
	return nil
}

type visited struct {
	subject
	err error
}

// subjects resolves the arguments or files as kubectl's builder does: a
// named object must exist; the objects of files are taken as written.
func (o *options) subjects(g *cli.Globals, args []string) ([]visited, []error, error) {
	if len(o.files.Filenames) > 0 {
		objs, err := o.files.Objects(o.ctx, o.streams, g)
		if err != nil {
			return nil, nil, err
		}
		var out []visited
		for _, obj := range objs {
			out = append(out, visited{subject: subject{info: obj.Info, name: obj.Name()}})
		}
		return out, nil, nil
	}
	if len(args) == 0 {
		return nil, nil, errors.New(noResources)
	}
	// kubectl finds the kind through discovery: custom resources with a
	// scale subresource can be autoscaled too.
	m, err := g.Mapper(o.ctx)
	if err != nil {
		return nil, nil, err
	}
	sel, err := m.Parse(args, o.namespace, false)
	if err != nil {
		return nil, nil, err
	}
	var out []visited
	for _, r := range sel.Refs {
		_, err := o.client.Dynamic(r.Info).Namespace(r.Namespace).Get(o.ctx, r.Name)
		out = append(out, visited{subject: subject{info: r.Info, name: r.Name}, err: err})
	}
	return out, nil, nil
}

// autoscale makes the HPA of one object: autoscaling/v2 first and, when
// that fails (to be created or printed), autoscaling/v1 if the flags can
// be said in v1, as kubectl does.
func (o *options) autoscale(s subject) error {
	if !s.info.HasSubresource("scale") {
		return fmt.Errorf("cannot autoscale a %s: could not find scale subresource for %s/%s, Resource=%s in discovery information",
			s.info.Kind, s.info.Group, s.info.Version, s.info.Resource)
	}
	v2, err := o.hpaV2(s)
	if err != nil {
		return fmt.Errorf("failed to create HorizontalPodAutoscaler using autoscaling/v2 API: %w", err)
	}
	if err := o.handle(v2); err == nil {
		return nil
	}
	cpu, err := parseTarget(o.cpu, api.ResourceCPU)
	if err != nil {
		return fmt.Errorf("failed to create autoscaling/v2 HPA and the configuration is incompatible with autoscaling/v1: %w", err)
	}
	if !(o.cpuPercent >= 0 && o.memory == "" || o.memory == "" && cpu.utilization != nil) {
		// kubectl wraps a nil error here: its message ends in %!w(<nil>).
		return fmt.Errorf("failed to create autoscaling/v2 HPA and the configuration is incompatible with autoscaling/v1: %w", error(nil))
	}
	return o.handle(o.hpaV1(s))
}

func (o *options) meta(s subject) api.ObjectMeta {
	m := api.ObjectMeta{Name: o.name}
	if m.Name == "" {
		m.Name = s.name
	}
	if o.enforceNamespace {
		m.Namespace = o.namespace
	}
	return m
}

func (o *options) ref(s subject) api.CrossVersionObjectReference {
	return api.CrossVersionObjectReference{APIVersion: s.info.GroupVersion(), Kind: s.info.Kind, Name: s.name}
}

func (o *options) minReplicas() *int32 {
	if o.min > 0 {
		m := o.min
		return &m
	}
	return nil
}

// hpaV2 is kubectl's autoscaling/v2 HPA: a CPU target from --cpu-percent
// or --cpu, then a memory target.
func (o *options) hpaV2(s subject) (*api.HorizontalPodAutoscaler, error) {
	spec := api.HorizontalPodAutoscalerSpec{ScaleTargetRef: o.ref(s), MinReplicas: o.minReplicas(), MaxReplicas: o.max}
	add := func(res api.ResourceName, t target) {
		mt := api.MetricTarget{Type: "AverageValue", AverageValue: t.value}
		if t.utilization != nil {
			mt = api.MetricTarget{Type: "Utilization", AverageUtilization: t.utilization}
		}
		spec.Metrics = append(spec.Metrics, api.ResourceMetric(api.ResourceMetricSource{Name: string(res), Target: mt}))
	}
	if o.cpuPercent > 0 {
		u := o.cpuPercent
		add(api.ResourceCPU, target{utilization: &u})
	}
	for _, r := range []struct {
		name  api.ResourceName
		input string
	}{{api.ResourceCPU, o.cpu}, {api.ResourceMemory, o.memory}} {
		if r.input == "" {
			continue
		}
		t, err := parseTarget(r.input, r.name)
		if err != nil {
			return nil, err
		}
		add(r.name, t)
	}
	return &api.HorizontalPodAutoscaler{TypeMeta: api.TypeMeta{Kind: "HorizontalPodAutoscaler", APIVersion: "autoscaling/v2"},
		ObjectMeta: o.meta(s), Spec: spec}, nil
}

// hpaV1 is kubectl's autoscaling/v1 fallback: the --cpu-percent target.
func (o *options) hpaV1(s subject) *api.HorizontalPodAutoscalerV1 {
	spec := api.HorizontalPodAutoscalerSpecV1{ScaleTargetRef: api.CrossVersionObjectReferenceV1(o.ref(s)), MinReplicas: o.minReplicas(), MaxReplicas: o.max}
	if o.cpuPercent >= 0 {
		c := o.cpuPercent
		spec.TargetCPUUtilizationPercentage = &c
	}
	return &api.HorizontalPodAutoscalerV1{TypeMeta: api.TypeMeta{Kind: "HorizontalPodAutoscaler", APIVersion: "autoscaling/v1"},
		ObjectMeta: o.meta(s), Spec: spec}
}

// handle is kubectl's handleHPA: record the command, print a client dry
// run, or save the configuration, create and print the server's answer. h
// is a typed HPA of either version, encoded as kubectl's typed objects are
// (k8s.io/api's field order, an empty status written out).
func (o *options) handle(h api.Object) error {
	meta := h.GetObjectMeta()
	annotate := func(key, value string) {
		if meta.Annotations == nil {
			meta.Annotations = map[string]string{}
		}
		meta.Annotations[key] = value
	}
	if o.record {
		annotate("kubernetes.io/change-cause", o.commandLine)
	}
	if o.dryRun == cli.DryRunClient {
		return o.print(h, "created")
	}
	if o.saveConfig {
		last, err := json.Marshal(h)
		if err != nil {
			return err
		}
		annotate(api.LastAppliedConfigAnnotation, string(last)+"\n")
	}
	body, err := json.Marshal(h)
	if err != nil {
		return err
	}
	apiVersion := h.GetTypeMeta().APIVersion
	group, version, _ := strings.Cut(apiVersion, "/")
	info := api.ResourceInfo{Group: group, Version: version, Resource: "horizontalpodautoscalers", Namespaced: true}
	q := o.dryRun.Query()
	if q == nil {
		q = map[string][]string{}
	}
	if o.fieldManager != "" {
		q.Set("fieldManager", o.fieldManager)
	}
	resp, err := o.client.Do(o.ctx, client.Request{Method: http.MethodPost, Path: client.ResourcePath(info, o.namespace, ""), Query: q, Body: body})
	if err != nil {
		return err
	}
	created, err := typed(apiVersion, resp)
	if err != nil {
		return fmt.Errorf("decode created HorizontalPodAutoscaler: %w", err)
	}
	return o.print(created, "autoscaled")
}

// typed decodes the server's answer as kubectl's clientset does, into the
// typed HPA of its version, which is what kubectl prints.
func typed(apiVersion string, data []byte) (api.Object, error) {
	if apiVersion == "autoscaling/v1" {
		var h api.HorizontalPodAutoscalerV1
		err := json.Unmarshal(data, &h)
		return &h, err
	}
	var h api.HorizontalPodAutoscaler
	err := json.Unmarshal(data, &h)
	return &h, err
}

// print writes obj (a typed HPA) as kubectl's printer for -o does, or
// the "KIND/NAME OPERATION" line with the dry-run suffix.
func (o *options) print(obj api.Object, operation string) error {
	meta := obj.GetObjectMeta()
	if !o.showManagedFields {
		meta.ManagedFields = nil
	}
	name := "horizontalpodautoscaler.autoscaling/" + meta.Name
	switch o.output {
	case "":
		fmt.Fprintf(o.streams.Out, "%s %s%s\n", name, operation, o.dryRun.Suffix())
		return nil
	case "name":
		fmt.Fprintln(o.streams.Out, name)
		return nil
	case "json", "yaml":
		b, err := json.Marshal(obj)
		if err != nil {
			return err
		}
		if o.output == "yaml" {
			y, err := yaml.JSONToYAML(b)
			if err != nil {
				return err
			}
			_, err = o.streams.Out.Write(y)
			return err
		}
		var buf bytes.Buffer
		if err := json.Indent(&buf, b, "", "    "); err != nil {
			return err
		}
		buf.WriteByte('\n')
		_, err = o.streams.Out.Write(buf.Bytes())
		return err
	}
	return fmt.Errorf("unable to match a printer suitable for the output format %q, allowed formats are: "+
		"go-template,go-template-file,json,jsonpath,jsonpath-as-json,jsonpath-file,kyaml,name,template,templatefile,yaml", o.output)
}
