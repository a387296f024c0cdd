package portforward

import (
	"fmt"
	"reflect"
	"testing"
)

func TestParsePorts(t *testing.T) {
	t.Parallel()
	svc := func(remote string) (uint16, error) {
		switch remote {
		case "80", "http":
			return 8080, nil
		}
		return 0, fmt.Errorf("no port %s", remote)
	}
	for _, tc := range []struct {
		specs   []string
		resolve func(string) (uint16, error)
		want    []Port
		err     string
	}{
		{specs: []string{"5000", "8888:6000", ":7000"}, want: []Port{{5000, 5000}, {8888, 6000}, {0, 7000}}},
		{specs: []string{"8443:http"}, resolve: svc, want: []Port{{8443, 8080}}},
		{specs: []string{"http"}, resolve: svc, want: []Port{{8080, 8080}}},
		// A number alone listens on that number, whatever it translates to.
		{specs: []string{"80"}, resolve: svc, want: []Port{{80, 8080}}},
		{specs: []string{"8080:"}, err: "remote port cannot be empty"},
		{specs: []string{"x:80"}, err: `error parsing local port 'x': strconv.ParseUint: parsing "x": invalid syntax`},
		{specs: []string{"http"}, err: `error parsing remote port 'http': strconv.ParseUint: parsing "http": invalid syntax`},
		{specs: []string{"1:nope"}, resolve: svc, err: "no port nope"},
	} {
		got, err := ParsePorts(tc.specs, tc.resolve)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%v: error %v, want %q", tc.specs, err, tc.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%v: %v, %v; want %v", tc.specs, got, err, tc.want)
		}
	}
}
