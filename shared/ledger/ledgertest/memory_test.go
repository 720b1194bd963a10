package ledgertest

import (
	"testing"

	"github.com/criticizer/criticizer/shared/ledger"
)

func TestMemoryContract(t *testing.T) {
	var m Memory
	var n int64
	Contract(t, &m, func(kind string) ledger.Thread { n++; return ledger.Thread{Kind: kind, ID: n} })
}
