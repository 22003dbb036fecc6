// Package benchfix holds the struct the codec benchmarks share, a sample of
// it, and the hand-written conversions the codec is measured against.
package benchfix

import (
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Profile is a ~15-attribute entity: strings, integers, a float, a bool,
// times, a string slice, a map and a pointer. The dynamo tags name the same
// attributes for guregu/dynamo.
type Profile struct {
	Username     string            `dynamodbav:"Username" dynamo:"Username"`
	SkillName    string            `dynamodbav:"SkillName" dynamo:"SkillName"`
	Level        string            `dynamodbav:"ProficiencyLevel" dynamo:"ProficiencyLevel"`
	Email        string            `dynamodbav:"Email" dynamo:"Email"`
	Bio          string            `dynamodbav:"Bio" dynamo:"Bio"`
	Years        int               `dynamodbav:"YearsOfExperience" dynamo:"YearsOfExperience"`
	Endorsements int64             `dynamodbav:"Endorsements" dynamo:"Endorsements"`
	Rank         int32             `dynamodbav:"Rank" dynamo:"Rank"`
	Score        float64           `dynamodbav:"Score" dynamo:"Score"`
	Verified     bool              `dynamodbav:"Verified" dynamo:"Verified"`
	LastUsed     time.Time         `dynamodbav:"LastUsedDate" dynamo:"LastUsedDate"`
	Created      time.Time         `dynamodbav:"Created" dynamo:"Created"`
	Tags         []string          `dynamodbav:"Tags" dynamo:"Tags"`
	Attrs        map[string]string `dynamodbav:"Attrs" dynamo:"Attrs"`
	Manager      *string           `dynamodbav:"Manager" dynamo:"Manager"`
}

// Sample returns the i-th sample profile.
func Sample(i int) Profile {
	mgr := fmt.Sprintf("manager-%d", i%7)
	return Profile{
		Username:     fmt.Sprintf("user-%05d", i),
		SkillName:    "golang",
		Level:        "Expert",
		Email:        fmt.Sprintf("user-%05d@example.com", i),
		Bio:          "Writes Go services and DynamoDB single-table designs for a living.",
		Years:        7 + i%10,
		Endorsements: 1234567 + int64(i),
		Rank:         int32(42 + i),
		Score:        97.125 + float64(i)/8,
		Verified:     i%2 == 0,
		LastUsed:     time.Date(2025, 3, 14, 15, 9, 26, 535897932, time.UTC).Add(time.Duration(i) * time.Hour),
		Created:      time.Date(2019, 1, 2, 3, 4, 5, 0, time.UTC),
		Tags:         []string{"backend", "aws", "dynamodb"},
		Attrs:        map[string]string{"team": "platform", "site": "remote"},
		Manager:      &mgr,
	}
}

// HandEncode converts p to exactly the item attributevalue.MarshalMap makes,
// written out by hand: the baseline a codec is measured against.
func HandEncode(p *Profile) map[string]types.AttributeValue {
	tags := make([]types.AttributeValue, len(p.Tags))
	for i, t := range p.Tags {
		tags[i] = &types.AttributeValueMemberS{Value: t}
	}
	attrs := make(map[string]types.AttributeValue, len(p.Attrs))
	for k, v := range p.Attrs {
		attrs[k] = &types.AttributeValueMemberS{Value: v}
	}
	var mgr types.AttributeValue = &types.AttributeValueMemberNULL{Value: true}
	if p.Manager != nil {
		mgr = &types.AttributeValueMemberS{Value: *p.Manager}
	}
	var tagsAV types.AttributeValue = &types.AttributeValueMemberNULL{Value: true}
	if p.Tags != nil {
		tagsAV = &types.AttributeValueMemberL{Value: tags}
	}
	var attrsAV types.AttributeValue = &types.AttributeValueMemberNULL{Value: true}
	if p.Attrs != nil {
		attrsAV = &types.AttributeValueMemberM{Value: attrs}
	}
	return map[string]types.AttributeValue{
		"Username":          &types.AttributeValueMemberS{Value: p.Username},
		"SkillName":         &types.AttributeValueMemberS{Value: p.SkillName},
		"ProficiencyLevel":  &types.AttributeValueMemberS{Value: p.Level},
		"Email":             &types.AttributeValueMemberS{Value: p.Email},
		"Bio":               &types.AttributeValueMemberS{Value: p.Bio},
		"YearsOfExperience": &types.AttributeValueMemberN{Value: strconv.Itoa(p.Years)},
		"Endorsements":      &types.AttributeValueMemberN{Value: strconv.FormatInt(p.Endorsements, 10)},
		"Rank":              &types.AttributeValueMemberN{Value: strconv.FormatInt(int64(p.Rank), 10)},
		"Score":             &types.AttributeValueMemberN{Value: strconv.FormatFloat(p.Score, 'f', -1, 64)},
		"Verified":          &types.AttributeValueMemberBOOL{Value: p.Verified},
		"LastUsedDate":      &types.AttributeValueMemberS{Value: p.LastUsed.Format(time.RFC3339Nano)},
		"Created":           &types.AttributeValueMemberS{Value: p.Created.Format(time.RFC3339Nano)},
		"Tags":              tagsAV,
		"Attrs":             attrsAV,
		"Manager":           mgr,
	}
}

// HandDecode converts an item made by HandEncode back, written out by hand
// (reading only what it needs, with type checks).
func HandDecode(item map[string]types.AttributeValue, p *Profile) error {
	str := func(name string) (string, error) {
		switch v := item[name].(type) {
		case *types.AttributeValueMemberS:
			return v.Value, nil
		case nil, *types.AttributeValueMemberNULL:
			return "", nil
		}
		return "", fmt.Errorf("%s: not a string", name)
	}
	num := func(name string) (string, error) {
		switch v := item[name].(type) {
		case *types.AttributeValueMemberN:
			return v.Value, nil
		case nil, *types.AttributeValueMemberNULL:
			return "0", nil
		}
		return "", fmt.Errorf("%s: not a number", name)
	}
	var err error
	if p.Username, err = str("Username"); err != nil {
		return err
	}
	if p.SkillName, err = str("SkillName"); err != nil {
		return err
	}
	if p.Level, err = str("ProficiencyLevel"); err != nil {
		return err
	}
	if p.Email, err = str("Email"); err != nil {
		return err
	}
	if p.Bio, err = str("Bio"); err != nil {
		return err
	}
	n, err := num("YearsOfExperience")
	if err != nil {
		return err
	}
	if p.Years, err = strconv.Atoi(n); err != nil {
		return err
	}
	if n, err = num("Endorsements"); err != nil {
		return err
	}
	if p.Endorsements, err = strconv.ParseInt(n, 10, 64); err != nil {
		return err
	}
	if n, err = num("Rank"); err != nil {
		return err
	}
	r, err := strconv.ParseInt(n, 10, 32)
	if err != nil {
		return err
	}
	p.Rank = int32(r)
	if n, err = num("Score"); err != nil {
		return err
	}
	if p.Score, err = strconv.ParseFloat(n, 64); err != nil {
		return err
	}
	if b, ok := item["Verified"].(*types.AttributeValueMemberBOOL); ok {
		p.Verified = b.Value
	}
	tm := func(name string, dst *time.Time) error {
		s, err := str(name)
		if err != nil || s == "" {
			return err
		}
		*dst, err = time.Parse(time.RFC3339, s)
		return err
	}
	if err := tm("LastUsedDate", &p.LastUsed); err != nil {
		return err
	}
	if err := tm("Created", &p.Created); err != nil {
		return err
	}
	if l, ok := item["Tags"].(*types.AttributeValueMemberL); ok {
		p.Tags = make([]string, len(l.Value))
		for i, e := range l.Value {
			s, ok := e.(*types.AttributeValueMemberS)
			if !ok {
				return fmt.Errorf("an element of Tags is not a string")
			}
			p.Tags[i] = s.Value
		}
	}
	if m, ok := item["Attrs"].(*types.AttributeValueMemberM); ok {
		p.Attrs = make(map[string]string, len(m.Value))
		for k, e := range m.Value {
			s, ok := e.(*types.AttributeValueMemberS)
			if !ok {
				return fmt.Errorf("a value of Attrs is not a string")
			}
			p.Attrs[k] = s.Value
		}
	}
	if s, ok := item["Manager"].(*types.AttributeValueMemberS); ok {
		v := s.Value
		p.Manager = &v
	}
	return nil
}

// AddKeys adds to item, p's, the keys and the entity type the benchmarks'
// Profile schema writes (PK USER#{Username}, SK SKILL#{SkillName}, GSI1
// SKILL#{SkillName} and LEVEL#{Level}#USER#{Username}).
func AddKeys(item map[string]types.AttributeValue, p *Profile) {
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	item["PK"] = s("USER#" + p.Username)
	item["SK"] = s("SKILL#" + p.SkillName)
	item["EntityType"] = s("Profile")
	item["GSI1PK"] = s("SKILL#" + p.SkillName)
	item["GSI1SK"] = s("LEVEL#" + p.Level + "#USER#" + p.Username)
}
