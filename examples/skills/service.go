package skills

import (
	"context"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/singletable-go/singletable"
)

// InputError is a request the service refuses before touching the table:
// a missing or malformed field. The HTTP layer answers it with 400.
type InputError struct {
	Field  string
	Reason string
}

// Error returns "field: reason".
func (e *InputError) Error() string { return e.Field + ": " + e.Reason }

// ErrBadCredentials is returned by Authenticate for an unknown user or a
// wrong password (the two are not told apart).
var ErrBadCredentials = errors.New("skills: bad username or password")

// MaxPageSize caps the limit a caller may ask for.
const MaxPageSize = 100

// DefaultPageSize is the limit used when the caller gives none.
const DefaultPageSize = 20

// Service implements the skills service's access patterns on a [Store].
type Service struct {
	store *Store
	// Now returns the current time; tests replace it.
	Now func() time.Time
	// PasswordIterations is the PBKDF2-SHA256 cost of password hashes;
	// default 600,000 (OWASP's 2023 advice). Tests lower it.
	PasswordIterations int
}

// NewService returns a service over store.
func NewService(store *Store) *Service {
	return &Service{store: store, Now: time.Now, PasswordIterations: 600_000}
}

// Store returns the service's store.
func (s *Service) Store() *Store { return s.store }

func (s *Service) now() time.Time { return s.Now().UTC() }

// Register creates a user (AP2): a conditional create, so an existing
// username fails with singletable.ErrAlreadyExists and is never overwritten.
func (s *Service) Register(ctx context.Context, username, name, password string) (User, error) {
	if err := ValidUsername(username); err != nil {
		return User{}, err
	}
	name = strings.TrimSpace(name)
	if err := validName(name); err != nil {
		return User{}, err
	}
	if utf8.RuneCountInString(password) < 8 {
		return User{}, &InputError{"password", "must be at least 8 characters"}
	}
	hash, err := s.hashPassword(password)
	if err != nil {
		return User{}, err
	}
	now := s.now()
	u := User{Username: username, Name: name, PasswordHash: hash, CreatedAt: now, UpdatedAt: now}
	if _, err := s.store.Users.Create(ctx, u); err != nil {
		return User{}, fmt.Errorf("register %s: %w", username, err)
	}
	return u, nil
}

// GetUser reads a user by username (AP1).
func (s *Service) GetUser(ctx context.Context, username string) (User, error) {
	if err := ValidUsername(username); err != nil {
		return User{}, err
	}
	u, err := s.store.Users.Get(ctx, User{Username: username})
	if err != nil {
		return User{}, fmt.Errorf("user %s: %w", username, err)
	}
	return u, nil
}

// Authenticate checks a password (AP1, the login path).
func (s *Service) Authenticate(ctx context.Context, username, password string) (User, error) {
	if ValidUsername(username) != nil {
		return User{}, ErrBadCredentials
	}
	u, err := s.store.Users.Get(ctx, User{Username: username})
	if errors.Is(err, singletable.ErrNotFound) {
		return User{}, ErrBadCredentials
	}
	if err != nil {
		return User{}, err
	}
	if !checkPassword(u.PasswordHash, password) {
		return User{}, ErrBadCredentials
	}
	return u, nil
}

// UpdateProfile changes a user's display name (AP3). The item must exist:
// an unknown user is singletable.ErrNotFound, never an accidental upsert.
func (s *Service) UpdateProfile(ctx context.Context, username, name string) (User, error) {
	if err := ValidUsername(username); err != nil {
		return User{}, err
	}
	name = strings.TrimSpace(name)
	if err := validName(name); err != nil {
		return User{}, err
	}
	u, err := s.store.Users.Update(User{Username: username}).
		Set("Name", name).Set("UpdatedAt", s.now()).Run(ctx)
	if err != nil {
		return User{}, fmt.Errorf("user %s: %w", username, err)
	}
	return u, nil
}

// UserExists reports whether a user exists (AP4), reading only the
// Username attribute (a projection) rather than the whole profile.
func (s *Service) UserExists(ctx context.Context, username string) (bool, error) {
	if err := ValidUsername(username); err != nil {
		return false, err
	}
	_, err := s.store.Users.Get(ctx, User{Username: username}, func(o *singletable.ReadOptions) { o.Fields = []string{"Username"} })
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, singletable.ErrNotFound):
		return false, nil
	}
	return false, err
}

