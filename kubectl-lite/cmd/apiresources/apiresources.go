package apiresources

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/kubectl-lite/cli"
)

// resourceList is the part of a discovery APIResourceList read here.
type resourceList struct {
	GroupVersion string `json:"groupVersion"`
	Resources    []struct {
		Name       string   `json:"name"`
		Namespaced bool     `json:"namespaced"`
		Kind       string   `json:"kind"`
		Verbs      []string `json:"verbs"`
		ShortNames []string `json:"shortNames"`
		Categories []string `json:"categories"`
	} `json:"resources"`
}

// row is one served resource.
type row struct {
	name, group, groupVersion, kind string
	shortNames, verbs, categories   []string
	namespaced                      bool
}

// NewCommand returns the api-resources command.
func NewCommand(streams cli.Streams, g *cli.Globals) *cobra.Command {
	var (
		output     string
		namespaced bool
		group      string
		noHeaders  bool
	)
	cmd := &cobra.Command{
		Use:   "api-resources",
		Short: "Print the supported API resources on the server",
		Long: `Print the supported API resources on the server, as its discovery
documents list them: name, short names, API version, scope and kind.`,
		Example: `  kubectl-lite api-resources
  kubectl-lite api-resources --namespaced=false
  kubectl-lite api-resources --api-group=apps -o name`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if output != "" && output != "name" && output != "wide" {
				return fmt.Errorf("--output %v is not available", output)
			}
			c, err := g.Client()
			if err != nil {
				return err
			}
			all, err := discover(cmd.Context(), c)
			if err != nil {
				return err
			}
			var rows []row
			for _, r := range all {
				if cmd.Flags().Changed("namespaced") && r.namespaced != namespaced {
					continue
				}
				if cmd.Flags().Changed("api-group") && r.group != group {
					continue
				}
				rows = append(rows, r)
			}
			// kubectl's order: by group, core first, then by name.
			sort.SliceStable(rows, func(i, j int) bool {
				if rows[i].group != rows[j].group {
					return rows[i].group < rows[j].group
				}
				return rows[i].name < rows[j].name
			})
			if output == "name" {
				for _, r := range rows {
					if r.group == "" {
						fmt.Fprintln(streams.Out, r.name)
					} else {
						fmt.Fprintf(streams.Out, "%s.%s\n", r.name, r.group)
					}
				}
				return nil
			}
			w := tabwriter.NewWriter(streams.Out, 6, 4, 3, ' ', 0)
			if !noHeaders {
				head := "NAME\tSHORTNAMES\tAPIVERSION\tNAMESPACED\tKIND"
				if output == "wide" {
					head += "\tVERBS\tCATEGORIES"
				}
				fmt.Fprintln(w, head)
			}
			for _, r := range rows {
				line := fmt.Sprintf("%s\t%s\t%s\t%t\t%s", r.name, strings.Join(r.shortNames, ","), r.groupVersion, r.namespaced, r.kind)
				if output == "wide" {
					line += "\t" + strings.Join(r.verbs, ",") + "\t" + strings.Join(r.categories, ",")
				}
				fmt.Fprintln(w, line)
			}
			return w.Flush()
		},
	}
	f := cmd.Flags()
	f.StringVarP(&output, "output", "o", "", "Output format. One of: (wide, name).")
	f.BoolVar(&namespaced, "namespaced", true, "If false, non-namespaced resources will be returned, otherwise returning namespaced resources by default.")
	f.StringVar(&group, "api-group", "", "Limit to resources in the specified API group.")
	f.BoolVar(&noHeaders, "no-headers", false, "When using the default or custom-column output format, don't print headers (default print headers).")
	return cmd
}

// discover reads the server's discovery documents: /api/v1, then the
// preferred version of every group under /apis. Subresources are left out.
func discover(ctx context.Context, c *client.Client) ([]row, error) {
	gvs := []string{"v1"}
	b, err := c.Do(ctx, client.Request{Path: "/apis"})
	if err != nil {
		return nil, err
	}
	var groups struct {
		Groups []struct {
			PreferredVersion struct {
				GroupVersion string `json:"groupVersion"`
			} `json:"preferredVersion"`
		} `json:"groups"`
	}
	if err := json.Unmarshal(b, &groups); err != nil {
		return nil, fmt.Errorf("decode /apis: %w", err)
	}
	for _, gr := range groups.Groups {
		gvs = append(gvs, gr.PreferredVersion.GroupVersion)
	}
	var rows []row
	for _, gv := range gvs {
		path := "/apis/" + gv
		if gv == "v1" {
			path = "/api/v1"
		}
		b, err := c.Do(ctx, client.Request{Path: path})
		if err != nil {
			return nil, err
		}
		var l resourceList
		if err := json.Unmarshal(b, &l); err != nil {
			return nil, fmt.Errorf("decode %s: %w", path, err)
		}
		group, _, ok := strings.Cut(gv, "/")
		if !ok {
			group = ""
		}
		for _, r := range l.Resources {
			if strings.Contains(r.Name, "/") {
				continue
			}
			rows = append(rows, row{name: r.Name, group: group, groupVersion: gv, kind: r.Kind, shortNames: r.ShortNames,
				verbs: r.Verbs, categories: r.Categories, namespaced: r.Namespaced})
		}
	}
	return rows, nil
}
