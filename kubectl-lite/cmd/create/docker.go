package create

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minik8s/minik8s/kubectl-lite/cli"
	"github.com/minik8s/minik8s/kubectl-lite/write"
)

// dockerConfigEntry is one registry's credentials in a .dockerconfigjson,
// in kubectl's field order.
type dockerConfigEntry struct {
	Username string `json:"username,omitempty"`
	Password string `json:"password,omitempty"`
	Email    string `json:"email,omitempty"`
	Auth     string `json:"auth,omitempty"`
}

// dockerConfigJSON is the .dockerconfigjson document kubectl writes.
type dockerConfigJSON struct {
	Auths map[string]dockerConfigEntry `json:"auths"`
}

// createSecret creates s through gen, its name suffixed with its hash
// when appendHash (--append-hash).
func createSecret(cmd *cobra.Command, streams cli.Streams, g *cli.Globals, gen *write.Generator, s *corev1.Secret, appendHash bool) error {
	if appendHash {
		h, err := secretHash(s)
		if err != nil {
			return err
		}
		s.Name += "-" + h
	}
	obj, err := asMap(s)
	if err != nil {
		return err
	}
	return gen.Create(cmd, streams, g, obj)
}

// secretHash is kubectl's --append-hash suffix: the first ten hex digits
// of the SHA-256 of the secret's kind, name, type and data as JSON, with
// 0, 1, 3, a and e replaced so that it reads as no word.
func secretHash(s *corev1.Secret) (string, error) {
	m := map[string]any{"kind": "Secret", "type": s.Type, "name": s.Name, "data": s.Data}
	if s.Immutable != nil {
		m["immutable"] = *s.Immutable
	}
	b, err := json.Marshal(m)
	if err != nil {
		return "", err
	}
	hex := []rune(fmt.Sprintf("%x", sha256.Sum256(b))[:10])
	repl := map[rune]rune{'0': 'g', '1': 'h', '3': 'k', 'a': 'm', 'e': 't'}
	for i, r := range hex {
		if to, ok := repl[r]; ok {
			hex[i] = to
		}
	}
	return string(hex), nil
}

func newCreateSecretDockerRegistry(streams cli.Streams, g *cli.Globals) *cobra.Command {
	var (
		gen                           = write.Generator{Failed: "failed to create secret "}
		user, password, email, server string
		appendHash                    bool
		files                         []string
	)
	cmd := &cobra.Command{
		Use:                   "docker-registry NAME --docker-username=user --docker-password=password --docker-email=email [--docker-server=string] [--from-file=[key=]source] [--dry-run=server|client|none]",
		DisableFlagsInUseLine: true,
		Short:                 "Create a secret for use with a Docker registry",
		Long: `Create a new secret for use with Docker registries.

Dockercfg secrets are used to authenticate against Docker registries. Pods
reference them in imagePullSecrets; the kubelet uses the credentials when it
pulls the pod's images.`,
		Example: `  # If you do not already have a .dockercfg file, create a dockercfg secret directly
  kubectl-lite create secret docker-registry my-secret --docker-server=DOCKER_REGISTRY_SERVER --docker-username=DOCKER_USER --docker-password=DOCKER_PASSWORD --docker-email=DOCKER_EMAIL

  # Create a new secret named my-secret from ~/.docker/config.json
  kubectl-lite create secret docker-registry my-secret --from-file=path/to/.docker/config.json`,
		Args: oneName,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := gen.DryRun.Validate(); err != nil {
				return err
			}
			var src sources
			for _, f := range files {
				if !strings.Contains(f, "=") {
					f = corev1.DockerConfigJsonKey + "=" + f
				}
				src.files = append(src.files, f)
			}
			if len(src.files) == 0 && (user == "" || password == "" || server == "") {
				return fmt.Errorf("either --from-file or the combination of --docker-username, --docker-password and --docker-server is required")
			}
			s := &corev1.Secret{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
				ObjectMeta: metav1.ObjectMeta{Name: args[0]}, Type: corev1.SecretTypeDockerConfigJson, Data: map[string][]byte{}}
			if len(src.files) > 0 {
				kv, err := src.read()
				if err != nil {
					return err
				}
				for k, v := range kv {
					s.Data[k] = v
				}
			} else {
				b, err := json.Marshal(dockerConfigJSON{Auths: map[string]dockerConfigEntry{server: {
					Username: user, Password: password, Email: email,
					Auth: base64.StdEncoding.EncodeToString([]byte(user + ":" + password)),
				}}})
				if err != nil {
					return err
				}
				s.Data[corev1.DockerConfigJsonKey] = b
			}
			return createSecret(cmd, streams, g, &gen, s, appendHash)
		},
	}
	gen.Bind(cmd)
	cmd.Flags().StringVar(&user, "docker-username", "", "Username for Docker registry authentication")
	cmd.Flags().StringVar(&password, "docker-password", "", "Password for Docker registry authentication")
	cmd.Flags().StringVar(&email, "docker-email", "", "Email for Docker registry")
	cmd.Flags().StringVar(&server, "docker-server", "https://index.docker.io/v1/", "Server location for Docker registry")
	cmd.Flags().BoolVar(&appendHash, "append-hash", false, "Append a hash of the secret to its name.")
	cmd.Flags().StringSliceVar(&files, "from-file", nil, "Key files can be specified using their file path, in which case a default name of "+corev1.DockerConfigJsonKey+" will be given to them, or optionally with a name and file path, in which case the given name will be used. Specifying a directory will iterate each named file in the directory that is a valid secret key. For this command, the key should always be "+corev1.DockerConfigJsonKey+".")
	return cmd
}
