package proxy

import (
	"bytes"
	"fmt"
	"os/exec"
	"strings"
)

// Runner applies rules. The default runs the iptables tools, optionally
// inside a named network namespace (for tests).
type Runner interface {
	// Restore loads data (iptables-restore format, one table) without
	// flushing chains it does not mention.
	Restore(data []byte) error
	// Save returns iptables-save output for table.
	Save(table string) ([]byte, error)
	// EnsureRule adds the rule at the top of chain unless it is there.
	EnsureRule(table, chain string, args ...string) error
	// DeleteRule removes the rule if present.
	DeleteRule(table, chain string, args ...string) error
}

// IPTables runs iptables, iptables-restore and iptables-save.
type IPTables struct {
	// Netns, when set, runs every command inside `ip netns exec Netns`.
	Netns string
}

func (r IPTables) cmd(stdin []byte, name string, args ...string) ([]byte, error) {
	argv := append([]string{name}, args...)
	if r.Netns != "" {
		argv = append([]string{"ip", "netns", "exec", r.Netns}, argv...)
	}
	c := exec.Command(argv[0], argv[1:]...)
	if stdin != nil {
		c.Stdin = bytes.NewReader(stdin)
	}
	var stderr bytes.Buffer
	c.Stderr = &stderr
	out, err := c.Output()
	if err != nil {
		return out, fmt.Errorf("%s: %w: %s", strings.Join(argv, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// Restore implements Runner.
func (r IPTables) Restore(data []byte) error {
	_, err := r.cmd(data, "iptables-restore", "--noflush", "--wait")
	return err
}

// Save implements Runner.
func (r IPTables) Save(table string) ([]byte, error) {
	return r.cmd(nil, "iptables-save", "-t", table)
}

// EnsureRule implements Runner.
func (r IPTables) EnsureRule(table, chain string, args ...string) error {
	check := append([]string{"--wait", "-t", table, "-C", chain}, args...)
	if _, err := r.cmd(nil, "iptables", check...); err == nil {
		return nil
	}
	ins := append([]string{"--wait", "-t", table, "-I", chain, "1"}, args...)
	_, err := r.cmd(nil, "iptables", ins...)
	return err
}

// DeleteRule implements Runner.
func (r IPTables) DeleteRule(table, chain string, args ...string) error {
	del := append([]string{"--wait", "-t", table, "-D", chain}, args...)
	for {
		if _, err := r.cmd(nil, "iptables", del...); err != nil {
			return nil // gone (or never there)
		}
	}
}
