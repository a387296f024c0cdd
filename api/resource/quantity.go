package resource

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strings"
)

// Format is the notation a Quantity is printed in; parsing records the
// notation the value was written in so that it is printed back the same way.
type Format string

// The three notations of a Quantity.
const (
	DecimalExponent = Format("DecimalExponent") // 12e6
	BinarySI        = Format("BinarySI")        // 12Mi (12 * 2^20)
	DecimalSI       = Format("DecimalSI")       // 12M  (12 * 10^6)
)

// Scale is a power of ten, used to get and set scaled values
// (ScaledValue(Milli) is the value in thousandths).
type Scale int32

// Common scales.
const (
	Nano  Scale = -9
	Micro Scale = -6
	Milli Scale = -3
	Kilo  Scale = 3
	Mega  Scale = 6
	Giga  Scale = 9
	Tera  Scale = 12
	Peta  Scale = 15
	Exa   Scale = 18
)

// splitREString is the grammar quoted in ErrFormatWrong; Kubernetes clients
// match on this exact text.
const splitREString = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"

// Errors returned by ParseQuantity, worded as Kubernetes words them.
var (
	ErrFormatWrong = errors.New("quantities must match the regular expression '" + splitREString + "'")
	ErrNumeric     = errors.New("unable to parse numeric part of quantity")
	ErrSuffix      = errors.New("unable to parse quantity's suffix")
)

// MaxMilliValue is the largest value whose MilliValue fits in an int64:
// compare Value() against it before trusting MilliValue().
const MaxMilliValue = int64(math.MaxInt64 / 1000)

// Quantity is an exact decimal number with a preferred notation.
//
// Its value is mantissa * 10^e, the mantissa held in m while it fits an
// int64 and in b beyond. b is never modified once a Quantity holds it, so
// copies of a Quantity may share it: a Quantity behaves as a plain value and
// needs no deep copy. The zero Quantity is 0.
type Quantity struct {
	m int64
	b *big.Int
	e int32
	// s caches the text the value was parsed from when that text is already
	// canonical, so the common parse-then-print path does no arithmetic.
	s string

	// Format is the notation String prints; it may be changed at will.
	Format
}

// MustParse parses s or panics; for tests and constants known to be valid.
func MustParse(s string) Quantity {
	q, err := ParseQuantity(s)
	if err != nil {
		panic(fmt.Errorf("cannot parse '%v': %w", s, err))
	}
	return q
}

// NewQuantity returns value in the given format.
func NewQuantity(value int64, format Format) *Quantity {
	return &Quantity{m: value, Format: format}
}

// NewMilliQuantity returns value/1000 in the given format.
func NewMilliQuantity(value int64, format Format) *Quantity {
	return &Quantity{m: value, e: int32(Milli), Format: format}
}

// NewScaledQuantity returns value * 10^scale in DecimalSI format.
func NewScaledQuantity(value int64, scale Scale) *Quantity {
	return &Quantity{m: value, e: int32(scale), Format: DecimalSI}
}

// Set sets the value to value, keeping the format.
func (q *Quantity) Set(value int64) { q.SetScaled(value, 0) }

// SetMilli sets the value to value/1000, keeping the format.
func (q *Quantity) SetMilli(value int64) { q.SetScaled(value, Milli) }

// SetScaled sets the value to value * 10^scale, keeping the format.
func (q *Quantity) SetScaled(value int64, scale Scale) {
	q.m, q.b, q.e, q.s = value, nil, int32(scale), ""
}

// DeepCopy returns q; it exists for API compatibility, a Quantity shares no
// mutable state with its copies.
func (q Quantity) DeepCopy() Quantity { return q }

// IsZero reports whether the value is zero.
func (q Quantity) IsZero() bool {
	if q.b != nil {
		return q.b.Sign() == 0
	}
	return q.m == 0
}

