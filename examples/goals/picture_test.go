package goals_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable/catalog"
	"github.com/singletable-go/singletable/examples/goals"
)

// sampleItems are the items docs/table.svg pictures: two users (each
// with the guard item of its email), their goals, meals (one without a
// category, so not in EmailIndex) and activities, as the repository's
// writes render them.
func sampleItems(t *testing.T, r *goals.Repository) []map[string]types.AttributeValue {
	t.Helper()
	day := func(d, h int) time.Time { return time.Date(2024, 1, d, h, 0, 0, 0, time.UTC) }
	items, err := catalog.PreviewItems(context.Background(), r.Table, func(ctx context.Context) error {
		for _, p := range []goals.Profile{{UserID: "u1", Email: "ann@example.com", Name: "Ann"}, {UserID: "u2", Email: "ben@example.com", Name: "Ben"}} {
			if _, err := r.Profiles.Create(ctx, p); err != nil {
				return err
			}
		}
		for _, g := range []goals.Goal{
			{UserID: "u1", GoalID: "g1", Title: "Run 100 km", Status: goals.GoalActive, Target: 100, CreatedAt: day(2, 9)},
			{UserID: "u1", GoalID: "g2", Title: "Read 12 books", Status: goals.GoalCompleted, Target: 12, CreatedAt: day(1, 8)},
			{UserID: "u2", GoalID: "g3", Title: "Swim weekly", Status: goals.GoalActive, Target: 52, CreatedAt: day(3, 7)},
		} {
			if _, err := r.Goals.Create(ctx, g); err != nil {
				return err
			}
		}
		for _, m := range []goals.Meal{
			{UserID: "u1", MealID: "m1", EatenAt: day(7, 8), Category: "breakfast", Calories: 420},
			{UserID: "u1", MealID: "m2", EatenAt: day(7, 13), Category: "lunch", Calories: 650, Notes: "salad and soup"},
			{UserID: "u1", MealID: "m3", EatenAt: day(7, 16), Calories: 150},
		} {
			if _, err := r.Meals.Create(ctx, m); err != nil {
				return err
			}
		}
		for _, a := range []goals.Activity{
			{UserID: "u1", GoalID: "g1", Date: day(7, 0), ActivityID: "a1", Kind: "run", Amount: 5.5},
			{UserID: "u1", GoalID: "g1", Date: day(8, 0), ActivityID: "a2", Kind: "run", Amount: 8},
			{UserID: "u2", GoalID: "g3", Date: day(7, 0), ActivityID: "a3", Kind: "swim", Amount: 1.2},
		} {
			if _, err := r.Activities.Create(ctx, a); err != nil {
				return err
			}
		}
		return nil
	})
	require.NoError(t, err)
	return items
}
