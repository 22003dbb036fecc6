// Package singletable is typed DynamoDB single-table design for Go.
//
// Declare each entity once — a struct plus key templates — and get a typed
// repository that makes correct, cheap DynamoDB calls:
//
//	type UserSkill struct {
//		Username  string `dynamodbav:"Username"`
//		SkillName string `dynamodbav:"SkillName"`
//		Level     string `dynamodbav:"ProficiencyLevel"`
//		Years     int    `dynamodbav:"YearsOfExperience"`
//	}
//
//	var UserSkills = singletable.MustDefine(singletable.Schema[UserSkill]{
//		Type: "UserSkill",
//		PK:   "USER#{Username}",
//		SK:   "SKILL#{SkillName}",
//		Indexes: []singletable.IndexSchema[UserSkill]{
//			{Name: "GSI1", PK: "SKILL#{SkillName}", SK: "LEVEL#{Level}#USER#{Username}"},
//			{Name: "GSI2", PartitionAttrs: []string{"SkillName", "Level"}, SortAttrs: []string{"Years"}},
//		},
//	})
//
//	table := singletable.NewTable(client, "glad-entities")
//	skills := singletable.MustBind(table, UserSkills)
//	stored, err := skills.Create(ctx, UserSkill{Username: "john", SkillName: "go", Level: "Expert", Years: 7})
//	experts, err := skills.QueryIndex("GSI1", UserSkill{SkillName: "go"}).
//		Where("Level", singletable.Eq, "Expert").Collect(ctx)
//
// # Declarations
//
// A [Schema] names the entity type stored on every item (attribute
// "EntityType" by default), the primary key templates and the secondary
// indexes. [Define] resolves the placeholders' Go fields once and reports
// mistakes as a *[ValidationError]. Items are encoded with the struct's
// `dynamodbav` tags, as the SDK's attributevalue package does.
//
// # Keys
//
// Key values are escaped so that a value cannot forge a delimiter, and
// numbers and times are written at fixed width so that string order is
// value order. Sort conditions match exactly: [Query.Where] on the first
// sort fields matches on field boundaries (skill "go" never matches
// "golang"); [Query.BeginsWith] is a deliberate string-prefix match on one
// field's value. A placeholder can instead name the exact format of
// another service's key strings ("{At:rfc3339}", "{Seq:%08d}",
// "{Name:raw}"; see [Schema]). [Entity.ParseKeys] and [Entity.RenderKeys]
// go between keys and field values without a request.
//
// # Indexes
//
// An index is templated (overloaded "GSI1PK"/"GSI1SK" attributes, sparse,
// with an optional When predicate) or multi-attribute (up to four
// partition and four sort attributes of the item itself). [Update]
// recomputes every index key a change touches, reading the key fields it
// does not give from the stored item and conditioning the write on them.
//
// # Queries and pagination
//
// [Repo.Query] and [Repo.QueryIndex] take the partition fields from a key
// value; sort conditions name the fields they give, because a zero value
// is a real value. Every name a caller gives, in options, updates and the
// SDK's expression builders, is a Go field name or a stored attribute;
// anything else is a *[ValidationError] before the request is sent.
// [Query.Limit] counts items returned after filters. Cursors are opaque,
// checksummed and bound to their query, optionally sealed
// ([TableOptions].CursorKeys) and expiring; a bad one is [ErrInvalidCursor].
//
// # Options
//
// Operations take their options the way the AWS SDK does: an options
// struct ([ReadOptions], [WriteOptions], [BatchOptions], [TxOptions],
// [CreateTableOptions]) set by functions passed last:
//
//	u, err := users.Get(ctx, key, func(o *singletable.ReadOptions) { o.ConsistentRead = true })
//
// # Seeing requests before sending them
//
// [Table.Preview] runs a function and returns the requests ([Request]) its
// operations would send, without sending them; only the reads a write
// needs to be built are sent, and listed as such. [Query.Request] and
// [Collection.Request] build a query's input without running anything.
//
// # Transactions and batches
//
// [WriteOp]s ([Repo.PutOp], [Repo.CreateOp], [Repo.DeleteOp],
// [Repo.CheckOp], [Update.Op]) are committed all or nothing by [Tx] or
// written by [BatchWrite]; [GetOp]s ([Repo.GetOp]) are read as one
// snapshot by [TxGet] or by [BatchGet].
//
// # Errors
//
// Sentinels [ErrNotFound], [ErrAlreadyExists], [ErrConditionFailed],
// [ErrVersionConflict] and [ErrInvalidCursor] match with errors.Is; typed
// *[KeyError], *[ValidationError], *[TransactionError] and *[BatchError]
// with errors.As. [ErrMaybeApplied]: a single write's outcome is unknown
// (an attempt got no answer); treat it like a timeout, not a conflict.
// [ErrUnprocessed]: a batch item DynamoDB still left unprocessed after the
// retries. Where DynamoDB returned the error, errors.As still finds the
// SDK's type. Input that cannot be valid is rejected before any request.
//
// # Beyond this package
//
// Package migrate runs a table's data migrations (copies, backfills,
// unique guard adoption), recorded in the table itself; package streams
// decodes stream records into typed change events; package describe
// holds the descriptions [Table.Describe] returns, from which package
// catalog builds the access-pattern catalog; package ddblocal runs
// DynamoDB Local for tests. See README.md and docs/ for guides.
package singletable
