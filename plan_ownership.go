package singletable

import (
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/expr"
	"github.com/singletable-go/singletable/internal/writeplan"
)

// ownership is the condition that the item under the key is as i expects:
// whatever else a write checks, it never replaces or removes an item of
// another entity that happens to share its primary key.
func (r *repo) ownership(i writeplan.Intent) writeplan.Condition {
	return r.e.ownershipOf(&r.t.opts, i)
}

// intent is what a Put or Delete with o expects under its key.
func (o *writeOptions) intent() writeplan.Intent {
	if o.MustExist {
		return writeplan.ExistingItem
	}
	return writeplan.AnyItem
}

// userCheck is the caller's condition c, empty when c is not set.
func userCheck(c expression.ConditionBuilder) writeplan.Condition {
	if !c.IsSet() {
		return writeplan.Condition{}
	}
	return writeplan.User(c)
}

// userCond is the update's condition (Update.If), empty when it has none.
func (u *updateSpec) userCond() writeplan.Condition {
	if u.cond == nil {
		return writeplan.Condition{}
	}
	return writeplan.User(*u.cond)
}

// buildCond writes cond, taking the ownership condition of an unguarded
// write ready-made; at holds the key attributes of the item it is evaluated
// on.
func (r *repo) buildCond(cond writeplan.Condition, at map[string]types.AttributeValue) (writeplan.CondExpr, error) {
	if cond.OnlyOwnership {
		if ce := r.e.writeSetFor(r.t).owned; ce.Text != nil {
			return ce, nil
		}
	}
	return buildCondition(cond, r.e.name, r.condNames(at))
}

// buildCondition writes c as a request's only expression, checked against
// DynamoDB's limits. names resolves the names of the caller's conditions;
// it may be nil only when there are none.
func buildCondition(c writeplan.Condition, entity string, names expr.Resolver) (writeplan.CondExpr, error) {
	ce, err := c.Build(names)
	if err != nil {
		return writeplan.CondExpr{}, condErr(entity, "bad condition", err)
	}
	if ce.Text == nil {
		return ce, nil
	}
	if err := checkExprLimits(entity, exprParts{kinds: []string{"condition"}, exprs: []*string{ce.Text},
		names: ce.Names, values: ce.Values}); err != nil {
		return writeplan.CondExpr{}, err
	}
	return ce, nil
}

// condErr wraps an error writing a caller's condition or filter as a
// *ValidationError of entity, unless it is one already.
func condErr(entity, reason string, err error) error {
	var ve *ValidationError
	if errors.As(err, &ve) {
		return err
	}
	return &ValidationError{Entity: entity, Reason: reason, Err: err}
}

// expectation is what one write's condition checks (writeplan.Expectation),
// with the root's errors for what its failure means.
type expectation struct {
	writeplan.Expectation
}

func (r *repo) expect(op string, i writeplan.Intent) expectation {
	return expectation{writeplan.Expectation{Op: op, Entity: r.e.name, TypeAttr: r.t.opts.EntityTypeAttr, Untyped: r.e.foreign.matchKeys, Intent: i}}
}

// failed is the error of a failed condition, given the item as it was
// (nil when there was none).
func (x *expectation) failed(old map[string]types.AttributeValue) error {
	return x.err(x.Failed(old))
}

// refuse reports, from the item the library read before writing, a write
// that cannot succeed, without sending it: nil when it may go on.
func (x *expectation) refuse(s *writeplan.Snapshot) error {
	return x.err(x.Refuse(s))
}

// err is the error of outcome o of the write.
func (x *expectation) err(o writeplan.Outcome) error {
	switch o {
	case writeplan.Proceed:
		return nil
	case writeplan.Raced:
		return raced(x.What())
	case writeplan.AlreadyExists:
		return wrapSentinel(ErrAlreadyExists, x.What(), nil)
	case writeplan.NotFound:
		return wrapSentinel(ErrNotFound, x.What(), nil)
	case writeplan.OtherEntity:
		return wrapSentinel(ErrConditionFailed, x.What()+": the item under this key is another entity's", nil)
	case writeplan.VersionConflict:
		return wrapSentinel(ErrVersionConflict, fmt.Sprintf("%s: version %d was read", x.What(), x.Version), nil)
	}
	return wrapSentinel(ErrConditionFailed, x.What(), nil)
}
