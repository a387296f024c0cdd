package edit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/minik8s/minik8s/api/patch"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/kubectl-lite/cli"
	"github.com/minik8s/minik8s/kubectl-lite/resource"
)

const header = `# Please edit the object below. Lines beginning with a '#' will be ignored,
# and an empty file will abort the edit. If an error occurs while saving this file will be
# reopened with the relevant failures.
#
`

// NewCommand returns the edit command.
func NewCommand(streams cli.Streams, g *cli.Globals) *cobra.Command {
	var output, fieldManager string
	cmd := &cobra.Command{
		Use:   "edit (RESOURCE/NAME | -f FILENAME)",
		Short: "Edit a resource on the server",
		Long: `Edit a resource from the default editor.

The editor is chosen by the KUBE_EDITOR, then the EDITOR environment
variable, falling back to 'vi'. The object is shown as YAML (-o json for
JSON); when the editor exits, the changes are sent to the server as a patch.
Saving the object unchanged or empty cancels the edit.`,
		Example: `  kubectl-lite edit svc/docker-registry
  KUBE_EDITOR="nano" kubectl-lite edit deployment/web
  kubectl-lite edit deployment/web -o json`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if output != "yaml" && output != "json" {
				return fmt.Errorf("the flag 'output' must be one of yaml|json")
			}
			ns, err := g.DefaultNamespace()
			if err != nil {
				return err
			}
			sel, err := g.Parse(cmd.Context(), args, ns, false)
			if err != nil {
				return err
			}
			c, err := g.Client()
			if err != nil {
				return err
			}
			for _, r := range sel.Refs {
				if err := editOne(cmd, streams, c, r, output, fieldManager); err != nil {
					return err
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "yaml", "Output format. One of: (json, yaml).")
	cmd.Flags().StringVar(&fieldManager, "field-manager", "kubectl-edit", "Name of the manager used to track field ownership.")
	return cmd
}

// Editor is the command line of the user's editor.
func Editor() string {
	for _, env := range []string{"KUBE_EDITOR", "EDITOR"} {
		if e := os.Getenv(env); e != "" {
			return e
		}
	}
	return "vi"
}

func editOne(cmd *cobra.Command, streams cli.Streams, c *client.Client, r resource.Ref, output, fieldManager string) error {
	ctx := cmd.Context()
	d := c.Dynamic(r.Info).Namespace(r.Namespace)
	live, err := d.Get(ctx, r.Name)
	if err != nil {
		return err
	}
	original, err := json.Marshal(live)
	if err != nil {
		return fmt.Errorf("encode %s: %w", r, err)
	}
	var text []byte
	if output == "json" {
		var buf bytes.Buffer
		if err := json.Indent(&buf, original, "", "    "); err != nil {
			return fmt.Errorf("encode %s: %w", r, err)
		}
		text = buf.Bytes()
	} else if text, err = yaml.JSONToYAML(original); err != nil {
		return fmt.Errorf("encode %s: %w", r, err)
	}
	dir, err := os.MkdirTemp("", "kubectl-lite-edit-")
	if err != nil {
		return fmt.Errorf("create temp file: %w", err)
	}
	file := filepath.Join(dir, strings.ReplaceAll(r.Info.Resource+"-"+r.Name, "/", "-")+"."+output)
	if err := os.WriteFile(file, append([]byte(header), text...), 0o600); err != nil {
		return fmt.Errorf("write temp file: %w", err)
	}
	keep := false
	defer func() {
		if !keep {
			os.RemoveAll(dir)
		}
	}()
	ed := exec.CommandContext(ctx, "sh", "-c", Editor()+` "$1"`, "editor", file)
	ed.Stdin, ed.Stdout, ed.Stderr = streams.In, streams.Out, streams.ErrOut
	if f, ok := streams.In.(*os.File); ok {
		ed.Stdin = f
	}
	if err := ed.Run(); err != nil {
		return fmt.Errorf("there was a problem with the editor %q: %w", Editor(), err)
	}
	saved, err := os.ReadFile(file)
	if err != nil {
		return fmt.Errorf("read edited file: %w", err)
	}
	body := stripComments(saved)
	if len(bytes.TrimSpace(body)) == 0 {
		fmt.Fprintln(streams.ErrOut, "Edit cancelled, saved file was empty.")
		return nil
	}
	edited, err := yaml.YAMLToJSON(body)
	if err != nil {
		keep = true
		return fmt.Errorf("the edited file had a syntax error: %v. A copy of your changes has been stored to %q", err, file)
	}
	if same, err := sameJSON(original, edited); err != nil {
		keep = true
		return fmt.Errorf("the edited file is not an object: %v. A copy of your changes has been stored to %q", err, file)
	} else if same {
		fmt.Fprintln(streams.ErrOut, "Edit cancelled, no changes made.")
		return nil
	}
	var em map[string]any
	if err := json.Unmarshal(edited, &em); err != nil {
		keep = true
		return fmt.Errorf("the edited file is not an object: %v. A copy of your changes has been stored to %q", err, file)
	}
	u := client.Unstructured{Object: em}
	if u.GetName() != r.Name || u.GetKind() != live.GetKind() || u.GetAPIVersion() != live.GetAPIVersion() {
		keep = true
		return fmt.Errorf("at least one of apiVersion, kind and name was changed. A copy of your changes has been stored to %q", file)
	}
	// A kind kubectl has no schema of (a custom resource) gets a JSON
	// merge patch.
	pt := client.StrategicMergePatchType
	var p []byte
	if resource.BuiltIn(r.Info) {
		p, err = patch.CreateStrategicMergePatch(original, edited, patch.KubernetesSchema(r.Info.Kind))
	} else {
		pt = client.MergePatchType
		p, err = patch.CreateMergePatch(original, edited)
	}
	if err != nil {
		keep = true
		return fmt.Errorf("create patch: %v. A copy of your changes has been stored to %q", err, file)
	}
	if _, err := c.Do(ctx, client.Request{Method: http.MethodPatch, Path: client.ResourcePath(r.Info, r.Namespace, r.Name),
		Query: url.Values{"fieldManager": {fieldManager}}, Body: p, ContentType: string(pt)}); err != nil {
		keep = true
		fmt.Fprintf(streams.ErrOut, "%s\nA copy of your changes has been stored to %q\n", cli.FormatError(err), file)
		return errors.New("Edit cancelled, no valid changes were saved.")
	}
	fmt.Fprintf(streams.Out, "%s edited\n", r)
	return nil
}

func stripComments(b []byte) []byte {
	var out bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	for sc.Scan() {
		if strings.HasPrefix(strings.TrimSpace(sc.Text()), "#") {
			continue
		}
		out.WriteString(sc.Text())
		out.WriteByte('\n')
	}
	return out.Bytes()
}

func sameJSON(a, b []byte) (bool, error) {
	var va, vb any
	if err := json.Unmarshal(a, &va); err != nil {
		return false, err
	}
	if err := json.Unmarshal(b, &vb); err != nil {
		return false, err
	}
	ca, _ := json.Marshal(va)
	cb, _ := json.Marshal(vb)
	return bytes.Equal(ca, cb), nil
}
