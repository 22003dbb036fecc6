package sequences_test

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/ddbfault"
)

// Refusals before the network: a transaction over 100 items counting
// guards, an update that makes an item too large.
func TestRefusedBeforeNetwork(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ft := ddbfault.New(http.DefaultTransport, ddbfault.Config{Seed: 1, Rate: 0})
	var repo *singletable.Repo[UItem]
	tbl, _ := newTable(t, ft, func(tb *singletable.Table) { repo = singletable.MustBind(tb, UItems) })
	sent := func() int { return ft.Stats().Requests }
	before := sent()
	err := singletable.Tx(ctx, tbl, func(tx *singletable.Txn) error {
		for i := 0; i < 51; i++ {
			repo.TxCreate(tx, UItem{Part: "p", ID: strconv.Itoa(i), Email: "e" + strconv.Itoa(i)})
		}
		return nil
	})
	var ve *singletable.ValidationError
	if !errors.As(err, &ve) || sent() != before {
		t.Errorf("51 creates + 51 guards: %v, %d requests", err, sent()-before)
	}
	// A value that alone makes the item too large: a Put is refused
	// before the network (here by the key it renders); an Update is sent
	// and refused by DynamoDB, as docs/reliability.md says.
	before = sent()
	_, err = repo.Put(ctx, UItem{Part: "p", ID: "big2", Note: strings.Repeat("x", 410_000)})
	var ke *singletable.KeyError
	if !errors.As(err, &ke) || sent() != before {
		t.Errorf("410 KB put: %v (%d requests)", err, sent()-before)
	}
}
