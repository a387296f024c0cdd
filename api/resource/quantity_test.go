package resource

import (
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"testing"
)

func dec(m int64, e int32, f Format) Quantity { return Quantity{m: m, e: e, Format: f} }

func bigQ(s string, e int32, f Format) Quantity {
	b, _ := new(big.Int).SetString(s, 10)
	var q Quantity
	q.setBig(b, e)
	q.Format = f
	return q
}

// Cases from Kubernetes' own TestQuantityParse.
func TestParseQuantityValues(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want Quantity
	}{
		{"0", dec(0, 0, DecimalSI)},
		{"0n", dec(0, 0, DecimalSI)},
		{"0u", dec(0, 0, DecimalSI)},
		{"0m", dec(0, 0, DecimalSI)},
		{"0Ki", dec(0, 0, BinarySI)},
		{"0k", dec(0, 0, DecimalSI)},
		{"0Mi", dec(0, 0, BinarySI)},
		{"0M", dec(0, 0, DecimalSI)},
		{"0Gi", dec(0, 0, BinarySI)},
		{"0G", dec(0, 0, DecimalSI)},
		{"0Ti", dec(0, 0, BinarySI)},
		{"0T", dec(0, 0, DecimalSI)},
		{"1", dec(1, 0, DecimalSI)},
		{"1Ki", dec(1024, 0, BinarySI)},
		{"8Ki", dec(8*1024, 0, BinarySI)},
		{"7Mi", dec(7*1024*1024, 0, BinarySI)},
		{"6Gi", dec(6*1024*1024*1024, 0, BinarySI)},
		{"5Ti", dec(5*1024*1024*1024*1024, 0, BinarySI)},
		{"4Pi", dec(4*1024*1024*1024*1024*1024, 0, BinarySI)},
		{"3Ei", dec(3*1024*1024*1024*1024*1024*1024, 0, BinarySI)},
		{"10Ti", dec(10*1024*1024*1024*1024, 0, BinarySI)},
		{"100Ti", dec(100*1024*1024*1024*1024, 0, BinarySI)},
		{"5n", dec(5, -9, DecimalSI)},
		{"4u", dec(4, -6, DecimalSI)},
		{"3m", dec(3, -3, DecimalSI)},
		{"9", dec(9, 0, DecimalSI)},
		{"8k", dec(8, 3, DecimalSI)},
		{"50k", dec(5, 4, DecimalSI)},
		{"7M", dec(7, 6, DecimalSI)},
		{"6G", dec(6, 9, DecimalSI)},
		{"5T", dec(5, 12, DecimalSI)},
		{"40T", dec(4, 13, DecimalSI)},
		{"300T", dec(3, 14, DecimalSI)},
		{"2P", dec(2, 15, DecimalSI)},
		{"1E", dec(1, 18, DecimalSI)},
		{"1E-3", dec(1, -3, DecimalExponent)},
		{"1e3", dec(1, 3, DecimalExponent)},
		{"1E6", dec(1, 6, DecimalExponent)},
		{"1e9", dec(1, 9, DecimalExponent)},
		{"1E12", dec(1, 12, DecimalExponent)},
		{"1e15", dec(1, 15, DecimalExponent)},
		{"1E18", dec(1, 18, DecimalExponent)},
		{"1e14", dec(1, 14, DecimalExponent)},
		{"1e13", dec(1, 13, DecimalExponent)},
		{"100.035k", dec(100035, 0, DecimalSI)},
		{"0.001", dec(1, -3, DecimalSI)},
		{"0.0005k", dec(5, -1, DecimalSI)},
		{"0.005", dec(5, -3, DecimalSI)},
		{"0.05", dec(5, -2, DecimalSI)},
		{"0.5", dec(5, -1, DecimalSI)},
		{"0.00050k", dec(5, -1, DecimalSI)},
		{"0.00500", dec(5, -3, DecimalSI)},
		{"0.05000", dec(5, -2, DecimalSI)},
		{"0.50000", dec(5, -1, DecimalSI)},
		{"0.5e0", dec(5, -1, DecimalExponent)},
		{"0.5e-1", dec(5, -2, DecimalExponent)},
		{"0.5e-2", dec(5, -3, DecimalExponent)},
		{"10.035M", dec(10035, 3, DecimalSI)},
		{"1.2e3", dec(12, 2, DecimalExponent)},
		{"1.3E+6", dec(13, 5, DecimalExponent)},
		{"1.40e9", dec(14, 8, DecimalExponent)},
		{"1.53E12", dec(153, 10, DecimalExponent)},
		{"1.6e15", dec(16, 14, DecimalExponent)},
		{"1.7E18", dec(17, 17, DecimalExponent)},
		{"9.01", dec(901, -2, DecimalSI)},
		{"8.1k", dec(81, 2, DecimalSI)},
		{"7.123456M", dec(7123456, 0, DecimalSI)},
		{"6.987654321G", dec(6987654321, 0, DecimalSI)},
		{"5.444T", dec(5444, 9, DecimalSI)},
		{"40.1T", dec(401, 11, DecimalSI)},
		{"300.2T", dec(3002, 11, DecimalSI)},
		{"2.5P", dec(25, 14, DecimalSI)},
		{"1.01E", dec(101, 16, DecimalSI)},
		// Rounding up to nano units and capping binary values.
		{"3.001n", dec(4, -9, DecimalSI)},
		{"1.1E-9", dec(2, -9, DecimalExponent)},
		{"0.0000000001", dec(1, -9, DecimalSI)},
		{"0.0000000005", dec(1, -9, DecimalSI)},
		{"0.00000000050", dec(1, -9, DecimalSI)},
		{"0.5e-9", dec(1, -9, DecimalExponent)},
		{"0.9n", dec(1, -9, DecimalSI)},
		{"0.00000012345", dec(124, -9, DecimalSI)},
		{"0.00000012354", dec(124, -9, DecimalSI)},
		{"9Ei", dec(math.MaxInt64, 0, BinarySI)},
		{"9223372036854775807Ki", dec(math.MaxInt64, 0, BinarySI)},
		{"12E", dec(12, 18, DecimalSI)},
		{"100.035Ki", dec(10243584, -2, BinarySI)},
		{"0.5Mi", dec(.5*1024*1024, 0, BinarySI)},
		{"0.05Gi", dec(536870912, -1, BinarySI)},
		{"0.025Ti", dec(274877906944, -1, BinarySI)},
		{"0.000000000001Ki", dec(2, -9, DecimalSI)},
		{".001", dec(1, -3, DecimalSI)},
		{".0001k", dec(100, -3, DecimalSI)},
		{"1.", dec(1, 0, DecimalSI)},
		{"1.G", dec(1, 9, DecimalSI)},
		// Beyond int64.
		{"123456789012345678901234567890", bigQ("123456789012345678901234567890", 0, DecimalSI)},
		{"1e100", bigQ("1", 100, DecimalExponent)},
	}
	for _, tc := range tests {
		for _, sign := range []string{"", "+", "-"} {
			in := sign + tc.in
			got, err := ParseQuantity(in)
			if err != nil {
				t.Errorf("ParseQuantity(%q): %v", in, err)
				continue
			}
			want := tc.want
			if sign == "-" {
				want.Neg()
			}
			if got.Cmp(want) != 0 {
				t.Errorf("ParseQuantity(%q) = %s, want %s", in, got, want.String())
			}
			if got.Format != want.Format {
				t.Errorf("ParseQuantity(%q).Format = %s, want %s", in, got.Format, want.Format)
			}
		}
	}
}