// Sign returns -1, 0 or 1 as the value is negative, zero or positive.
func (q Quantity) Sign() int {
	if q.b != nil {
		return q.b.Sign()
	}
	return cmp.Compare(q.m, 0)
}

// Cmp returns -1, 0 or 1 as q is less than, equal to or greater than y.
// The comparison is exact: "100m" equals "0.1".
func (q Quantity) Cmp(y Quantity) int {
	if q.b == nil && y.b == nil {
		d := int64(q.e) - int64(y.e)
		switch {
		case d == 0:
			return cmp.Compare(q.m, y.m)
		case d > 0:
			if v, ok := mulPow10(q.m, d); ok {
				return cmp.Compare(v, y.m)
			}
		default:
			if v, ok := mulPow10(y.m, -d); ok {
				return cmp.Compare(q.m, v)
			}
		}
	}
	return cmpSlow(q, y)
}

// CmpInt64 compares q with the integer y.
func (q Quantity) CmpInt64(y int64) int { return q.Cmp(Quantity{m: y}) }

// Equal reports whether q and v have the same value (for go-cmp).
func (q Quantity) Equal(v Quantity) bool { return q.Cmp(v) == 0 }

// QuantityPtrEqual reports whether a and b are both nil or both point to
// equal values.
func QuantityPtrEqual(a, b *Quantity) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Equal(*b)
}

// Add adds y to q. A zero q takes y's format, as in Kubernetes.
func (q *Quantity) Add(y Quantity) {
	q.s = ""
	if q.IsZero() {
		q.Format = y.Format
		if !y.IsZero() {
			q.m, q.b, q.e = y.m, y.b, y.e
		}
		return
	}
	if y.IsZero() {
		return
	}
	if q.b == nil && y.b == nil {
		d := int64(q.e) - int64(y.e)
		switch {
		case d == 0:
			if r, ok := addInt64(q.m, y.m); ok {
				q.m = r
				return
			}
		case d > 0:
			if v, ok := mulPow10(q.m, d); ok {
				if r, ok := addInt64(v, y.m); ok {
					q.m, q.e = r, y.e
					return
				}
			}
		default:
			if v, ok := mulPow10(y.m, -d); ok {
				if r, ok := addInt64(q.m, v); ok {
					q.m = r
					return
				}
			}
		}
	}
	a, b, e := aligned(*q, y)
	q.setBig(a.Add(a, b), e)
}

// Sub subtracts y from q. A zero q takes y's format, as in Kubernetes.
func (q *Quantity) Sub(y Quantity) {
	y.Neg()
	q.Add(y)
}

// Neg negates q.
func (q *Quantity) Neg() {
	q.s = ""
	switch {
	case q.b != nil:
		q.setBig(new(big.Int).Neg(q.b), q.e)
	case q.m == math.MinInt64:
		q.setBig(new(big.Int).Neg(big.NewInt(q.m)), q.e)
	default:
		q.m = -q.m
	}
}

// Mul multiplies q by y. It reports whether the resulting mantissa still
// fits an int64, as Kubernetes does; the value is exact either way.
func (q *Quantity) Mul(y int64) bool {
	q.s = ""
	if q.b == nil {
		if r, ok := mulInt64(q.m, y); ok {
			q.m = r
			return true
		}
	}
	r := new(big.Int).Mul(q.mantissa(), big.NewInt(y))
	q.setBig(r, q.e)
	return q.b == nil
}

// RoundUp rounds q away from zero to a multiple of 10^scale and reports
// whether the value was already exact at that scale.
func (q *Quantity) RoundUp(scale Scale) bool {
	if q.e >= int32(scale) {
		return true
	}
	q.s = ""
	r, exact := divPow10Away(q.mantissa(), int64(scale)-int64(q.e))
	q.setBig(r, int32(scale))
	return exact
}

// Value returns the value rounded up (away from zero) to an integer.
func (q Quantity) Value() int64 { return q.ScaledValue(0) }

