package create

import (
	"crypto/tls"
	"fmt"
	"os"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minik8s/minik8s/kubectl-lite/cli"
	"github.com/minik8s/minik8s/kubectl-lite/write"
)

// readPEMFile reads --cert or --key with kubectl's error.
func readPEMFile(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return []byte{}, fmt.Errorf("Cannot read file %v, %v", path, err)
	}
	return b, nil
}

func newCreateSecretTLS(streams cli.Streams, g *cli.Globals) *cobra.Command {
	var (
		gen        = write.Generator{Failed: "failed to create secret "}
		cert, key  string
		appendHash bool
	)
	cmd := &cobra.Command{
		Use:                   "tls NAME --cert=path/to/cert/file --key=path/to/key/file [--dry-run=server|client|none]",
		DisableFlagsInUseLine: true,
		Short:                 "Create a TLS secret",
		Long:                  "Create a TLS secret from the given public/private key pair.\n\nThe public/private key pair must exist beforehand. The public key certificate must be .PEM encoded and match the given private key.",
		Example: `  # Create a new TLS secret named tls-secret with the given key pair
  kubectl-lite create secret tls tls-secret --cert=path/to/tls.crt --key=path/to/tls.key`,
		Args: oneName,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := gen.DryRun.Validate(); err != nil {
				return err
			}
			if key == "" || cert == "" {
				return fmt.Errorf("key and cert must be specified")
			}
			certPEM, err := readPEMFile(cert)
			if err != nil {
				return err
			}
			keyPEM, err := readPEMFile(key)
			if err != nil {
				return err
			}
			if _, err := tls.X509KeyPair(certPEM, keyPEM); err != nil {
				return err
			}
			s := &corev1.Secret{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
				ObjectMeta: metav1.ObjectMeta{Name: args[0]}, Type: corev1.SecretTypeTLS,
				Data: map[string][]byte{corev1.TLSCertKey: certPEM, corev1.TLSPrivateKeyKey: keyPEM}}
			return createSecret(cmd, streams, g, &gen, s, appendHash)
		},
	}
	gen.Bind(cmd)
	cmd.Flags().StringVar(&cert, "cert", "", "Path to PEM encoded public key certificate.")
	cmd.Flags().StringVar(&key, "key", "", "Path to private key associated with given certificate.")
	cmd.Flags().BoolVar(&appendHash, "append-hash", false, "Append a hash of the secret to its name.")
	return cmd
}
