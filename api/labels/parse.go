package labels

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/minik8s/minik8s/api/field"
)

// token is a lexical element of the selector syntax.
type token int

const (
	tokError token = iota
	tokEnd
	tokClosePar
	tokComma
	tokNot
	tokDoubleEquals
	tokEquals
	tokGreater
	tokIdentifier
	tokIn
	tokLess
	tokNotEquals
	tokNotIn
	tokOpenPar
)

// literalTokens maps every operator and keyword spelling to its token.
var literalTokens = map[string]token{
	")":     tokClosePar,
	",":     tokComma,
	"!":     tokNot,
	"==":    tokDoubleEquals,
	"=":     tokEquals,
	">":     tokGreater,
	"in":    tokIn,
	"<":     tokLess,
	"!=":    tokNotEquals,
	"notin": tokNotIn,
	"(":     tokOpenPar,
}

type item struct {
	tok token
	lit string
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

func isSymbol(c byte) bool {
	switch c {
	case '=', '!', '(', ')', ',', '>', '<':
		return true
	}
	return false
}

// lex splits s into items, ending with tokEnd. Runs of symbol characters
// are cut at the longest known operator ("!=(" is "!=" then "(");
// everything else up to a symbol or blank is an identifier or a keyword.
func lex(s string) []item {
	var items []item
	i := 0
	for {
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		if i >= len(s) {
			return append(items, item{tok: tokEnd})
		}
		start := i
		if isSymbol(s[i]) {
			best, bestEnd := tokError, i
			for j := i + 1; j <= len(s) && isSymbol(s[j-1]); j++ {
				if t, ok := literalTokens[s[start:j]]; ok {
					best, bestEnd = t, j
				} else if best != tokError {
					break
				}
			}
			if best == tokError {
				// Unreachable with today's symbol set (each symbol alone is
				// an operator), kept so a new symbol cannot loop forever.
				return append(items, item{tok: tokError, lit: fmt.Sprintf("error expected: keyword found '%s'", s[start:])}, item{tok: tokEnd})
			}
			items = append(items, item{tok: best, lit: s[start:bestEnd]})
			i = bestEnd
			continue
		}
		for i < len(s) && !isSymbol(s[i]) && !isSpace(s[i]) {
			i++
		}
		lit := s[start:i]
		if t, ok := literalTokens[lit]; ok {
			items = append(items, item{tok: t, lit: lit})
		} else {
			items = append(items, item{tok: tokIdentifier, lit: lit})
		}
	}
}

// parser walks the items. In value position the keywords "in" and "notin"
// are plain identifiers ("x in (in)").
type parser struct {
	items []item
	pos   int
	path  *field.Path
}

type context int

const (
	keyAndOperator context = iota
	valuesContext
)

func (p *parser) peek(c context) (token, string) {
	it := p.items[p.pos]
	return asContext(it.tok, c), it.lit
}

func (p *parser) next(c context) (token, string) {
	it := p.items[p.pos]
	if it.tok != tokEnd {
		p.pos++
	}
	return asContext(it.tok, c), it.lit
}

func asContext(t token, c context) token {
	if c == valuesContext && (t == tokIn || t == tokNotIn) {
		return tokIdentifier
	}
	return t
}

// Parse parses the string form of a label selector:
//
//	<selector>    ::= <requirement> | <requirement> "," <selector>
//	<requirement> ::= [!] KEY [ <set-based> | <exact-match> ]
//	<set-based>   ::= ("in" | "notin") "(" VALUE { "," VALUE } ")"
//	<exact-match> ::= ("=" | "==" | "!=" | ">" | "<") VALUE
//
// KEY is a qualified name, VALUE a label value (possibly empty); blanks
// around tokens are ignored. A bare KEY means the key exists, !KEY that it
// does not. The empty string selects everything. Errors use Kubernetes'
// wording ("unable to parse requirement: ...", "found 'x', expected: ...").
func Parse(selector string) (Selector, error) {
	rs, err := parse(selector, nil)
	if err != nil {
		return nil, err
	}
	return rs, nil
}

// ParseWithPath is Parse with errors reported at path (for a selector held
// in an object field).
func ParseWithPath(selector string, path *field.Path) (Selector, error) {
	rs, err := parse(selector, path)
	if err != nil {
		return nil, err
	}
	return rs, nil
}

// ParseToRequirements parses selector and returns its terms sorted by key.
func ParseToRequirements(selector string) ([]Requirement, error) {
	return parse(selector, nil)
}

func parse(selector string, path *field.Path) (requirementsSelector, error) {
	p := &parser{items: lex(selector), path: path}
	var rs requirementsSelector
	for {
		tok, lit := p.peek(valuesContext)
		switch tok {
		case tokIdentifier, tokNot:
			r, err := p.requirement()
			if err != nil {
				return nil, fmt.Errorf("unable to parse requirement: %w", err)
			}
			rs = append(rs, *r)
			t, l := p.next(valuesContext)
			switch t {
			case tokEnd:
				sortByKey(rs)
				return rs, nil
			case tokComma:
				if t2, l2 := p.peek(valuesContext); t2 != tokIdentifier && t2 != tokNot {
					return nil, fmt.Errorf("found '%s', expected: identifier after ','", l2)
				}
			default:
				return nil, fmt.Errorf("found '%s', expected: ',' or 'end of string'", l)
			}
		case tokEnd:
			sortByKey(rs)
			return rs, nil
		default:
			return nil, fmt.Errorf("found '%s', expected: !, identifier, or 'end of string'", lit)
		}
	}
}

func (p *parser) requirement() (*Requirement, error) {
	key, op, err := p.keyAndInferredOperator()
	if err != nil {
		return nil, err
	}
	if op == OpExists || op == OpDoesNotExist {
		return newRequirement(key, op, nil, p.path)
	}
	if op, err = p.operator(); err != nil {
		return nil, err
	}
	var values []string
	switch op {
	case OpIn, OpNotIn:
		values, err = p.valueSet()
	default:
		values, err = p.exactValue()
	}
	if err != nil {
		return nil, err
	}
	return newRequirement(key, op, values, p.path)
}

// keyAndInferredOperator reads [!] KEY; a key followed by ',' or the end is
// an Exists (or, after '!', DoesNotExist) requirement. Otherwise the
// operator is "" and follows.
func (p *parser) keyAndInferredOperator() (string, Operator, error) {
	var op Operator
	tok, lit := p.next(valuesContext)
	if tok == tokNot {
		op = OpDoesNotExist
		tok, lit = p.next(valuesContext)
	}
	if tok != tokIdentifier {
		return "", "", fmt.Errorf("found '%s', expected: identifier", lit)
	}
	if err := validateKey(lit, p.path); err != nil {
		return "", "", err
	}
	if t, _ := p.peek(valuesContext); t == tokEnd || t == tokComma {
		if op != OpDoesNotExist {
			op = OpExists
		}
	}
	return lit, op, nil
}

func (p *parser) operator() (Operator, error) {
	tok, lit := p.next(keyAndOperator)
	switch tok {
	case tokIn:
		return OpIn, nil
	case tokNotIn:
		return OpNotIn, nil
	case tokEquals:
		return OpEquals, nil
	case tokDoubleEquals:
		return OpDoubleEquals, nil
	case tokNotEquals:
		return OpNotEquals, nil
	case tokGreater:
		return OpGreaterThan, nil
	case tokLess:
		return OpLessThan, nil
	}
	return "", fmt.Errorf("found '%s', expected: %s", lit, strings.Join(binaryOperators, ", "))
}

// valueSet reads "(" values ")". Empty entries are the empty value:
// "()", "(,a)" and "(a,,b)" all contain "".
func (p *parser) valueSet() ([]string, error) {
	if tok, lit := p.next(valuesContext); tok != tokOpenPar {
		return nil, fmt.Errorf("found '%s' expected: '('", lit)
	}
	tok, lit := p.peek(valuesContext)
	switch tok {
	case tokIdentifier, tokComma:
		set, err := p.identifierList()
		if err != nil {
			return nil, err
		}
		if t, _ := p.next(valuesContext); t != tokClosePar {
			return nil, fmt.Errorf("found '%s', expected: ')'", lit)
		}
		return set, nil
	case tokClosePar:
		p.next(valuesContext)
		return []string{""}, nil
	}
	return nil, fmt.Errorf("found '%s', expected: ',', ')' or identifier", lit)
}

func (p *parser) identifierList() ([]string, error) {
	var set []string
	for {
		tok, lit := p.next(valuesContext)
		switch tok {
		case tokIdentifier:
			set = append(set, lit)
			switch t2, l2 := p.peek(valuesContext); t2 {
			case tokComma:
				continue
			case tokClosePar:
				return uniqueSorted(set), nil
			default:
				return nil, fmt.Errorf("found '%s', expected: ',' or ')'", l2)
			}
		case tokComma:
			if len(set) == 0 {
				set = append(set, "") // "(,"
			}
			switch t2, _ := p.peek(valuesContext); t2 {
			case tokClosePar:
				return uniqueSorted(append(set, "")), nil // ",)"
			case tokComma:
				set = append(set, "") // ",,"
			}
		default:
			return nil, fmt.Errorf("found '%s', expected: ',', or identifier", lit)
		}
	}
}

// exactValue reads the value after =, ==, != (and >, <); nothing before ','
// or the end is the empty value.
func (p *parser) exactValue() ([]string, error) {
	if tok, _ := p.peek(valuesContext); tok == tokEnd || tok == tokComma {
		return []string{""}, nil
	}
	tok, lit := p.next(valuesContext)
	if tok == tokIdentifier {
		return []string{lit}, nil
	}
	return nil, fmt.Errorf("found '%s', expected: identifier", lit)
}

func uniqueSorted(s []string) []string {
	sort.Strings(s)
	return slices.Compact(s)
}
