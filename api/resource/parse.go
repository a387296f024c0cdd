package resource

import (
	"math"
	"math/big"
	"strconv"
	"strings"
)

// ParseQuantity parses the text form of a quantity:
//
//	<quantity> ::= <sign>? <digits>? ( "." <digits>? )? <suffix>
//	<suffix>   ::= "" | n | u | m | k | M | G | T | P | E    (decimal SI)
//	             | Ki | Mi | Gi | Ti | Pi | Ei               (binary SI)
//	             | ( e | E ) <sign>? <digits>                (decimal exponent)
//
// Values finer than 1n are rounded up to the next nano unit, binary values
// are capped at 2^63-1 in magnitude, and the notation of the suffix becomes
// the Format, all as in Kubernetes.
func ParseQuantity(str string) (Quantity, error) {
	if str == "" {
		return Quantity{}, ErrFormatWrong
	}
	if str == "0" {
		return Quantity{Format: DecimalSI, s: str}, nil
	}
	positive, num, denom, suf, err := scanQuantity(str)
	if err != nil {
		return Quantity{}, err
	}
	base, exp, format, ok := interpretSuffix(suf)
	if !ok {
		return Quantity{}, ErrSuffix
	}

	digits := num + denom
	var q Quantity
	q.Format = format
	if len(digits) <= 18 {
		v, err := strconv.ParseInt(digits, 10, 64)
		if err != nil {
			return Quantity{}, ErrNumeric
		}
		q.m = v
	} else {
		v, ok := new(big.Int).SetString(digits, 10)
		if !ok {
			return Quantity{}, ErrNumeric
		}
		q.setBig(v, 0)
	}

	// Place the decimal point; a binary suffix multiplies by 2^exp.
	scale := -int64(len(denom))
	if base == 10 {
		scale += int64(exp)
	} else {
		if v, ok := mulInt64(q.m, int64(1)<<exp); ok && q.b == nil {
			q.m = v
		} else {
			q.setBig(new(big.Int).Lsh(q.mantissa(), uint(exp)), 0)
		}
	}
	if scale < math.MinInt32 || scale > math.MaxInt32 {
		return Quantity{}, ErrSuffix
	}
	q.e = int32(scale)
	if !positive {
		q.Neg()
	}

	// Anything finer than a nano unit rounds up: asking for a sliver of a
	// resource should get some of it, not none.
	if q.e < int32(Nano) && !q.IsZero() {
		q.RoundUp(Nano)
	}
	if format == BinarySI {
		// Only a big mantissa can exceed the cap: e is never positive here.
		if q.b != nil {
			switch {
			case q.Sign() > 0 && q.CmpInt64(math.MaxInt64) > 0:
				q.m, q.b, q.e = math.MaxInt64, nil, 0
			case q.Sign() < 0 && q.CmpInt64(-math.MaxInt64) < 0:
				q.m, q.b, q.e = -math.MaxInt64, nil, 0
			}
		}
		if !q.IsZero() && q.CmpInt64(1) < 0 && q.CmpInt64(-1) > 0 {
			q.Format = DecimalSI
		}
	}
	fast, reuse := fastPath(num, denom, base, exp)
	if !fast && strings.IndexFunc(str[:len(str)-len(suf)], func(r rune) bool { return r >= '0' && r <= '9' }) < 0 {
		// Kubernetes' general path rejects a number without digits that
		// its int64 path reads as zero: "Ki" is 0 but "Pi" is an error.
		return Quantity{}, ErrNumeric
	}
	if reuse {
		q.s = str
	}
	return q, nil
}

// fastPath reports whether Kubernetes parses the number on its int64 fast
// path, and whether it then keeps the parsed text as the printed form (it
// does when the text looks canonical). Both are reproduced exactly because
// they are observable: "+1" and "01" print back unchanged while "1000m"
// prints as "1", and only the slow path rejects digit-less numbers.
func fastPath(num, denom string, base int, exp int32) (fast, reuse bool) {
	shifted := num + denom
	if base == 10 {
		scale := int64(exp) - int64(len(denom))
		if len(shifted) > 18 || scale < int64(Nano) {
			return false, false
		}
		return true, scale%3 == 0 && !strings.HasSuffix(shifted, "000") && shifted[0] != '0'
	}
	if len(denom) != 0 || 15-len(num)-int(float32(exp)*3/10)-1 < 0 {
		return false, false
	}
	v, err := strconv.ParseInt(shifted, 10, 64)
	if err != nil {
		return false, false
	}
	if _, ok := mulInt64(v, int64(1)<<exp); !ok {
		return false, false
	}
	return true, v&0x07 != 0
}

