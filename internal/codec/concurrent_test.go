package codec

import (
	"math/rand/v2"
	"reflect"
	"sync"
	"testing"
)

// Plans are built on first use from many goroutines at once and then
// shared; run with -race.
func TestConcurrentUse(t *testing.T) {
	type fresh struct {
		A  string
		B  []Inner
		C  map[string]any
		D  *Tree
		PK string `dynamodbav:"-"`
	}
	typs := []reflect.Type{reflect.TypeFor[fresh](), reflect.TypeFor[Item](), reflect.TypeFor[Recs](), reflect.TypeFor[common]()}
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			g := &gen{r: rand.New(rand.NewPCG(uint64(w), 9))}
			for i := 0; i < 200; i++ {
				typ := typs[(w+i)%len(typs)]
				v := g.value(typ)
				item, err := For(typ).Encode(v, 2)
				if err != nil {
					continue
				}
				item["PK"] = nil
				_ = For(typ).Decode(item, reflect.New(typ).Elem())
			}
		}(w)
	}
	wg.Wait()
}
