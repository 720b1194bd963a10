package dynamotest

import (
	"fmt"
	"math/big"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// The expression language as far as the store and outbox write it: = <> < <= >
// >=, IN, BETWEEN, AND/OR/NOT, parentheses, attribute_exists,
// attribute_not_exists, begins_with; SET with if_not_exists, list_append and
// +/-, REMOVE, ADD. Semantics per the DynamoDB Developer Guide, "Comparison
// operator and function reference" and "Update expressions": a comparison with a
// missing or other-typed value is false (<> true), SET values are computed from
// the item before the update, and a SET into a missing map is a
// ValidationException.

type token struct {
	kind string // "name", "ref", "val", "num", "op", "kw"
	text string
}

var keywords = map[string]bool{"AND": true, "OR": true, "NOT": true, "IN": true, "BETWEEN": true, "SET": true, "REMOVE": true, "ADD": true, "DELETE": true}

func lex(s string) ([]token, error) {
	var out []token
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			i++
		case strings.ContainsRune("(),.[]=+-", rune(c)):
			out = append(out, token{"op", string(c)})
			i++
		case c == '<' || c == '>':
			op := string(c)
			if i+1 < len(s) && (s[i+1] == '=' || (c == '<' && s[i+1] == '>')) {
				op += string(s[i+1])
			}
			out = append(out, token{"op", op})
			i += len(op)
		case c == '#' || c == ':' || isWord(c):
			j := i + 1
			for j < len(s) && isWord(s[j]) {
				j++
			}
			w := s[i:j]
			switch {
			case c == '#':
				out = append(out, token{"ref", w})
			case c == ':':
				out = append(out, token{"val", w})
			case c >= '0' && c <= '9':
				out = append(out, token{"num", w})
			case keywords[strings.ToUpper(w)]:
				out = append(out, token{"kw", strings.ToUpper(w)})
			default:
				out = append(out, token{"name", w})
			}
			i = j
		default:
			return nil, fmt.Errorf("invalid character %q", c)
		}
	}
	return out, nil
}

