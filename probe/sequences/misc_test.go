package sequences_test

import (
	"context"
	"errors"
	"testing"

	"github.com/singletable-go/singletable"
)

func TestUpdateKeyFieldRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var repo *singletable.Repo[UItem]
	_, _ = newTable(t, nil, func(tb *singletable.Table) { repo = singletable.MustBind(tb, UItems) })
	if _, err := repo.Create(ctx, UItem{Part: "p", ID: "1", Email: "a"}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"ID", "Part"} {
		_, err := repo.Update(UItem{Part: "p", ID: "1"}).Set(f, "2").Run(ctx)
		var ve *singletable.ValidationError
		if !errors.As(err, &ve) {
			t.Errorf("Set(%s): %v, want *ValidationError", f, err)
		}
		_, err = repo.Update(UItem{Part: "p", ID: "1"}).Remove(f).Run(ctx)
		if !errors.As(err, &ve) {
			t.Errorf("Remove(%s): %v, want *ValidationError", f, err)
		}
	}
	for _, f := range []string{"Version", "CreatedAt", "UpdatedAt"} {
		_, err := repo.Update(UItem{Part: "p", ID: "1"}).Remove(f).Run(ctx)
		var ve *singletable.ValidationError
		if !errors.As(err, &ve) {
			t.Errorf("Remove(%s): %v, want *ValidationError", f, err)
		}
	}
	_, problems := readStateP(t, ddblocalPlain(t), repo.Table().Name())
	for _, p := range problems {
		t.Error(p)
	}
}
