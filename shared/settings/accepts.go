package settings

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Kind is the kind of value a setting holds.
type Kind int

// The kinds of value; the zero Kind is Text, which accepts any string.
const (
	Text    Kind = iota // any string
	Integer             // a whole number in [Min, Max] (or [Min, Max) Below): a count, seconds or days
	Number              // a decimal number in [Min, Max] (or [Min, Max) Below)
	Flag                // true or false
	Choice              // one of OneOf
)

// Accepts is what a setting accepts and what the functions take when its
// variable is unset. The functions' loaders read their variables through it
// (shared/config's Reader), so a value out of it fails their cold start
// naming the variable, and synth checks the cdk.json value against it
// (infra/declared.go), naming the key. The zero Accepts is any text,
// default empty.
type Accepts struct {
	Kind Kind
	// Default is the functions' value when the variable is unset, as text.
	Default  string
	Min, Max float64 // Integer and Number; Max +Inf: no upper bound
	// Below excludes Max: a share "from 0 up to below 1".
	Below bool
	// ZeroToo also accepts 0 below Min: off, or forever.
	ZeroToo bool
	OneOf   []string // Choice
}

// Int accepts a whole number in [min, max]; def when unset (it may lie
// outside the range: 0 for "the code decides").
func Int(def, min, max int) Accepts {
	return Accepts{Kind: Integer, Default: strconv.Itoa(def), Min: float64(min), Max: float64(max)}
}

// Float accepts a decimal number in [min, max]; def when unset.
func Float(def, min, max float64) Accepts {
	return Accepts{Kind: Number, Default: strconv.FormatFloat(def, 'f', -1, 64), Min: min, Max: max}
}

// FloatBelow accepts a decimal number from min up to, not including, max
// (a share of findings below 1); def when unset.
func FloatBelow(def, min, max float64) Accepts {
	a := Float(def, min, max)
	a.Below = true
	return a
}

// IntAtLeast accepts a whole number of at least min, with no upper bound;
// def when unset.
func IntAtLeast(def, min int) Accepts {
	a := Int(def, min, 0)
	a.Max = math.Inf(1)
	return a
}

// IntOrZero accepts 0 (off, or forever) or a whole number in [min, max]
// (max math.MaxInt: no upper bound); def when unset.
func IntOrZero(def, min, max int) Accepts {
	a := Int(def, min, max)
	if max == math.MaxInt {
		a.Max = math.Inf(1)
	}
	a.ZeroToo = true
	return a
}

// Bool accepts true or false; def when unset.
func Bool(def bool) Accepts { return Accepts{Kind: Flag, Default: strconv.FormatBool(def)} }

// Enum accepts one of allowed; def when unset.
func Enum(def string, allowed ...string) Accepts {
	return Accepts{Kind: Choice, Default: def, OneOf: allowed}
}

// Str accepts any text; def when unset.
func Str(def string) Accepts { return Accepts{Default: def} }

// Check reports whether v (trimmed) is accepted; the error says what is.
func (a Accepts) Check(v string) error {
	v = strings.TrimSpace(v)
	ok := true
	switch a.Kind {
	case Integer:
		n, err := strconv.ParseInt(v, 10, 64)
		ok = err == nil && a.inRange(float64(n))
	case Number:
		f, err := strconv.ParseFloat(v, 64)
		ok = err == nil && a.inRange(f)
	case Flag:
		ok = v == "true" || v == "false"
	case Choice:
		ok = slices.Contains(a.OneOf, v)
	}
	if !ok {
		return fmt.Errorf("must be %s", a.describe())
	}
	return nil
}

// inRange reports whether x is in [Min, Max], or [Min, Max) when Below.
func (a Accepts) inRange(x float64) bool {
	if a.ZeroToo && x == 0 {
		return true
	}
	if a.Below {
		return x >= a.Min && x < a.Max
	}
	return x >= a.Min && x <= a.Max
}