func isWord(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// parser walks one expression's tokens, resolving placeholders.
type parser struct {
	toks   []token
	pos    int
	names  map[string]string
	values map[string]types.AttributeValue
}

func (p *parser) peek() token {
	if p.pos < len(p.toks) {
		return p.toks[p.pos]
	}
	return token{}
}

func (p *parser) next() token { t := p.peek(); p.pos++; return t }

func (p *parser) is(kind, text string) bool {
	t := p.peek()
	return t.kind == kind && t.text == text
}

func (p *parser) expect(kind, text string) error {
	if t := p.next(); t.kind != kind || t.text != text {
		return fmt.Errorf("expected %s, got %q", text, t.text)
	}
	return nil
}

// path is a document path: attribute names and list indexes.
type path []any // string or int

func (p *parser) path() (path, error) {
	var out path
	name := func() error {
		t := p.next()
		switch t.kind {
		case "name":
			out = append(out, t.text)
		case "ref":
			n, ok := p.names[t.text]
			if !ok {
				return fmt.Errorf("an expression attribute name used in the document path is not defined: %s", t.text)
			}
			out = append(out, n)
		default:
			return fmt.Errorf("expected a document path, got %q", t.text)
		}
		return nil
	}
	if err := name(); err != nil {
		return nil, err
	}
	for {
		switch {
		case p.is("op", "."):
			p.next()
			if err := name(); err != nil {
				return nil, err
			}
		case p.is("op", "["):
			p.next()
			t := p.next()
			var i int
			if _, err := fmt.Sscan(t.text, &i); err != nil || t.kind != "num" {
				return nil, fmt.Errorf("bad list index %q", t.text)
			}
			out = append(out, i)
			if err := p.expect("op", "]"); err != nil {
				return nil, err
			}
		default:
			return out, nil
		}
	}
}

// get reads a path in item; nil when any step is missing.
func get(item map[string]types.AttributeValue, pth path) types.AttributeValue {
	var cur types.AttributeValue = &types.AttributeValueMemberM{Value: item}
	for _, step := range pth {
		switch s := step.(type) {
		case string:
			m, ok := cur.(*types.AttributeValueMemberM)
			if !ok {
				return nil
			}
			cur = m.Value[s]
		case int:
			l, ok := cur.(*types.AttributeValueMemberL)
			if !ok || s >= len(l.Value) {
				return nil
			}
			cur = l.Value[s]
		}
		if cur == nil {
			return nil
		}
	}
	return cur
}

// operand is a path's value in the item, or a placeholder's.
func (p *parser) operand(item map[string]types.AttributeValue) (types.AttributeValue, error) {
	t := p.peek()
	if t.kind == "val" {
		p.next()
		v, ok := p.values[t.text]
		if !ok {
			return nil, fmt.Errorf("an expression attribute value used in expression is not defined: %s", t.text)
		}
		return v, nil
	}
	pth, err := p.path()
	if err != nil {
		return nil, err
	}
	return get(item, pth), nil
}

// condition evaluates a condition, key condition or filter on item.
func condition(expr string, names map[string]string, values map[string]types.AttributeValue, item map[string]types.AttributeValue) (bool, error) {
	toks, err := lex(expr)
	if err != nil {
		return false, err
	}
	p := &parser{toks: toks, names: names, values: values}
	ok, err := p.or(item)
	if err == nil && p.pos != len(toks) {
		err = fmt.Errorf("unexpected %q", p.peek().text)
	}
	if err != nil {
		return false, fmt.Errorf("invalid condition %q: %w", expr, err)
	}
	return ok, nil
}

func (p *parser) or(item map[string]types.AttributeValue) (bool, error) {
	return p.binary(item, "OR", p.and, func(a, b bool) bool { return a || b })
}

func (p *parser) and(item map[string]types.AttributeValue) (bool, error) {
	return p.binary(item, "AND", p.not, func(a, b bool) bool { return a && b })
}

// binary folds operands of the next precedence joined by the keyword op.
func (p *parser) binary(item map[string]types.AttributeValue, op string, operand func(map[string]types.AttributeValue) (bool, error), join func(a, b bool) bool) (bool, error) {
	v, err := operand(item)
	for err == nil && p.is("kw", op) {
		p.next()
		var r bool
		r, err = operand(item)
		v = join(v, r)
	}
	return v, err
}

func (p *parser) not(item map[string]types.AttributeValue) (bool, error) {
	if p.is("kw", "NOT") {
		p.next()
		v, err := p.not(item)
		return !v, err
	}
	return p.primary(item)
}

func (p *parser) primary(item map[string]types.AttributeValue) (bool, error) {
	if p.is("op", "(") {
		p.next()
		v, err := p.or(item)
		if err != nil {
			return false, err
		}
		return v, p.expect("op", ")")
	}
	if p.call() {
		return p.function(item)
	}
	left, err := p.operand(item)
	if err != nil {
		return false, err
	}
	t := p.next()
	switch {
	case t.kind == "kw" && t.text == "IN":
		if err := p.expect("op", "("); err != nil {
			return false, err
		}
		in := false
		for {
			v, err := p.operand(item)
			if err != nil {
				return false, err
			}
			in = in || compare("=", left, v)
			if !p.is("op", ",") {
				break
			}
			p.next()
		}
		return in, p.expect("op", ")")
	case t.kind == "kw" && t.text == "BETWEEN":
		lo, err := p.operand(item)
		if err != nil {
			return false, err
		}
		if err := p.expect("kw", "AND"); err != nil {
			return false, err
		}
		hi, err := p.operand(item)
		return compare(">=", left, lo) && compare("<=", left, hi), err
	case t.kind == "op" && strings.Contains("= <> < <= > >=", t.text):
		right, err := p.operand(item)
		return compare(t.text, left, right), err
	}
	return false, fmt.Errorf("expected a comparison, got %q", t.text)
}

func (p *parser) function(item map[string]types.AttributeValue) (bool, error) {
	fn := p.next().text
	p.next() // (
	pth, err := p.path()
	if err != nil {
		return false, err
	}
	var ok bool
	switch fn {
	case "attribute_exists":
		ok = get(item, pth) != nil
	case "attribute_not_exists":
		ok = get(item, pth) == nil
	case "begins_with":
		if err := p.expect("op", ","); err != nil {
			return false, err
		}
		prefix, err := p.operand(item)
		if err != nil {
			return false, err
		}
		s, sok := get(item, pth).(*types.AttributeValueMemberS)
		pre, pok := prefix.(*types.AttributeValueMemberS)
		ok = sok && pok && strings.HasPrefix(s.Value, pre.Value)
	default:
		return false, fmt.Errorf("unsupported function %s", fn)
	}
	return ok, p.expect("op", ")")
}

// compare applies a comparator. <> is the negation of =: a missing operand
// or operands of different types are not equal, so <> is true and every
// other comparator false. Sources: the API reference's Condition (NE:
// {"S":"6"} does not equal {"N":"6"}), and DynamoDB's answers for a
// missing operand as recorded by emulators fixed against it:
// ExtendDB/extenddb#5 (`#a <> :v` true, = < <= > >= false) and
// nubo-db/dynoxide#8; scylladb/scylladb#8511 (two missing: = false).
func compare(op string, a, b types.AttributeValue) bool {
	if op == "<>" {
		return !compare("=", a, b)
	}
	var c int
	switch x := a.(type) {
	case *types.AttributeValueMemberS:
		y, ok := b.(*types.AttributeValueMemberS)
		if !ok {
			return false
		}
		c = strings.Compare(x.Value, y.Value)
	case *types.AttributeValueMemberN:
		xr, yr := number(x), number(b)
		if xr == nil || yr == nil {
			return false
		}
		c = xr.Cmp(yr)
	case *types.AttributeValueMemberBOOL:
		y, ok := b.(*types.AttributeValueMemberBOOL)
		return ok && op == "=" && x.Value == y.Value
	default: // lists, maps, sets and binary: no condition of ours compares them
		return false
	}
	switch op {
	case "=":
		return c == 0
	case "<":
		return c < 0
	case "<=":
		return c <= 0
	case ">":
		return c > 0
	}
	return c >= 0
}

// number is an N value's number; nil for another type.
func number(v types.AttributeValue) *big.Rat {
	n, ok := v.(*types.AttributeValueMemberN)
	if !ok {
		return nil
	}
	r, _ := new(big.Rat).SetString(n.Value)
	return r
}

// call: the next tokens are a function's name and its "(".
func (p *parser) call() bool {
	return p.peek().kind == "name" && p.pos+1 < len(p.toks) && p.toks[p.pos+1].text == "("
}
