package logging

import "testing"

func TestParseLevel(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		err      bool
	}{
		{"0", "info", false}, {"2", "info", false}, {"3", "info", false}, {"4", "debug", false}, {"10", "debug", false},
		{"debug", "debug", false}, {"WARN", "warn", false}, {"error", "error", false},
		{"-1", "", true}, {"loud", "", true}, {"", "", true},
	} {
		got, err := ParseLevel(tc.in)
		if got != tc.want || (err != nil) != tc.err {
			t.Errorf("ParseLevel(%q) = %q, %v; want %q, error %v", tc.in, got, err, tc.want, tc.err)
		}
	}
}
