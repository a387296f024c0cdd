package label

import (
	"reflect"
	"testing"
)

func TestParsePairs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      []string
		set     map[string]string
		remove  []string
		wantErr bool
	}{
		{in: []string{"a=1", "b=", "c-"}, set: map[string]string{"a": "1", "b": ""}, remove: []string{"c"}},
		{in: []string{"example.com/x=y=z"}, set: map[string]string{"example.com/x": "y=z"}},
		{in: []string{"=1"}, wantErr: true},
		{in: []string{"-"}, wantErr: true},
		{in: []string{"a=1", "a-"}, wantErr: true},
	}
	for _, tt := range tests {
		set, remove, err := parsePairs(tt.in)
		if (err != nil) != tt.wantErr {
			t.Errorf("parsePairs(%v) error %v", tt.in, err)
			continue
		}
		if err == nil && (!reflect.DeepEqual(set, tt.set) || !reflect.DeepEqual(remove, tt.remove)) {
			t.Errorf("parsePairs(%v) = %v %v, want %v %v", tt.in, set, remove, tt.set, tt.remove)
		}
	}
}