func TestParseQuantityInvalid(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want error
	}{
		{"", ErrFormatWrong},
		{"1.1.M", ErrFormatWrong},
		{"1+1.0M", ErrFormatWrong},
		{"0.1mi", ErrSuffix},
		{"0.1am", ErrFormatWrong},
		{"aoeu", ErrFormatWrong},
		{".5i", ErrSuffix},
		{"1i", ErrSuffix},
		{"-3.01i", ErrSuffix},
		{"-3.01e-", ErrSuffix},
		{" 1", ErrFormatWrong},
		{"1 ", ErrFormatWrong},
		{"1e", ErrSuffix},
		{"1Ki5", ErrSuffix},
		{"1e99999999999", ErrSuffix},
	}
	for _, tc := range tests {
		_, err := ParseQuantity(tc.in)
		if !errors.Is(err, tc.want) {
			t.Errorf("ParseQuantity(%q) error = %v, want %v", tc.in, err, tc.want)
		}
	}
	const msg = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
	if ErrFormatWrong.Error() != msg {
		t.Errorf("ErrFormatWrong = %q, want %q", ErrFormatWrong, msg)
	}
}

// Cases from Kubernetes' TestQuantityString: the canonical text of a value,
// that parsing the canonical text keeps it, and that an alternate spelling
// prints canonically.
func TestQuantityString(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in        Quantity
		want      string
		alternate string
	}{
		{dec(1024*1024*1024, 0, BinarySI), "1Gi", "1024Mi"},
		{dec(300*1024*1024, 0, BinarySI), "300Mi", "307200Ki"},
		{dec(6*1024, 0, BinarySI), "6Ki", ""},
		{dec(1001*1024*1024*1024, 0, BinarySI), "1001Gi", "1025024Mi"},
		{dec(1024*1024*1024*1024, 0, BinarySI), "1Ti", "1024Gi"},
		{dec(5, 0, BinarySI), "5", "5000m"},
		{dec(500, -3, BinarySI), "500m", "0.5"},
		{dec(1, 9, DecimalSI), "1G", "1000M"},
		{dec(1000, 6, DecimalSI), "1G", "0.001T"},
		{dec(1000000, 3, DecimalSI), "1G", ""},
		{dec(1000000000, 0, DecimalSI), "1G", ""},
		{dec(1, -3, DecimalSI), "1m", "1000u"},
		{dec(80, -3, DecimalSI), "80m", ""},
		{dec(1080, -3, DecimalSI), "1080m", "1.08"},
		{dec(108, -2, DecimalSI), "1080m", "1080000000n"},
		{dec(10800, -4, DecimalSI), "1080m", ""},
		{dec(300, 6, DecimalSI), "300M", ""},
		{dec(1, 12, DecimalSI), "1T", ""},
		{dec(1234567, 6, DecimalSI), "1234567M", ""},
		{dec(1234567, -3, BinarySI), "1234567m", ""},
		{dec(3, 3, DecimalSI), "3k", ""},
		{dec(1025, 0, BinarySI), "1025", ""},
		{dec(0, 0, DecimalSI), "0", ""},
		{dec(0, 0, BinarySI), "0", ""},
		{dec(1, 9, DecimalExponent), "1e9", ".001e12"},
		{dec(1, -3, DecimalExponent), "1e-3", "0.001e0"},
		{dec(1, -9, DecimalExponent), "1e-9", "1000e-12"},
		{dec(80, -3, DecimalExponent), "80e-3", ""},
		{dec(300, 6, DecimalExponent), "300e6", ""},
		{dec(1, 12, DecimalExponent), "1e12", ""},
		{dec(1, 3, DecimalExponent), "1e3", ""},
		{dec(3, 3, DecimalExponent), "3e3", ""},
		{dec(0, 0, DecimalExponent), "0", "00"},
		{dec(1, -9, DecimalSI), "1n", ""},
		{dec(80, -9, DecimalSI), "80n", ""},
		{dec(1080, -9, DecimalSI), "1080n", ""},
		{dec(108, -8, DecimalSI), "1080n", ""},
		{dec(10800, -10, DecimalSI), "1080n", ""},
		{dec(1, -6, DecimalSI), "1u", ""},
		{dec(80, -6, DecimalSI), "80u", ""},
		{dec(1080, -6, DecimalSI), "1080u", ""},
	}
	for _, tc := range tests {
		if got := tc.in.String(); got != tc.want {
			t.Errorf("String(%#v) = %q, want %q", tc.in, got, tc.want)
		}
		q, err := ParseQuantity(tc.want)
		if err != nil {
			t.Errorf("ParseQuantity(%q): %v", tc.want, err)
		} else if q.s != tc.want {
			t.Errorf("ParseQuantity(%q) did not keep its canonical text (s=%q)", tc.want, q.s)
		}
		if tc.alternate != "" {
			q, err := ParseQuantity(tc.alternate)
			if err != nil {
				t.Errorf("ParseQuantity(%q): %v", tc.alternate, err)
			} else if q.s != "" {
				t.Errorf("ParseQuantity(%q) kept non-canonical text", tc.alternate)
			} else if got := q.String(); got != tc.want {
				t.Errorf("ParseQuantity(%q).String() = %q, want %q", tc.alternate, got, tc.want)
			}
		}
		if !tc.in.IsZero() {
			n := tc.in
			n.Neg()
			if got := n.String(); got != "-"+tc.want {
				t.Errorf("String(-%s) = %q, want %q", tc.want, got, "-"+tc.want)
			}
		}
	}
}

