package nodeipam

import (
	"errors"
	"testing"
)

func TestCIDRSet(t *testing.T) {
	tests := []struct {
		name     string
		cluster  string
		mask     int
		occupy   []string
		release  []string
		allocate int
		want     []string
		wantErr  error
	}{
		{name: "first blocks", cluster: "10.244.0.0/16", mask: 24, allocate: 3,
			want: []string{"10.244.0.0/24", "10.244.1.0/24", "10.244.2.0/24"}},
		{name: "skips occupied", cluster: "10.244.0.0/16", mask: 24, occupy: []string{"10.244.0.0/24", "10.244.2.0/24"}, allocate: 2,
			want: []string{"10.244.1.0/24", "10.244.3.0/24"}},
		{name: "full", cluster: "10.0.0.0/30", mask: 31, allocate: 3,
			want: []string{"10.0.0.0/31", "10.0.0.2/31"}, wantErr: ErrCIDRRangeFull},
		{name: "released block reused once the others are taken", cluster: "10.0.0.0/30", mask: 31,
			occupy: []string{"10.0.0.0/31", "10.0.0.2/31"}, release: []string{"10.0.0.0/31"}, allocate: 1,
			want: []string{"10.0.0.0/31"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := NewCIDRSet(tt.cluster, tt.mask)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range tt.occupy {
				if err := s.Occupy(c); err != nil {
					t.Fatal(err)
				}
			}
			for _, c := range tt.release {
				if err := s.Release(c); err != nil {
					t.Fatal(err)
				}
			}
			var got []string
			var gotErr error
			for range tt.allocate {
				c, err := s.AllocateNext()
				if err != nil {
					gotErr = err
					break
				}
				got = append(got, c)
			}
			if !errors.Is(gotErr, tt.wantErr) {
				t.Fatalf("error = %v, want %v", gotErr, tt.wantErr)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("allocated %v, want %v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Fatalf("allocated %v, want %v", got, tt.want)
				}
			}
		})
	}
}

func TestCIDRSetRejects(t *testing.T) {
	for _, tt := range []struct {
		cluster string
		mask    int
	}{
		{"10.244.0.0/16", 8}, {"fd00::/64", 80}, {"bogus", 24}, {"10.0.0.0/8", 32},
	} {
		if _, err := NewCIDRSet(tt.cluster, tt.mask); err == nil {
			t.Errorf("NewCIDRSet(%q, %d) succeeded", tt.cluster, tt.mask)
		}
	}
	s, _ := NewCIDRSet("10.244.0.0/16", 24)
	for _, c := range []string{"10.245.0.0/24", "10.244.0.0/25", "10.244.0.1/24"} {
		if err := s.Occupy(c); err == nil {
			t.Errorf("Occupy(%q) succeeded", c)
		}
	}
}
