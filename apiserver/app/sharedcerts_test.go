package app

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/minik8s/minik8s/internal/pki"
)

// TestSyncSharedCerts: the first member publishes its CAs and keys, a new
// member copies them, and a member made for another cluster is refused
// with its files untouched.
func TestSyncSharedCerts(t *testing.T) {
	shared := t.TempDir()
	member := func(certDir string) *APIServer {
		o := DefaultOptions()
		o.CertDir, o.SharedCertDir = certDir, shared
		return &APIServer{opts: o, log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	}
	first := t.TempDir()
	if err := member(first).syncSharedCerts(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, f := range sharedCertFiles {
		a, err1 := os.ReadFile(filepath.Join(first, f))
		b, err2 := os.ReadFile(filepath.Join(shared, f))
		if err1 != nil || err2 != nil || !bytes.Equal(a, b) {
			t.Fatalf("%s not published: %v %v", f, err1, err2)
		}
	}
	second := t.TempDir()
	if err := member(second).syncSharedCerts(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, f := range sharedCertFiles {
		a, _ := os.ReadFile(filepath.Join(first, f))
		b, err := os.ReadFile(filepath.Join(second, f))
		if err != nil || !bytes.Equal(a, b) {
			t.Fatalf("%s not copied: %v", f, err)
		}
	}
	if fi, err := os.Stat(filepath.Join(second, pki.CAKeyFile)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("copied ca.key: %v %v", fi.Mode(), err)
	}
	// Again: nothing to do.
	if err := member(second).syncSharedCerts(context.Background()); err != nil {
		t.Fatal(err)
	}
	other := t.TempDir()
	ca, err := pki.NewCA(pki.CACommonName, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := ca.WriteFiles(other); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(filepath.Join(other, pki.CACertFile))
	err = member(other).syncSharedCerts(context.Background())
	if err == nil || !strings.Contains(err.Error(), "belong to another cluster") {
		t.Fatalf("a member of another cluster: %v", err)
	}
	after, _ := os.ReadFile(filepath.Join(other, pki.CACertFile))
	if !bytes.Equal(before, after) {
		t.Error("the refused member's ca.crt was changed")
	}
	if _, err := os.Stat(filepath.Join(other, pki.EtcdCACertFile)); err == nil {
		t.Error("the refused member got files copied in")
	}
}