func TestParseEmit(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"1Ki", "1Ki"},
		{"1Mi", "1Mi"},
		{"1Gi", "1Gi"},
		{"1024Mi", "1Gi"},
		{"1000M", "1G"},
		{".001Ki", "1024m"},
		{".000001Ki", "1024u"},
		{".000000001Ki", "1024n"},
		{".000000000001Ki", "2n"},
		{"1.5Gi", "1536Mi"},
		{"0.1", "100m"},
		{"1000m", "1"},
		{"1.5", "1500m"},
		{"0.5Ki", "512"},
		{"1.1Ki", "1126400m"},
		{"2048Ki", "2Mi"},
		{"1e3", "1e3"},
		{"1000e0", "1e3"},
		{"10e2", "1e3"},
		{"1e1", "10"},
		{"1e-1", "100e-3"},
		{"1.5e3", "1500"},
		{"9Ei", "9223372036854775807"},
		{"123456789012345678901234567890", "123456789012345678901234567890"},
		{"1e30", "1e30"},
		{"1000E", "1000E"},
		{"1E", "1E"},
		{"+1", "+1"}, // Kubernetes keeps text it considers canonical
		{"01", "01"},
		{"00", "0"},
		{"-0", "0"},
	}
	for _, tc := range tests {
		q, err := ParseQuantity(tc.in)
		if err != nil {
			t.Errorf("ParseQuantity(%q): %v", tc.in, err)
			continue
		}
		if got := q.String(); got != tc.want {
			t.Errorf("ParseQuantity(%q).String() = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestCmp(t *testing.T) {
	t.Parallel()
	tests := []struct {
		a, b string
		want int
	}{
		{"100m", "0.1", 0},
		{"1", "1000m", 0},
		{"1Ki", "1024", 0},
		{"1k", "1000", 0},
		{"1e3", "1k", 0},
		{"1Gi", "1G", 1},
		{"999m", "1", -1},
		{"-1", "1", -1},
		{"0", "-0", 0},
		{"1n", "0", 1},
		{"1e100", "1e99", 1},
		{"1e100", "10e99", 0},
		{"1e-9", "1n", 0},
		{"123456789012345678901234567890", "123456789012345678901234567891", -1},
		{"-123456789012345678901234567890", "1", -1},
		{"1e900000000", "1n", 1},
		{"-1e900000000", "-1n", -1},
		{"9223372036854775807", "9223372036854775807000m", 0},
	}
	for _, tc := range tests {
		a, b := MustParse(tc.a), MustParse(tc.b)
		if got := a.Cmp(b); got != tc.want {
			t.Errorf("Cmp(%s, %s) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
		if got := b.Cmp(a); got != -tc.want {
			t.Errorf("Cmp(%s, %s) = %d, want %d", tc.b, tc.a, got, -tc.want)
		}
		if a.Equal(b) != (tc.want == 0) {
			t.Errorf("Equal(%s, %s) = %t", tc.a, tc.b, a.Equal(b))
		}
	}
}

func TestAddSub(t *testing.T) {
	t.Parallel()
	tests := []struct {
		a, b     Quantity
		sum      string
		diff     string
		sumFmt   Format
		diffForm Format
	}{
		{dec(10, 0, DecimalSI), dec(1, 1, DecimalSI), "20", "0", DecimalSI, DecimalSI},
		{dec(10, 0, DecimalSI), dec(1, 0, BinarySI), "11", "9", DecimalSI, DecimalSI},
		{dec(10, 0, BinarySI), dec(1, 0, DecimalSI), "11", "9", BinarySI, BinarySI},
		{Quantity{Format: DecimalSI}, dec(50, 0, BinarySI), "50", "-50", BinarySI, BinarySI},
		{dec(50, 0, DecimalSI), Quantity{Format: BinarySI}, "50", "50", DecimalSI, DecimalSI},
		{MustParse("100m"), MustParse("1Gi"), "1073741824100m", "-1073741823900m", DecimalSI, DecimalSI},
		{MustParse("1Gi"), MustParse("512Mi"), "1536Mi", "512Mi", BinarySI, BinarySI},
		{dec(math.MaxInt64, 0, DecimalSI), dec(1, 0, DecimalSI), "9223372036854775808", "9223372036854775806", DecimalSI, DecimalSI},
		{dec(math.MaxInt64, 0, DecimalSI), dec(1, -9, DecimalSI), "9223372036854775807000000001n", "9223372036854775806999999999n", DecimalSI, DecimalSI},
	}
	for _, tc := range tests {
		s := tc.a
		s.Add(tc.b)
		if got := s.String(); got != tc.sum || s.Format != tc.sumFmt {
			t.Errorf("%s + %s = %s (%s), want %s (%s)", tc.a, tc.b, got, s.Format, tc.sum, tc.sumFmt)
		}
		d := tc.a
		d.Sub(tc.b)
		if got := d.String(); got != tc.diff || d.Format != tc.diffForm {
			t.Errorf("%s - %s = %s (%s), want %s (%s)", tc.a, tc.b, got, d.Format, tc.diff, tc.diffForm)
		}
		// Round trip back.
		s.Sub(tc.b)
		if s.Cmp(tc.a) != 0 {
			t.Errorf("%s + %s - %s = %s", tc.a, tc.b, tc.b, s)
		}
	}
}

func TestCopiesAreIndependent(t *testing.T) {
	t.Parallel()
	a := MustParse("123456789012345678901234567890")
	b := a
	b.Add(MustParse("1"))
	b.Neg()
	if a.String() != "123456789012345678901234567890" {
		t.Errorf("mutating a copy changed the original: %s", a)
	}
}

func TestMul(t *testing.T) {
	t.Parallel()
	tests := []struct {
		a    Quantity
		by   int64
		want string
		ok   bool
	}{
		{dec(10, 0, DecimalSI), 10, "100", true},
		{dec(10, 0, DecimalSI), -10, "-100", true},
		{dec(-50, 0, DecimalSI), -50, "2500", true},
		{dec(math.MaxInt64, 0, DecimalSI), 0, "0", true},
		{dec(math.MaxInt64, 0, DecimalSI), 2, "18446744073709551614", false},
		{dec(math.MinInt64, 0, DecimalSI), -1, "9223372036854775808", false},
		{MustParse("1Gi"), 3, "3Gi", true},
	}
	for _, tc := range tests {
		q := tc.a
		ok := q.Mul(tc.by)
		if q.String() != tc.want || ok != tc.ok {
			t.Errorf("%s * %d = %s, %t; want %s, %t", tc.a, tc.by, q, ok, tc.want, tc.ok)
		}
	}
}

func TestScaledValue(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in           string
		value, milli int64
	}{
		{"1", 1, 1000},
		{"100m", 1, 100},
		{"1500m", 2, 1500},
		{"1n", 1, 1},
		{"-1n", -1, -1},
		{"-1500m", -2, -1500},
		{"1Gi", 1 << 30, 1000 << 30},
		{"0.5", 1, 500},
		{"1.0005", 2, 1001},
		{"1e30", math.MaxInt64, math.MaxInt64},
		{"-1e30", math.MinInt64, math.MinInt64},
		{"9223372036854775807", math.MaxInt64, math.MaxInt64},
		{"1e-900000000", 1, 1},
	}
	for _, tc := range tests {
		q := MustParse(tc.in)
		if got := q.Value(); got != tc.value {
			t.Errorf("%s.Value() = %d, want %d", tc.in, got, tc.value)
		}
		if got := q.MilliValue(); got != tc.milli {
			t.Errorf("%s.MilliValue() = %d, want %d", tc.in, got, tc.milli)
		}
	}
	// Kubernetes' TestScaledValue.
	scales := []struct {
		from, to Scale
		want     int64
	}{
		{Nano, Nano, 1}, {Nano, Micro, 1}, {Nano, Milli, 1}, {Nano, 0, 1},
		{Micro, Nano, 1000}, {Micro, Micro, 1}, {Micro, Milli, 1}, {Micro, 0, 1},
		{Milli, Nano, 1000 * 1000}, {Milli, Micro, 1000}, {Milli, Milli, 1}, {Milli, 0, 1},
		{0, Nano, 1000 * 1000 * 1000}, {0, Micro, 1000 * 1000}, {0, Milli, 1000}, {0, 0, 1},
		{2, -2, 100 * 100},
	}
	for _, tc := range scales {
		q := NewScaledQuantity(1, tc.from)
		if got := q.ScaledValue(tc.to); got != tc.want {
			t.Errorf("1e%d in 1e%d units = %d, want %d", tc.from, tc.to, got, tc.want)
		}
	}
}

func TestAsInt64(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"1Ki", 1024, true},
		{"1500m", 0, false},
		{"1000m", 1, true},
		{"1e18", 1e18, true},
		{"1e19", 0, false},
		{"-2k", -2000, true},
	}
	for _, tc := range tests {
		got, ok := MustParse(tc.in).AsInt64()
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s.AsInt64() = %d, %t; want %d, %t", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestRoundUp(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in    string
		scale Scale
		want  string
		exact bool
	}{
		{"9.01", -3, "9010m", true},
		{"9.01", -2, "9010m", true},
		{"9.01", -1, "9100m", false},
		{"9.01", 0, "10", false},
		{"9.01", 1, "10", false},
		{"9.01", 2, "100", false},
		{"-9.01", -1, "-9100m", false},
		{"-9.01", 0, "-10", false},
	}
	for _, tc := range tests {
		q := MustParse(tc.in)
		exact := q.RoundUp(tc.scale)
		if q.String() != tc.want || exact != tc.exact {
			t.Errorf("RoundUp(%s, %d) = %s, %t; want %s, %t", tc.in, tc.scale, q, exact, tc.want, tc.exact)
		}
	}
}

func TestFloat(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   Quantity
		want float64
	}{
		{dec(0, 0, DecimalSI), 0},
		{dec(1024, 0, BinarySI), 1024},
		{dec(7*1024*1024, 4, DecimalSI), 7 * 1024 * 1024 * 10000},
		{dec(7*1024*1024, -1, DecimalSI), 7 * 1024 * 1024 * math.Pow10(-1)},
		{dec(math.MaxInt64, 0, DecimalSI), math.MaxInt64},
		{dec(12, 18, DecimalSI), 1.2e19},
		{dec(12, 500, DecimalSI), math.Inf(1)},
		{dec(-12, 500, DecimalSI), math.Inf(-1)},
		{MustParse("100m"), 0.1},
	}
	for _, tc := range tests {
		if got := tc.in.AsApproximateFloat64(); got != tc.want {
			t.Errorf("%s.AsApproximateFloat64() = %v, want %v", tc.in, got, tc.want)
		}
	}
	if got := MustParse("100m").AsFloat64Slow(); got != 0.1 {
		t.Errorf("AsFloat64Slow(100m) = %v", got)
	}
}

