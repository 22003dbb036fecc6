package skills

import (
	"fmt"
	"time"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/migrate"
)

// LegacyTableName is the table the skills service migrates from.
const LegacyTableName = "users"

// LegacyUser is an item of the legacy users table (partition key
// username, no sort key), as the skills service's design describes it.
type LegacyUser struct {
	Username     string `dynamodbav:"username"`
	Name         string `dynamodbav:"name"`
	PasswordHash string `dynamodbav:"password_hash"`
	CreatedAt    string `dynamodbav:"created_at"` // RFC 3339
	UpdatedAt    string `dynamodbav:"updated_at"` // RFC 3339
}

// LegacyUsersMigrationID identifies the copy in the migration ledger.
const LegacyUsersMigrationID = "000-legacy-users"

// LegacyUsersMigration is the skills service's data migration, run by the library's
// migration engine: scan the legacy table (parallel segments, paged), turn
// each item into a User (PK USER#<username>, SK PROFILE; the library adds
// its GSI1 listing keys, shard included), and batch-write it into the
// single table. Items whose username the service would refuse are skipped
// (counted, not copied); an unreadable timestamp fails the item. Checkpoints in the ledger make a
// crashed run resume, and a finished one does not run again.
func LegacyUsersMigration(st *Store, sourceTable string) migrate.Migration {
	transform := migrate.TransformAs(func(l LegacyUser) ([]singletable.WriteOp, error) {
		if ValidUsername(l.Username) != nil {
			return nil, nil
		}
		created, err := time.Parse(time.RFC3339, l.CreatedAt)
		if err != nil {
			return nil, fmt.Errorf("user %s: created_at: %w", l.Username, err)
		}
		updated := created
		if l.UpdatedAt != "" {
			if updated, err = time.Parse(time.RFC3339, l.UpdatedAt); err != nil {
				return nil, fmt.Errorf("user %s: updated_at: %w", l.Username, err)
			}
		}
		u := User{Username: l.Username, Name: l.Name, PasswordHash: l.PasswordHash,
			CreatedAt: created.UTC(), UpdatedAt: updated.UTC()}
		return []singletable.WriteOp{st.Users.PutOp(u)}, nil
	})
	m := migrate.Copy(LegacyUsersMigrationID, migrate.Source{Table: sourceTable}, transform)
	m.Description = "legacy users table → " + st.Table.Name() + " (skills service, phase 1)"
	return m
}

// UsersListingMigrationID identifies the backfill of the users' listing
// keys in the migration ledger.
const UsersListingMigrationID = "001-users-listing"

// UsersListingMigration gives the users written by the design's own Go
// service their GSI1 listing keys (USERS#shard_<n> / USER#<username>):
// that service writes a profile without GSI1 attributes (its GSI1 holds
// skills only), so until this has run ListUsers does not see those users.
// It rewrites only the users whose listing keys are missing or stale,
// setting just those two attributes, conditioned on the username read.
func UsersListingMigration(st *Store) migrate.Migration {
	m := migrate.Backfill(UsersListingMigrationID, st.Users)
	m.Description = "GSI1 listing keys for users written without them (the Go service's profiles)"
	return m
}

// Migrator returns the migration engine for the store's table with the
// service's migrations: the legacy copy and the users' listing backfill.
func Migrator(st *Store, legacyTable string) (*migrate.Migrator, error) {
	return migrate.New(st.Table, LegacyUsersMigration(st, legacyTable), UsersListingMigration(st))
}