// scanQuantity splits str into sign, integer digits (leading zeros removed,
// "0" when none), fraction digits and suffix, with the same acceptance as
// Kubernetes' scanner (which is looser than the regular expression it
// quotes: "1." and ".5" parse).
func scanQuantity(str string) (positive bool, num, denom, suffix string, err error) {
	positive = true
	pos, end := 0, len(str)
	switch str[0] {
	case '-':
		positive = false
		pos++
	case '+':
		pos++
	}
	for pos < end && str[pos] == '0' {
		pos++
	}
	if pos >= end {
		return positive, "0", "", "", nil
	}
	start := pos
	for pos < end && isDigit(str[pos]) {
		pos++
	}
	num = str[start:pos]
	if num == "" {
		num = "0"
	}
	if pos < end && str[pos] == '.' {
		pos++
		start = pos
		for pos < end && isDigit(str[pos]) {
			pos++
		}
		denom = str[start:pos]
	}
	start = pos
	for pos < end && strings.IndexByte("eEinumkKMGTP", str[pos]) >= 0 {
		pos++
	}
	if pos < end && (str[pos] == '-' || str[pos] == '+') {
		pos++
	}
	for pos < end && isDigit(str[pos]) {
		pos++
	}
	if pos < end {
		return false, "", "", "", ErrFormatWrong
	}
	return positive, num, denom, str[start:], nil
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// interpretSuffix maps a suffix to its base (2 or 10), exponent and format.
func interpretSuffix(s string) (base int, exp int32, format Format, ok bool) {
	switch s {
	case "":
		return 10, 0, DecimalSI, true
	case "n":
		return 10, -9, DecimalSI, true
	case "u":
		return 10, -6, DecimalSI, true
	case "m":
		return 10, -3, DecimalSI, true
	case "k":
		return 10, 3, DecimalSI, true
	case "M":
		return 10, 6, DecimalSI, true
	case "G":
		return 10, 9, DecimalSI, true
	case "T":
		return 10, 12, DecimalSI, true
	case "P":
		return 10, 15, DecimalSI, true
	case "E":
		return 10, 18, DecimalSI, true
	case "Ki":
		return 2, 10, BinarySI, true
	case "Mi":
		return 2, 20, BinarySI, true
	case "Gi":
		return 2, 30, BinarySI, true
	case "Ti":
		return 2, 40, BinarySI, true
	case "Pi":
		return 2, 50, BinarySI, true
	case "Ei":
		return 2, 60, BinarySI, true
	}
	if len(s) > 1 && (s[0] == 'e' || s[0] == 'E') {
		v, err := strconv.ParseInt(s[1:], 10, 32)
		if err != nil {
			return 0, 0, DecimalExponent, false
		}
		return 10, int32(v), DecimalExponent, true
	}
	return 0, 0, DecimalExponent, false
}

var (
	decimalSuffixes = map[int32]string{-9: "n", -6: "u", -3: "m", 0: "", 3: "k", 6: "M",
		9: "G", 12: "T", 15: "P", 18: "E"}
	binarySuffixes = [...]string{"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"}
)

// canonical renders the value: no fractional digits, the largest suffix
// that loses nothing, and BinarySI only for integers of magnitude >= 1024
// (smaller or fractional binary values print as DecimalSI).
func (q Quantity) canonical() string {
	if q.IsZero() {
		return "0"
	}
	format := q.Format
	switch format {
	case DecimalSI, DecimalExponent:
	case BinarySI:
		if q.CmpInt64(-1024) > 0 && q.CmpInt64(1024) < 0 {
			format = DecimalSI
		} else if _, exact := q.integer(); !exact {
			format = DecimalSI
		}
	default:
		format = DecimalExponent
	}

	if format == BinarySI {
		v, _ := q.integer()
		n := 0
		if v.b == nil {
			for n < len(binarySuffixes)-1 && (v.m >= 1024 || v.m <= -1024) && v.m%1024 == 0 {
				v.m /= 1024
				n++
			}
			return strconv.FormatInt(v.m, 10) + binarySuffixes[n]
		}
		x := new(big.Int).Set(v.b)
		k, r := big.NewInt(1024), new(big.Int)
		for n < len(binarySuffixes)-1 {
			qt, rem := new(big.Int).QuoRem(x, k, r)
			if rem.Sign() != 0 {
				break
			}
			x = qt
			n++
		}
		return x.String() + binarySuffixes[n]
	}

	mant, exp := q.reduced()
	if format == DecimalExponent {
		if exp == 0 {
			return mant
		}
		return mant + "e" + strconv.FormatInt(exp, 10)
	}
	if exp > int64(Exa) {
		// Kubernetes has no suffix past E and would print a wrong number;
		// keep the value by growing the mantissa instead.
		m, _ := new(big.Int).SetString(mant, 10)
		return m.Mul(m, pow10Big(exp-int64(Exa))).String() + "E"
	}
	if exp < int64(Nano) {
		return mant + "e" + strconv.FormatInt(exp, 10)
	}
	return mant + decimalSuffixes[int32(exp)]
}

// reduced returns the decimal mantissa text and an exponent that is a
// multiple of three, with as few digits as possible.
func (q Quantity) reduced() (string, int64) {
	exp := int64(q.e)
	if q.b == nil {
		m := q.m
		for m%10 == 0 {
			m /= 10
			exp++
		}
		for exp%3 != 0 {
			if v, ok := mulInt64(m, 10); ok {
				m = v
				exp--
				continue
			}
			return reducedBig(big.NewInt(m), exp)
		}
		return strconv.FormatInt(m, 10), exp
	}
	return reducedBig(new(big.Int).Set(q.b), exp)
}

func reducedBig(m *big.Int, exp int64) (string, int64) {
	ten, qt, r := big.NewInt(10), new(big.Int), new(big.Int)
	for {
		qt.QuoRem(m, ten, r)
		if r.Sign() != 0 {
			break
		}
		m, qt = qt, m
		exp++
	}
	for exp%3 != 0 {
		m.Mul(m, ten)
		exp--
	}
	return m.String(), exp
}

// integer returns the value rounded up to an integer (as a Quantity with
// exponent 0) and whether that was exact.
func (q Quantity) integer() (Quantity, bool) {
	if q.e >= 0 {
		if q.b == nil {
			if v, ok := mulPow10(q.m, int64(q.e)); ok {
				return Quantity{m: v}, true
			}
		}
		var r Quantity
		r.setBig(new(big.Int).Mul(q.mantissa(), pow10Big(int64(q.e))), 0)
		return r, true
	}
	r := q
	exact := r.RoundUp(0)
	return r, exact
}
