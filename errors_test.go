package singletable_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestErrorsWrapSDK(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, users, _, _ := skillsTable(t)
	_, err := users.Create(ctx, User{Username: "x"})
	require.NoError(t, err)
	_, err = users.Create(ctx, User{Username: "x"})
	var ccf interface{ ErrorCode() string }
	require.True(t, errors.As(err, &ccf))
	assert.Equal(t, "ConditionalCheckFailedException", ccf.ErrorCode())
}