// MilliValue returns the value in thousandths, rounded up (away from zero).
func (q Quantity) MilliValue() int64 { return q.ScaledValue(Milli) }

// ScaledValue returns the value in units of 10^scale, rounded up (away from
// zero). Kubernetes leaves overflow undefined; here the result saturates at
// the int64 limits.
func (q Quantity) ScaledValue(scale Scale) int64 {
	d := int64(q.e) - int64(scale)
	if q.b == nil {
		if d >= 0 {
			if v, ok := mulPow10(q.m, d); ok {
				return v
			}
			return saturate(q.Sign())
		}
		return divPow10AwayInt64(q.m, -d)
	}
	var r *big.Int
	if d >= 0 {
		r = new(big.Int).Mul(q.b, pow10Big(d))
	} else {
		r, _ = divPow10Away(q.b, -d)
	}
	if !r.IsInt64() {
		return saturate(r.Sign())
	}
	return r.Int64()
}

// AsInt64 returns the value as an int64 when it is an integer that fits.
func (q Quantity) AsInt64() (int64, bool) {
	if q.b != nil {
		if q.e < 0 {
			return 0, false
		}
		r := new(big.Int).Mul(q.b, pow10Big(int64(q.e)))
		if !r.IsInt64() {
			return 0, false
		}
		return r.Int64(), true
	}
	if q.e >= 0 {
		return mulPow10(q.m, int64(q.e))
	}
	p := -int64(q.e)
	if p > 18 {
		return 0, q.m == 0
	}
	if q.m%pow10Int64[p] != 0 {
		return 0, false
	}
	return q.m / pow10Int64[p], true
}

// AsApproximateFloat64 returns the value as a float64, possibly losing
// precision; magnitudes beyond float64 give ±Inf.
func (q Quantity) AsApproximateFloat64() float64 {
	var base float64
	if q.b != nil {
		base, _ = new(big.Float).SetInt(q.b).Float64()
	} else {
		base = float64(q.m)
	}
	if q.e == 0 {
		return base
	}
	return base * math.Pow10(int(q.e))
}

// AsFloat64Slow returns the float64 nearest to the value; slower than
// AsApproximateFloat64 but correctly rounded.
func (q Quantity) AsFloat64Slow() float64 {
	r := new(big.Rat)
	if q.e >= 0 {
		r.SetInt(new(big.Int).Mul(q.mantissa(), pow10Big(int64(q.e))))
	} else {
		r.SetFrac(q.mantissa(), pow10Big(-int64(q.e)))
	}
	f, _ := r.Float64()
	return f
}

// String returns the canonical text of the value (see the package doc).
func (q Quantity) String() string {
	if q.s != "" {
		return q.s
	}
	return q.canonical()
}

// MarshalJSON encodes the canonical text as a JSON string.
func (q Quantity) MarshalJSON() ([]byte, error) {
	s := q.String()
	out := make([]byte, 0, len(s)+2)
	out = append(out, '"')
	out = append(out, s...)
	return append(out, '"'), nil
}

// UnmarshalJSON accepts a JSON string or number ("100m", 0.5) or null.
// Like Kubernetes it tolerates surrounding whitespace inside the string.
func (q *Quantity) UnmarshalJSON(data []byte) error {
	s := string(data)
	if s == "null" {
		*q = Quantity{}
		return nil
	}
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		s = s[1 : len(s)-1]
	}
	parsed, err := ParseQuantity(strings.TrimSpace(s))
	if err != nil {
		return err
	}
	*q = parsed
	return nil
}

// mantissa returns the mantissa as a big.Int the caller must not modify.
func (q Quantity) mantissa() *big.Int {
	if q.b != nil {
		return q.b
	}
	return big.NewInt(q.m)
}

// setBig stores r * 10^e, moving r to the int64 field when it fits. r must
// not be modified afterwards.
func (q *Quantity) setBig(r *big.Int, e int32) {
	if r.IsInt64() {
		q.m, q.b = r.Int64(), nil
	} else {
		q.m, q.b = 0, r
	}
	q.e = e
}