// allUsers is the AP5 query: every user, in username order. GSI1's USERS
// partition is write-sharded, so the library sends one Query per shard
// (USERS#shard_0…) and merges them by GSI1SK.
func allUsers(st *Store) *singletable.Query[User] {
	return st.Users.QueryIndex("GSI1", User{})
}

// ListUsers lists users in username order without a Scan (AP5). Users are
// spread over UserShards partitions of GSI1; a page reads up to limit users
// from every shard in parallel and merges them. That costs a little more
// per page than one partition would, and it means no partition ever takes
// every registration: the write-sharding pattern for a "list everything"
// index. The cursor is the library's: it holds every shard's position, is
// bound to this query and checksummed, so a cursor from another listing or
// an altered one is singletable.ErrInvalidCursor.
func (s *Service) ListUsers(ctx context.Context, limit int, cursor string) (singletable.Page[User], error) {
	limit, err := pageLimit(limit)
	if err != nil {
		return singletable.Page[User]{}, err
	}
	return allUsers(s.store).Limit(limit).After(cursor).Page(ctx)
}

// SkillInput is what a caller gives to add or change a skill. Nil fields
// are left unchanged by UpdateSkill.
type SkillInput struct {
	Level    *string
	Years    *int
	LastUsed *time.Time
}

// AddSkill adds a skill to an existing user (AP8): a transaction of a
// condition check on the user's profile and a conditional create of the
// skill, so a skill can never be added to a user who does not exist. An
// unknown user is singletable.ErrNotFound; a skill the user already has is
// singletable.ErrAlreadyExists.
func (s *Service) AddSkill(ctx context.Context, username, skillName string, in SkillInput) (UserSkill, error) {
	if err := ValidUsername(username); err != nil {
		return UserSkill{}, err
	}
	skillName, err := NormalizeSkill(skillName)
	if err != nil {
		return UserSkill{}, err
	}
	if in.Level == nil {
		return UserSkill{}, &InputError{"level", "is required (one of " + strings.Join(Levels, ", ") + ")"}
	}
	sk := UserSkill{Username: username, SkillName: skillName}
	if err := s.applySkillInput(&sk, in); err != nil {
		return UserSkill{}, err
	}
	now := s.now()
	if sk.LastUsed.IsZero() {
		sk.LastUsed = Day(now)
	}
	sk.CreatedAt, sk.UpdatedAt = now, now
	// One transaction: the user's profile exists and the skill is new.
	err = singletable.Tx(ctx, []singletable.WriteOp{
		s.store.Users.CheckOp(User{Username: username}, expression.AttributeExists(expression.Name(s.store.Table.Options().PartitionKey))),
		s.store.Skills.CreateOp(sk),
	})
	var te *singletable.TransactionError
	if errors.As(err, &te) && te.Index == 0 {
		return UserSkill{}, fmt.Errorf("user %s: %w", username, singletable.ErrNotFound)
	}
	if err != nil {
		return UserSkill{}, fmt.Errorf("skill %s of %s: %w", skillName, username, err)
	}
	return sk, nil
}

func (s *Service) applySkillInput(sk *UserSkill, in SkillInput) error {
	if in.Level != nil {
		lvl, err := NormalizeLevel(*in.Level)
		if err != nil {
			return err
		}
		sk.Level = lvl
	}
	if in.Years != nil {
		if *in.Years < 0 || *in.Years > 80 {
			return &InputError{"years_of_experience", "must be between 0 and 80"}
		}
		sk.Years = *in.Years
	}
	if in.LastUsed != nil {
		if in.LastUsed.After(s.now().Add(24 * time.Hour)) {
			return &InputError{"last_used_date", "is in the future"}
		}
		sk.LastUsed = Day(*in.LastUsed)
	}
	return nil
}

