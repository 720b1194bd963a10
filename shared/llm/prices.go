package llm

import (
	"fmt"
	"strconv"
	"strings"
)

// Prices are a model's list prices in US dollars per million tokens; the
// zero Prices estimates no cost.
type Prices struct {
	Input, CachedInput, CacheWrite, Output float64
}

// ParsePrices reads "input=3,cached_input=0.3,cache_write=3.75,output=15"
// (LLM_PRICES_PER_MTOK); "" is no prices. A price left out is 0, except
// cache_write, which providers that do not bill it apart charge as input.
func ParsePrices(s string) (Prices, error) {
	var p Prices
	if strings.TrimSpace(s) == "" {
		return p, nil
	}
	write := -1.0
	for _, f := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(f), "=")
		n, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if !ok || err != nil || n < 0 {
			return Prices{}, fmt.Errorf("price %q: want name=dollars per million tokens", f)
		}
		switch strings.TrimSpace(k) {
		case "input":
			p.Input = n
		case "cached_input":
			p.CachedInput = n
		case "cache_write":
			write = n
		case "output":
			p.Output = n
		default:
			return Prices{}, fmt.Errorf("price %q: want input, cached_input, cache_write or output", k)
		}
	}
	p.CacheWrite = p.Input
	if write >= 0 {
		p.CacheWrite = write
	}
	return p, nil
}

// Cost estimates what u costs at p, in US dollars; ok is false when no
// prices are configured.
func (p Prices) Cost(u Usage) (dollars float64, ok bool) {
	if p == (Prices{}) {
		return 0, false
	}
	plain := u.UncachedInputTokens() - u.CacheWriteInputTokens
	return (float64(plain)*p.Input + float64(u.CacheWriteInputTokens)*p.CacheWrite +
		float64(u.CachedInputTokens)*p.CachedInput + float64(u.OutputTokens)*p.Output) / 1e6, true
}