// aligned returns fresh mantissas of q and y at their common (smaller)
// exponent.
func aligned(q, y Quantity) (*big.Int, *big.Int, int32) {
	e := min(q.e, y.e)
	a := new(big.Int).Mul(q.mantissa(), pow10Big(int64(q.e)-int64(e)))
	b := new(big.Int).Mul(y.mantissa(), pow10Big(int64(y.e)-int64(e)))
	return a, b, e
}

// cmpSlow compares values that do not fit the int64 fast path. It compares
// orders of magnitude first, so values with wildly different exponents
// ("1e900000" against "1n") are never expanded.
func cmpSlow(q, y Quantity) int {
	sq, sy := q.Sign(), y.Sign()
	if sq != sy {
		return cmp.Compare(sq, sy)
	}
	if sq == 0 {
		return 0
	}
	mq := int64(numDigits(q.mantissa())) + int64(q.e)
	my := int64(numDigits(y.mantissa())) + int64(y.e)
	if mq != my {
		return cmp.Compare(mq, my) * sq
	}
	a, b, _ := aligned(q, y)
	return a.Cmp(b)
}

func numDigits(x *big.Int) int {
	s := x.Text(10)
	if s[0] == '-' {
		return len(s) - 1
	}
	return len(s)
}

func saturate(sign int) int64 {
	if sign < 0 {
		return math.MinInt64
	}
	return math.MaxInt64
}

var pow10Int64 = [...]int64{1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9,
	1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18}

var pow10BigCache = func() [40]*big.Int {
	var c [40]*big.Int
	p := big.NewInt(1)
	for i := range c {
		c[i] = new(big.Int).Set(p)
		p.Mul(p, big.NewInt(10))
	}
	return c
}()

// pow10Big returns 10^n (n >= 0); the result must not be modified.
func pow10Big(n int64) *big.Int {
	if n < int64(len(pow10BigCache)) {
		return pow10BigCache[n]
	}
	return new(big.Int).Exp(big.NewInt(10), big.NewInt(n), nil)
}

// mulPow10 returns v * 10^n (n >= 0) if it fits an int64.
func mulPow10(v int64, n int64) (int64, bool) {
	if v == 0 || n == 0 {
		return v, true
	}
	if n > 18 {
		return 0, false
	}
	return mulInt64(v, pow10Int64[n])
}

func mulInt64(a, b int64) (int64, bool) {
	if a == 0 || b == 0 || a == 1 || b == 1 {
		return a * b, true
	}
	if a == math.MinInt64 || b == math.MinInt64 {
		return 0, false
	}
	c := a * b
	return c, c/b == a
}

func addInt64(a, b int64) (int64, bool) {
	c := a + b
	if (a > 0 && b > 0 && c < 0) || (a < 0 && b < 0 && c >= 0) {
		return 0, false
	}
	return c, true
}

// divPow10AwayInt64 returns v / 10^n (n > 0) rounded away from zero.
func divPow10AwayInt64(v int64, n int64) int64 {
	if v == 0 {
		return 0
	}
	if n > 18 {
		if v > 0 {
			return 1
		}
		return -1
	}
	p := pow10Int64[n]
	r := v / p
	if v%p != 0 {
		if v > 0 {
			r++
		} else {
			r--
		}
	}
	return r
}

// divPow10Away returns a fresh v / 10^n (n > 0) rounded away from zero and
// whether the division was exact.
func divPow10Away(v *big.Int, n int64) (*big.Int, bool) {
	if v.Sign() == 0 {
		return new(big.Int), true
	}
	if int64(numDigits(v)) < n {
		return big.NewInt(int64(v.Sign())), false
	}
	q, r := new(big.Int).QuoRem(v, pow10Big(n), new(big.Int))
	if r.Sign() == 0 {
		return q, true
	}
	return q.Add(q, big.NewInt(int64(v.Sign()))), false
}
