package cli

import (
	"bytes"
	"errors"
	"testing"

	"github.com/spf13/cobra"
)

func TestDryRun(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args      []string
		want      DryRun
		wantErr   string
		suffix    string
		dryRunAll bool
	}{
		{nil, DryRunNone, "", "", false},
		{[]string{"--dry-run"}, DryRunClient, "", " (dry run)", false},
		{[]string{"--dry-run=client"}, DryRunClient, "", " (dry run)", false},
		{[]string{"--dry-run=server"}, DryRunServer, "", " (server dry run)", true},
		{[]string{"--dry-run=none"}, DryRunNone, "", "", false},
		{[]string{"--dry-run=true"}, "true", `Invalid dry-run value (true). Must be "none", "server", or "client".`, "", false},
	}
	for _, tt := range tests {
		t.Run(string(tt.want)+"/"+tt.wantErr, func(t *testing.T) {
			t.Parallel()
			var d DryRun
			cmd := &cobra.Command{Use: "x", RunE: func(*cobra.Command, []string) error { return nil }}
			d.Bind(cmd)
			cmd.SetArgs(tt.args)
			cmd.SetOut(&bytes.Buffer{})
			if err := cmd.Execute(); err != nil {
				t.Fatal(err)
			}
			if d != tt.want {
				t.Fatalf("%v: DryRun = %q, want %q", tt.args, d, tt.want)
			}
			err := d.Validate()
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("%v: Validate = %v, want %q", tt.args, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("%v: Validate = %v", tt.args, err)
			}
			if got := d.Suffix(); got != tt.suffix {
				t.Errorf("%v: Suffix = %q, want %q", tt.args, got, tt.suffix)
			}
			if got := d.Query().Get("dryRun") == "All"; got != tt.dryRunAll {
				t.Errorf("%v: Query = %v, want dryRun=All %v", tt.args, d.Query(), tt.dryRunAll)
			}
		})
	}
}

func TestFailures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		errs        []error
		wantPrinted string
		wantLast    string
	}{
		{"none", nil, "", ""},
		{"one: kept, not printed", []error{errors.New("a")}, "", "a"},
		{"three: all but the last printed, in order", []error{errors.New("a"), errors.New("b"), errors.New("c")},
			"error: a\nerror: b\n", "c"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var out bytes.Buffer
			f := Failures{Out: &out}
			for _, err := range tt.errs {
				f.Add(err)
			}
			if out.String() != tt.wantPrinted {
				t.Errorf("printed %q, want %q", out.String(), tt.wantPrinted)
			}
			last := ""
			if f.Last() != nil {
				last = f.Last().Error()
			}
			if last != tt.wantLast {
				t.Errorf("Last = %q, want %q", last, tt.wantLast)
			}
		})
	}
}
