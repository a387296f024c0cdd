package apply

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/kubectl-lite/applyobject"
	"github.com/minik8s/minik8s/kubectl-lite/cli"
	"github.com/minik8s/minik8s/kubectl-lite/manifest"
	"github.com/minik8s/minik8s/kubectl-lite/write"
)

// NewCommand returns the apply command.
func NewCommand(streams cli.Streams, g *cli.Globals) *cobra.Command {
	var flags write.Flags
	var serverSide, forceConflicts bool
	var fieldManager string
	cmd := &cobra.Command{
		Use:   "apply -f FILENAME",
		Short: "Apply a configuration to a resource by file name or stdin",
		Long: `Apply a configuration to a resource by file name or stdin.

Objects that do not exist are created. Existing ones are patched with a
three-way merge of the last applied configuration (kept in the
kubectl.kubernetes.io/last-applied-configuration annotation), the new
manifest and the live object: fields removed from the manifest are removed,
fields set by others are kept. JSON and YAML formats are accepted.

With --server-side the server merges the configuration instead
(server-side apply) and records the fields it sets as owned by the field
manager; fields another manager owns are conflicts unless
--force-conflicts.`,
		Example: `  kubectl-lite apply -f ./deploy.yaml
  kubectl-lite apply -R -f ./manifests/
  cat pod.json | kubectl-lite apply -f -
  kubectl-lite apply -f deploy.yaml --dry-run=server
  kubectl-lite apply --server-side -f deploy.yaml
  kubectl-lite apply --server-side --force-conflicts --field-manager=ci -f deploy.yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if forceConflicts && !serverSide {
				return errors.New("--force-conflicts only works with --server-side")
			}
			if serverSide && flags.DryRun == cli.DryRunClient {
				return errors.New("--dry-run=client doesn't work with --server-side (did you mean --dry-run=server instead?)")
			}
			manager := fieldManager
			if !cmd.Flags().Changed("field-manager") && serverSide {
				manager = applyobject.FieldManagerServerSideApply
			}
			return flags.Each(cmd.Context(), streams, g, "apply", func(c *client.Client, w *write.Writer, o manifest.Object) (string, error) {
				w.SetFieldManager(manager)
				if serverSide {
					return applyobject.ServerSide(cmd.Context(), w, o, forceConflicts)
				}
				return applyobject.ClientSide(cmd.Context(), c, w, o, streams.ErrOut)
			})
		},
	}
	flags.Bind(cmd, "apply")
	f := cmd.Flags()
	f.BoolVar(&serverSide, "server-side", false, "If true, apply runs in the server instead of the client.")
	f.BoolVar(&forceConflicts, "force-conflicts", false, "If true, server-side apply will force the changes against conflicts.")
	f.StringVar(&fieldManager, "field-manager", applyobject.FieldManagerClientSideApply, "Name of the manager used to track field ownership.")
	return cmd
}