// Day returns the UTC day of t, at midnight: the value LastUsedDate holds.
// The attribute (and GSI2's key attribute) stores only the date, as the
// design's Go service writes it ("2024-03-01"), so the service cuts times
// to their day before it compares or stores them.
func Day(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// GetSkill reads one skill of a user (AP7).
func (s *Service) GetSkill(ctx context.Context, username, skillName string) (UserSkill, error) {
	if err := ValidUsername(username); err != nil {
		return UserSkill{}, err
	}
	skillName, err := NormalizeSkill(skillName)
	if err != nil {
		return UserSkill{}, err
	}
	sk, err := s.store.Skills.Get(ctx, UserSkill{Username: username, SkillName: skillName})
	if err != nil {
		return UserSkill{}, fmt.Errorf("skill %s of %s: %w", skillName, username, err)
	}
	return sk, nil
}

// skillsOf is the AP6 query: the user's skills, in skill-name order.
func skillsOf(st *Store, username string) *singletable.Query[UserSkill] {
	return st.Skills.Query(UserSkill{Username: username})
}

// ListSkills returns a page of a user's skills (AP6). An unknown user is
// singletable.ErrNotFound (checked only when the page is empty, so the
// usual case costs one request).
func (s *Service) ListSkills(ctx context.Context, username string, limit int, cursor string) (singletable.Page[UserSkill], error) {
	if err := ValidUsername(username); err != nil {
		return singletable.Page[UserSkill]{}, err
	}
	limit, err := pageLimit(limit)
	if err != nil {
		return singletable.Page[UserSkill]{}, err
	}
	page, err := skillsOf(s.store, username).Limit(limit).After(cursor).Page(ctx)
	if err != nil {
		return page, err
	}
	if len(page.Items) == 0 && cursor == "" {
		ok, err := s.UserExists(ctx, username)
		if err != nil {
			return page, err
		}
		if !ok {
			return page, fmt.Errorf("user %s: %w", username, singletable.ErrNotFound)
		}
	}
	return page, nil
}

// Profile is a user with all their skills (AP13).
type Profile struct {
	User   User
	Skills []UserSkill
}

// profileCollection is the AP13 read: the whole USER#<username> item
// collection, the profile and every skill, in one Query.
func profileCollection(st *Store, username string) *singletable.Collection {
	return st.Users.QueryCollection(User{Username: username})
}

// GetProfile reads a user and all their skills with one Query over the
// user's item collection (AP13): the profile (SK PROFILE) and the skills
// (SK SKILL#…) share the partition USER#<username>, and each item is
// decoded by its entity type.
func (s *Service) GetProfile(ctx context.Context, username string) (Profile, error) {
	if err := ValidUsername(username); err != nil {
		return Profile{}, err
	}
	var p Profile
	profile := s.store.Users.StoreOne(&p.User)
	if _, err := profileCollection(s.store, username).Collect(ctx, profile, s.store.Skills.AppendTo(&p.Skills)); err != nil {
		return Profile{}, fmt.Errorf("user %s: %w", username, err)
	}
	if profile.Count() == 0 {
		return Profile{}, fmt.Errorf("user %s: %w", username, singletable.ErrNotFound)
	}
	return p, nil
}

// UpdateSkill changes a skill's level, years or last-used date (AP9). GSI1
// and GSI2 keys follow in the same request: the library recomputes every
// index key a changed field feeds.
func (s *Service) UpdateSkill(ctx context.Context, username, skillName string, in SkillInput) (UserSkill, error) {
	if err := ValidUsername(username); err != nil {
		return UserSkill{}, err
	}
	skillName, err := NormalizeSkill(skillName)
	if err != nil {
		return UserSkill{}, err
	}
	if in.Level == nil && in.Years == nil && in.LastUsed == nil {
		return UserSkill{}, &InputError{"body", "give at least one of level, years_of_experience, last_used_date"}
	}
	var v UserSkill
	if err := s.applySkillInput(&v, in); err != nil {
		return UserSkill{}, err
	}
	u := s.store.Skills.Update(UserSkill{Username: username, SkillName: skillName}).Set("UpdatedAt", s.now())
	if in.Level != nil {
		u = u.Set("Level", v.Level)
	}
	if in.Years != nil {
		u = u.Set("Years", v.Years)
	}
	if in.LastUsed != nil {
		u = u.Set("LastUsed", v.LastUsed)
	}
	sk, err := u.Run(ctx)
	if err != nil {
		return UserSkill{}, fmt.Errorf("skill %s of %s: %w", skillName, username, err)
	}
	return sk, nil
}

// Endorse adds one endorsement to a skill: an atomic ADD, so concurrent
// endorsements are never lost.
func (s *Service) Endorse(ctx context.Context, username, skillName string) (UserSkill, error) {
	if err := ValidUsername(username); err != nil {
		return UserSkill{}, err
	}
	skillName, err := NormalizeSkill(skillName)
	if err != nil {
		return UserSkill{}, err
	}
	sk, err := s.store.Skills.Update(UserSkill{Username: username, SkillName: skillName}).Add("Endorsements", 1).Run(ctx)
	if err != nil {
		return UserSkill{}, fmt.Errorf("skill %s of %s: %w", skillName, username, err)
	}
	return sk, nil
}

// RemoveSkill deletes a skill (AP10) and returns it as it was.
func (s *Service) RemoveSkill(ctx context.Context, username, skillName string) (UserSkill, error) {
	if err := ValidUsername(username); err != nil {
		return UserSkill{}, err
	}
	skillName, err := NormalizeSkill(skillName)
	if err != nil {
		return UserSkill{}, err
	}
	old, err := s.store.Skills.Delete(ctx, UserSkill{Username: username, SkillName: skillName})
	if err != nil {
		return UserSkill{}, fmt.Errorf("skill %s of %s: %w", skillName, username, err)
	}
	return old, nil
}

// SkillSearch asks for the users who have a skill. Level, MinYears, Years
// and UsedSince are optional and choose the index:
//
//   - SkillName only: GSI1, GSI1PK = SKILL#<skill> (AP11), ordered by level
//     then username;
//   - with Level: GSI1, GSI1SK begins_with LEVEL#<level># (AP12);
//   - with Level and MinYears: GSI2, SkillName = s AND ProficiencyLevel = l
//     AND YearsOfExperience >= n, ordered by years then last use;
//   - with Level, Years and optionally UsedSince: GSI2 with
//     YearsOfExperience = n AND LastUsedDate >= d.
//
// A multi-attribute key takes equality on every partition attribute and a
// range only on its last sort attribute, so MinYears with UsedSince, or
// years without a level, cannot be one key condition and are refused.
type SkillSearch struct {
	SkillName string
	Level     string
	MinYears  *int
	Years     *int
	UsedSince *time.Time
	Limit     int
	Cursor    string
}

// usersWithSkill is AP11; usersWithSkillAt is AP12.
func usersWithSkill(st *Store, skill string) *singletable.Query[UserSkill] {
	return st.Skills.QueryIndex("GSI1", UserSkill{SkillName: skill})
}

func usersWithSkillAt(st *Store, skill, level string) *singletable.Query[UserSkill] {
	return st.Skills.QueryIndex("GSI1", UserSkill{SkillName: skill}).Where("Level", singletable.Eq, level)
}

// skillExperience and skillRecency are the GSI2 queries.
func skillExperience(st *Store, skill, level string, minYears int) *singletable.Query[UserSkill] {
	return st.Skills.QueryIndex("GSI2", UserSkill{SkillName: skill, Level: level}).Where("Years", singletable.Ge, minYears)
}

func skillRecency(st *Store, skill, level string, years int, since time.Time) *singletable.Query[UserSkill] {
	return st.Skills.QueryIndex("GSI2", UserSkill{SkillName: skill, Level: level, Years: years}).
		Where("LastUsed", singletable.Ge, since)
}

func skillYears(st *Store, skill, level string, years int) *singletable.Query[UserSkill] {
	return st.Skills.QueryIndex("GSI2", UserSkill{SkillName: skill, Level: level}).Where("Years", singletable.Eq, years)
}

// FindUsers runs a [SkillSearch] and returns one page.
func (s *Service) FindUsers(ctx context.Context, in SkillSearch) (singletable.Page[UserSkill], error) {
	var zero singletable.Page[UserSkill]
	skill, err := NormalizeSkill(in.SkillName)
	if err != nil {
		return zero, err
	}
	limit, err := pageLimit(in.Limit)
	if err != nil {
		return zero, err
	}
	level := ""
	if in.Level != "" {
		if level, err = NormalizeLevel(in.Level); err != nil {
			return zero, err
		}
	}
	var q *singletable.Query[UserSkill]
	switch {
	case (in.MinYears != nil || in.Years != nil || in.UsedSince != nil) && level == "":
		return zero, &InputError{"level", "is required with min_years, years or used_since (GSI2 needs equality on skill and level)"}
	case in.MinYears != nil && (in.Years != nil || in.UsedSince != nil):
		return zero, &InputError{"min_years", "cannot be combined with years or used_since: a key condition takes a range on its last attribute only"}
	case in.UsedSince != nil && in.Years == nil:
		return zero, &InputError{"used_since", "needs years (the sort key is years, then last use)"}
	case in.MinYears != nil:
		if *in.MinYears < 0 {
			return zero, &InputError{"min_years", "must not be negative"}
		}
		q = skillExperience(s.store, skill, level, *in.MinYears)
	case in.Years != nil && in.UsedSince != nil:
		q = skillRecency(s.store, skill, level, *in.Years, Day(*in.UsedSince))
	case in.Years != nil:
		q = skillYears(s.store, skill, level, *in.Years)
	case level != "":
		q = usersWithSkillAt(s.store, skill, level)
	default:
		q = usersWithSkill(s.store, skill)
	}
	return q.Limit(limit).After(in.Cursor).Page(ctx)
}

// ValidUsername checks a username: 3 to 32 characters, lower-case letters,
// digits, '_', '.', '-', starting with a letter or digit.
func ValidUsername(u string) error {
	if len(u) < 3 || len(u) > 32 {
		return &InputError{"username", "must be 3 to 32 characters"}
	}
	for i, r := range u {
		ok := r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || i > 0 && (r == '_' || r == '.' || r == '-')
		if !ok {
			return &InputError{"username", "may hold only a-z, 0-9, '_', '.', '-' and must start with a letter or digit"}
		}
	}
	return nil
}

func validName(name string) error {
	if name == "" || utf8.RuneCountInString(name) > 100 {
		return &InputError{"name", "must be 1 to 100 characters"}
	}
	return nil
}

// NormalizeSkill lower-cases and trims a skill name and checks it: 1 to 50
// characters, letters, digits, spaces and "+#.-_/". The name is written
// into its keys verbatim, as the design's Go service writes it
// ("SKILL#machine learning", "SKILL#c#"): it is always the last value of
// its keys, so a "#" in it cannot be taken for a delimiter, and "c#" and
// "c" are two keys.
func NormalizeSkill(name string) (string, error) {
	name = strings.ToLower(strings.TrimSpace(name))
	if name == "" || utf8.RuneCountInString(name) > 50 {
		return "", &InputError{"skill_name", "must be 1 to 50 characters"}
	}
	for _, r := range name {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && !strings.ContainsRune(" +#.-_/", r) {
			return "", &InputError{"skill_name", fmt.Sprintf("may not contain %q", r)}
		}
	}
	return name, nil
}

// NormalizeLevel returns the canonical spelling of a proficiency level,
// matched case-insensitively.
func NormalizeLevel(level string) (string, error) {
	for _, l := range Levels {
		if strings.EqualFold(l, strings.TrimSpace(level)) {
			return l, nil
		}
	}
	return "", &InputError{"level", "must be one of " + strings.Join(Levels, ", ")}
}

func pageLimit(limit int) (int, error) {
	switch {
	case limit == 0:
		return DefaultPageSize, nil
	case limit < 0 || limit > MaxPageSize:
		return 0, &InputError{"limit", "must be between 1 and " + strconv.Itoa(MaxPageSize)}
	}
	return limit, nil
}

func (s *Service) hashPassword(password string) (string, error) {
	return HashPassword(password, s.PasswordIterations)
}

// HashPassword hashes a password with PBKDF2-SHA256 and a random salt, in
// the form the service stores ("pbkdf2-sha256$<iterations>$<salt>$<key>").
// iterations <= 0 means 600,000.
func HashPassword(password string, iterations int) (string, error) {
	salt := make([]byte, 16)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	iter := iterations
	if iter <= 0 {
		iter = 600_000
	}
	key, err := pbkdf2.Key(sha256.New, password, salt, iter, 32)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("pbkdf2-sha256$%d$%s$%s", iter, hex.EncodeToString(salt), hex.EncodeToString(key)), nil
}

func checkPassword(stored, password string) bool {
	parts := strings.Split(stored, "$")
	if len(parts) != 4 || parts[0] != "pbkdf2-sha256" {
		return false
	}
	iter, err := strconv.Atoi(parts[1])
	if err != nil || iter <= 0 {
		return false
	}
	salt, err1 := hex.DecodeString(parts[2])
	want, err2 := hex.DecodeString(parts[3])
	if err1 != nil || err2 != nil {
		return false
	}
	got, err := pbkdf2.Key(sha256.New, password, salt, iter, len(want))
	return err == nil && subtle.ConstantTimeCompare(got, want) == 1
}
