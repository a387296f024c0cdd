package server

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/minik8s/minik8s/internal/pki"
	"github.com/spf13/pflag"
)

func TestOptions(t *testing.T) {
	t.Parallel()
	ca, err := pki.NewCA("test-ca", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	caFile := filepath.Join(dir, "ca.crt")
	if err := os.WriteFile(caFile, ca.CertPEM(), 0o644); err != nil {
		t.Fatal(err)
	}
	o := DefaultOptions()
	fs := pflag.NewFlagSet("kubelet", pflag.ContinueOnError)
	o.AddFlags(fs)
	if err := fs.Parse([]string{"--port=10251"}); err != nil {
		t.Fatal(err)
	}
	if o.Addr() != "0.0.0.0:10251" {
		t.Errorf("Addr = %s", o.Addr())
	}
	tests := []struct {
		name    string
		file    string
		def     []byte
		wantErr bool
	}{
		{"kubeconfig CA", "", ca.CertPEM(), false},
		{"--client-ca-file wins", caFile, []byte("garbage"), false},
		{"nothing", "", nil, true},
		{"not PEM", "", []byte("garbage"), true},
		{"missing file", filepath.Join(dir, "nope"), ca.CertPEM(), true},
	}
	for _, tt := range tests {
		o := o
		o.ClientCAFile = tt.file
		pool, err := o.ClientCAs(tt.def)
		if (err != nil) != tt.wantErr || (err == nil && pool == nil) {
			t.Errorf("%s: ClientCAs = %v, %v", tt.name, pool, err)
		}
	}
	if _, ok, err := o.Certificate(); ok || err != nil {
		t.Errorf("no files: ok %v err %v", ok, err)
	}
	o.TLSCertFile = caFile
	if _, _, err := o.Certificate(); err == nil {
		t.Error("a certificate without its key accepted")
	}
}
