package singletable

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/describe"
	"github.com/singletable-go/singletable/internal/tabledef"
)

// CreateTableOptions tunes [Table.CreateTable] and
// [Table.CreateTableInput].
type CreateTableOptions struct {
	// Provisioned, when set, uses provisioned capacity for the table and
	// every index instead of on-demand billing (the default).
	Provisioned *types.ProvisionedThroughput
	// Wait is how long to wait for the table to become ACTIVE; default 2 minutes.
	Wait time.Duration
	// Stream, when set, enables the table's stream with this view type.
	// Typed change events (package streams) need the images:
	// types.StreamViewTypeNewAndOldImages gives both.
	Stream types.StreamViewType
	// Indexes are indexes to create that no bound entity declares (one
	// that another service or a raw query reads), described as
	// [Table.Describe] describes indexes: a key attribute's Type "" is S,
	// Projection "" is ALL. An index an entity declares is refused
	// (declare it once). [Table.Check] given the same options checks them.
	Indexes []describe.Index
}

// CreateTableInput returns the CreateTable request [Table.CreateTable]
// sends: the table's keys, every index the bound entities declare with
// its projection ([IndexSchema].Projection) and the options' Indexes,
// on-demand unless the options say otherwise. It leaves out an index of
// the options that CreateTable refuses.
func (t *Table) CreateTableInput(optFns ...func(*CreateTableOptions)) *dynamodb.CreateTableInput {
	in, _ := t.createTableInput(applyOpts(optFns))
	return in
}

// createTableInput is [Table.CreateTableInput], with a *ValidationError
// for each index of opts.Indexes it leaves out.
func (t *Table) createTableInput(opts CreateTableOptions) (*dynamodb.CreateTableInput, error) {
	in, refused := tabledef.Table{Name: t.name, PartitionKey: t.opts.PartitionKey, SortKey: t.opts.SortKey,
		Declared: t.indexes(), Extra: opts.Indexes, Provisioned: opts.Provisioned, Stream: opts.Stream}.Input()
	var errs []error
	for _, r := range refused {
		errs = append(errs, validationErr("", where(r.Index, r.Attr), "CreateTableOptions.Indexes: %s", r.Reason))
	}
	return in, errors.Join(errs...)
}

// CreateTable creates the table from the declarations of the entities
// bound to it ([CreateTable]) and waits until it is ACTIVE, then enables
// time to live on the TTL attribute an entity declares (see [Schema]).
// Bind every entity first.
//
// [CreateTable]: https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_CreateTable.html
func (t *Table) CreateTable(ctx context.Context, optFns ...func(*CreateTableOptions)) error {
	o := applyOpts(optFns)
	if o.Wait == 0 {
		o.Wait = 2 * time.Minute
	}
	in, err := t.createTableInput(o)
	if err != nil {
		return err
	}
	if _, err := t.api(ctx, "").CreateTable(ctx, in); err != nil {
		return fmt.Errorf("singletable: create table %s: %w", t.name, err)
	}
	if err := tabledef.WaitActive(ctx, t.api(ctx, "").DescribeTable, t.name, o.Wait); err != nil {
		return err
	}
	return t.enableTTL(ctx)
}

// enableTTL turns on time to live for the TTL attribute an entity declares
// ([UpdateTimeToLive]), if any.
//
// [UpdateTimeToLive]: https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_UpdateTimeToLive.html
func (t *Table) enableTTL(ctx context.Context) error {
	attr := t.ttlAttr()
	if attr == "" {
		return nil
	}
	if _, err := t.api(ctx, "").UpdateTimeToLive(ctx, tabledef.TTLInput(t.name, attr)); err != nil {
		return fmt.Errorf("singletable: enable TTL on %s.%s: %w", t.name, attr, err)
	}
	return nil
}

// ttlAttr returns the TTL attribute declared by the bound entities, or "".
func (t *Table) ttlAttr() string {
	t.mu.RLock()
	defer t.mu.RUnlock()
	for _, e := range t.entities {
		if a := e.ttlAttr(); a != "" {
			return a
		}
	}
	return ""
}

// Check compares the live table ([DescribeTable]) with the table
// [Table.CreateTable] creates given optFns: key schema, and every declared
// index (and each of the options' Indexes) with its key attributes and
// types and its projection (another type, or an INCLUDE without a declared
// attribute). It returns a *ValidationError listing every difference, or
// nil. Indexes that exist but are not declared are fine.
//
// [DescribeTable]: https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_DescribeTable.html
func (t *Table) Check(ctx context.Context, optFns ...func(*CreateTableOptions)) error {
	want, err := t.createTableInput(applyOpts(optFns))
	if err != nil {
		return err
	}
	out, err := t.api(ctx, "").DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(t.name)})
	if err != nil {
		return fmt.Errorf("singletable: describe table %s: %w", t.name, err)
	}
	if diffs := tabledef.Diff(want, out.Table); len(diffs) > 0 {
		return validationErr("", t.name, "table differs from the declarations: %s", strings.Join(diffs, "; "))
	}
	return nil
}

// DeleteTable deletes the table ([DeleteTable]). Data is lost: it is
// meant for tests and tooling.
//
// [DeleteTable]: https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_DeleteTable.html
func (t *Table) DeleteTable(ctx context.Context) error {
	_, err := t.api(ctx, "").DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(t.name)})
	if err != nil {
		return fmt.Errorf("singletable: delete table %s: %w", t.name, err)
	}
	return nil
}