// describe is what a accepts, for an error: "an integer in 5–900".
func (a Accepts) describe() string {
	switch a.Kind {
	case Integer:
		return "an integer" + a.spanPhrase()
	case Number:
		return "a number" + a.spanPhrase()
	case Flag:
		return "true or false"
	case Choice:
		return "one of " + strings.Join(a.OneOf, ", ")
	}
	return "text"
}

// spanPhrase is Span after "an integer": " in 5–900", " from 0 to below
// 1", ", at least 0".
func (a Accepts) spanPhrase() string {
	switch {
	case a.Below:
		return " from " + a.Span()
	case math.IsInf(a.Max, 1) || a.ZeroToo:
		return ", " + a.Span()
	}
	return " in " + a.Span()
}

// Span is the range of a number, "5–900", "0 to below 1", "at least 0" or
// "0 or 365–36500";
// "" for other kinds.
func (a Accepts) Span() string {
	if a.Kind != Integer && a.Kind != Number {
		return ""
	}
	f := func(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }
	span := f(a.Min) + "–" + f(a.Max)
	switch {
	case math.IsInf(a.Max, 1):
		span = "at least " + f(a.Min)
	case a.Below:
		span = f(a.Min) + " to below " + f(a.Max)
	}
	if a.ZeroToo {
		return "0 or " + span
	}
	return span
}

// Variable is the declaration of the variable name: what its setting accepts;
// ok is false when no setting declares it.
func Variable(name string) (a Accepts, ok bool) {
	for _, s := range Declared {
		if slices.Contains(s.Vars, name) {
			return s.Accepts, true
		}
	}
	return Accepts{}, false
}

// Key reports whether a setting declares top-level cdk.json key k (an
// object's too: maxConcurrency for maxConcurrency.{fetch,llm,notify}).
func Key(k string) bool {
	if strings.Contains(k, ".") {
		return false
	}
	return slices.ContainsFunc(Declared, func(s Setting) bool {
		return slices.ContainsFunc(s.Keys, func(d string) bool {
			top, _, _ := strings.Cut(d, ".")
			return top == k
		})
	})
}

// Var is a declared variable: its name and what its setting accepts. Each
// has a handle in handles.go (generated from Declared), typed by its kind,
// which shared/config's Reader takes (r.Int(settings.LeaseSeconds)) and
// infra names the variable by: a misspelt variable or a read of the wrong
// kind does not compile.
type Var struct {
	Name    string
	Accepts Accepts
}

// The handles' types, one per kind; NameVar is a name the stack sets itself
// (a *stack* row's Names: no default or range).
type (
	IntVar    struct{ Var }
	NumberVar struct{ Var }
	FlagVar   struct{ Var }
	ChoiceVar struct{ Var }
	TextVar   struct{ Var }
	NameVar   struct{ Var }
)

func declare(name string) Var {
	a, _ := Variable(name)
	return Var{name, a}
}

func intVar(n string) IntVar       { return IntVar{declare(n)} }
func numberVar(n string) NumberVar { return NumberVar{declare(n)} }
func flagVar(n string) FlagVar     { return FlagVar{declare(n)} }
func choiceVar(n string) ChoiceVar { return ChoiceVar{declare(n)} }
func textVar(n string) TextVar     { return TextVar{declare(n)} }
func nameVar(n string) NameVar     { return NameVar{declare(n)} }

// JSONText is a JSON scalar as a variable would hold it.
func JSONText(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(v)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// EnvText is a cdk.json value as its variable holds it: a scalar as text,
// a list of strings comma-separated, an object as JSON; "" for none.
func EnvText(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case []any:
		parts := make([]string, 0, len(v))
		for _, e := range v {
			s, ok := e.(string)
			if !ok {
				return JSONText(v)
			}
			parts = append(parts, s)
		}
		return strings.Join(parts, ",")
	case map[string]any:
		if len(v) == 0 {
			return ""
		}
	}
	return JSONText(v)
}
