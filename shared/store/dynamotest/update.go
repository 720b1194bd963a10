package dynamotest

import (
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// action is one SET, REMOVE or ADD, its value computed from the item as it was.
type action struct {
	verb  string
	path  path
	value types.AttributeValue
}

// update applies an update expression to item (changed in place).
func update(expr string, names map[string]string, values map[string]types.AttributeValue, item map[string]types.AttributeValue) error {
	toks, err := lex(expr)
	if err != nil {
		return err
	}
	p := &parser{toks: toks, names: names, values: values}
	var acts []action
	for p.pos < len(toks) {
		t := p.next()
		if t.kind != "kw" {
			return fmt.Errorf("invalid update %q: expected SET, REMOVE or ADD, got %q", expr, t.text)
		}
		for {
			a := action{verb: t.text}
			if a.path, err = p.path(); err != nil {
				return fmt.Errorf("invalid update %q: %w", expr, err)
			}
			switch t.text {
			case "SET":
				if err = p.expect("op", "="); err == nil {
					a.value, err = p.setValue(item)
				}
			case "ADD":
				a.value, err = p.operand(item)
			case "REMOVE":
			default:
				err = fmt.Errorf("unsupported clause %s", t.text)
			}
			if err != nil {
				return fmt.Errorf("invalid update %q: %w", expr, err)
			}
			acts = append(acts, a)
			if !p.is("op", ",") {
				break
			}
			p.next()
		}
	}
	for _, a := range acts {
		if err := apply(item, a); err != nil {
			return fmt.Errorf("update %q: %w", expr, err)
		}
	}
	return nil
}

// setValue is a SET's right-hand side: operand [+|- operand], where an
// operand may be if_not_exists(path, value) or list_append(a, b).
func (p *parser) setValue(item map[string]types.AttributeValue) (types.AttributeValue, error) {
	v, err := p.setOperand(item)
	if err != nil || !(p.is("op", "+") || p.is("op", "-")) {
		return v, err
	}
	op := p.next().text
	w, err := p.setOperand(item)
	if err != nil {
		return nil, err
	}
	x, y := number(v), number(w)
	if x == nil || y == nil {
		return nil, fmt.Errorf("an operand in the update expression has an incorrect data type")
	}
	if op == "+" {
		x.Add(x, y)
	} else {
		x.Sub(x, y)
	}
	return &types.AttributeValueMemberN{Value: x.RatString()}, nil
}

func (p *parser) setOperand(item map[string]types.AttributeValue) (types.AttributeValue, error) {
	if !p.call() {
		v, err := p.operand(item)
		if err == nil && v == nil {
			err = fmt.Errorf("the provided expression refers to an attribute that does not exist in the item")
		}
		return v, err
	}
	fn := p.next().text
	p.next() // (
	var out types.AttributeValue
	switch fn {
	case "if_not_exists":
		pth, err := p.path()
		if err != nil {
			return nil, err
		}
		if err := p.expect("op", ","); err != nil {
			return nil, err
		}
		def, err := p.setOperand(item)
		if err != nil {
			return nil, err
		}
		if out = get(item, pth); out == nil {
			out = def
		}
	case "list_append":
		a, err := p.setOperand(item)
		if err != nil {
			return nil, err
		}
		if err := p.expect("op", ","); err != nil {
			return nil, err
		}
		b, err := p.setOperand(item)
		if err != nil {
			return nil, err
		}
		la, aok := a.(*types.AttributeValueMemberL)
		lb, bok := b.(*types.AttributeValueMemberL)
		if !aok || !bok {
			return nil, fmt.Errorf("list_append of a value that is not a list")
		}
		out = &types.AttributeValueMemberL{Value: append(append([]types.AttributeValue{}, la.Value...), lb.Value...)}
	default:
		return nil, fmt.Errorf("unsupported function %s", fn)
	}
	return out, p.expect("op", ")")
}

// apply performs one action; the map a path's last step lives in must
// exist, for a REMOVE too (DynamoDB: "The document path provided in the
// update expression is invalid for update"; ScyllaDB Alternator's tests
// against DynamoDB, scylladb/scylladb#10043: REMOVE x.y needs a map x, and
// removing a missing y from it does nothing).
func apply(item map[string]types.AttributeValue, a action) error {
	parent := item
	if len(a.path) > 1 {
		m, ok := get(item, a.path[:len(a.path)-1]).(*types.AttributeValueMemberM)
		if !ok {
			return fmt.Errorf("the document path provided in the update expression is invalid for update")
		}
		parent = m.Value
	}
	last, ok := a.path[len(a.path)-1].(string)
	if !ok {
		return fmt.Errorf("list element updates are not supported here")
	}
	switch a.verb {
	case "SET":
		parent[last] = a.value
	case "REMOVE":
		delete(parent, last)
	case "ADD":
		sum := number(a.value)
		if sum == nil {
			return fmt.Errorf("ADD of a value that is not a number")
		}
		if cur := number(parent[last]); cur != nil {
			sum.Add(sum, cur)
		}
		parent[last] = &types.AttributeValueMemberN{Value: sum.RatString()}
	}
	return nil
}

// clone deep-copies an item: the table never shares a map or list with a caller.
func clone(item map[string]types.AttributeValue) map[string]types.AttributeValue {
	if item == nil {
		return nil
	}
	out := make(map[string]types.AttributeValue, len(item))
	for k, v := range item {
		out[k] = cloneValue(v)
	}
	return out
}

func cloneValue(v types.AttributeValue) types.AttributeValue {
	switch x := v.(type) {
	case *types.AttributeValueMemberM:
		return &types.AttributeValueMemberM{Value: clone(x.Value)}
	case *types.AttributeValueMemberL:
		l := make([]types.AttributeValue, len(x.Value))
		for i, e := range x.Value {
			l[i] = cloneValue(e)
		}
		return &types.AttributeValueMemberL{Value: l}
	}
	return v // scalars: the table never changes one in place
}
