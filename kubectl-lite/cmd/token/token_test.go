package token

import (
	"bytes"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/pki"
	"github.com/minik8s/minik8s/kubectl-lite/cli"
)

func TestPrintTokens(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s, err := pki.BootstrapTokenSecret("abcdef", "0123456789abcdef", 23*time.Hour, []string{pki.BootstrapDefaultNodeGroup}, now)
	if err != nil {
		t.Fatal(err)
	}
	s.Data[pki.BootstrapTokenDescriptionKey] = []byte("join")
	forever, err := pki.BootstrapTokenSecret("zzzzzz", "0123456789abcdef", 0, nil, now)
	if err != nil {
		t.Fatal(err)
	}
	other := api.Secret{ObjectMeta: api.ObjectMeta{Name: "x"}, Type: "Opaque"}
	var out bytes.Buffer
	if err := printTokens(cli.Streams{Out: &out}, []api.Secret{*forever, other, *s}, now); err != nil {
		t.Fatal(err)
	}
	want := "TOKEN                     TTL         EXPIRES                USAGES                   DESCRIPTION   EXTRA GROUPS\n" +
		"abcdef.0123456789abcdef   23h         2026-01-01T23:00:00Z   authentication,signing   join          system:bootstrappers:kubeadm:default-node-token\n" +
		"zzzzzz.0123456789abcdef   <forever>   <never>                authentication,signing   <none>        \n"
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
}
