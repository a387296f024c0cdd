package app

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/minik8s/minik8s/apiserver/etcd"
)

// runMemberCmd runs "etcd member ARGS..." and returns its output.
func runMemberCmd(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := newEtcdCommand()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(append([]string{"member"}, args...))
	err := cmd.ExecuteContext(context.Background())
	return out.String(), err
}

// TestEtcdMemberCommands runs "apiserver etcd member list|move-leader|remove"
// against an embedded etcd secured as the apiserver secures it, reached
// with the client certificate of its --cert-dir.
func TestEtcdMemberCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("needs embedded etcd")
	}
	dir := t.TempDir()
	opts := DefaultOptions()
	opts.CertDir, opts.DataDir = dir+"/pki", dir+"/etcd"
	a := New(opts, nil, nil)
	cfg, err := a.etcdConfig()
	if err != nil {
		t.Fatal(err)
	}
	b, err := etcd.Start(context.Background(), cfg)
	if err != nil {
		t.Fatalf("start etcd: %v", err)
	}
	defer b.Close()
	flags := []string{"--cert-dir", opts.CertDir, "--endpoints", strings.Join(b.Endpoints(), ","), "--timeout", "20s"}

	out, err := runMemberCmd(t, append([]string{"list"}, flags...)...)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if err != nil || len(lines) != 2 || !strings.HasPrefix(lines[0], "ID") || !strings.Contains(lines[1], " started ") || !strings.Contains(lines[1], " true ") {
		t.Fatalf("member list: %v\n%s", err, out)
	}
	name := strings.Fields(lines[1])[1]
	if out, err := runMemberCmd(t, append([]string{"move-leader", name}, flags...)...); err != nil || !strings.Contains(out, "is the leader already") {
		t.Fatalf("move-leader to the only member: %v\n%s", err, out)
	}
	if out, err := runMemberCmd(t, append([]string{"remove", "nosuch"}, flags...)...); err == nil || !strings.Contains(err.Error(), `no single member named or with ID "nosuch"`) {
		t.Fatalf("remove of an unknown member: %v\n%s", err, out)
	}
	if _, err := runMemberCmd(t, append([]string{"remove"}, flags...)...); err == nil || !strings.Contains(err.Error(), "takes one member name or ID") {
		t.Fatalf("remove without a member: %v", err)
	}
	if _, err := runMemberCmd(t, append([]string{"list", "extra"}, flags...)...); err == nil {
		t.Fatal("list with an argument succeeded")
	}
}