func TestJSON(t *testing.T) {
	t.Parallel()
	type holder struct {
		Q  Quantity  `json:"q"`
		P  *Quantity `json:"p,omitempty"`
		QZ Quantity  `json:"qz,omitzero"`
	}
	tests := []struct {
		in, out string
	}{
		{`{"q":"1.5Gi"}`, `{"q":"1536Mi"}`},
		{`{"q":"100m","p":"0.5"}`, `{"q":"100m","p":"500m"}`},
		{`{"q":0.5}`, `{"q":"500m"}`},
		{`{"q":3}`, `{"q":"3"}`},
		{`{"q":" 1 "}`, `{"q":"1"}`},
		{`{"q":null}`, `{"q":"0"}`},
		{`{"q":"2","qz":"1k"}`, `{"q":"2","qz":"1k"}`},
	}
	for _, tc := range tests {
		var h holder
		if err := json.Unmarshal([]byte(tc.in), &h); err != nil {
			t.Errorf("Unmarshal(%s): %v", tc.in, err)
			continue
		}
		b, err := json.Marshal(h)
		if err != nil {
			t.Errorf("Marshal: %v", err)
			continue
		}
		if string(b) != tc.out {
			t.Errorf("round trip of %s = %s, want %s", tc.in, b, tc.out)
		}
	}
	var h holder
	if err := json.Unmarshal([]byte(`{"q":"1x"}`), &h); err == nil {
		t.Error("Unmarshal of an invalid quantity succeeded")
	}
}

func TestMustParsePanics(t *testing.T) {
	t.Parallel()
	defer func() {
		if recover() == nil {
			t.Error("MustParse of garbage did not panic")
		}
	}()
	MustParse("garbage")
}

func BenchmarkParseCanonical(b *testing.B) {
	for b.Loop() {
		_, _ = ParseQuantity("512Mi")
	}
}

func BenchmarkParseNonCanonical(b *testing.B) {
	for b.Loop() {
		_, _ = ParseQuantity("1.5Gi")
	}
}

func BenchmarkAddCmp(b *testing.B) {
	x, y := MustParse("100m"), MustParse("2")
	for b.Loop() {
		s := x
		s.Add(y)
		_ = s.Cmp(y)
	}
}

func BenchmarkString(b *testing.B) {
	q := dec(1536*1024*1024, 0, BinarySI)
	for b.Loop() {
		_ = q.String()
	}
}
