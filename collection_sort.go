package singletable

import (
	"errors"
	"reflect"
)

// SortCondition is a sort key condition for a [Collection]
// ([Collection.Where]), stated through the sort key of one member entity:
// its fields, its template, its types. A collection holds several
// entities whose sort keys have different shapes (PROFILE, SKILL#{Name});
// a condition made from one entity reads the range that entity's key
// shape and values describe, so it is as typed as [Query.Where] and needs
// no knowledge of the rendered keys.
//
// Make one with [Repo.SortWhere], [Repo.SortBetween],
// [Repo.SortBeginsWith] or [Repo.SortShape]. Mistakes (a field that is
// not in the sort key, a missing value) are reported by the collection's
// final call, before any request is sent.
type SortCondition struct {
	entity string
	table  *Table
	// render renders the condition on the sort key of the named index ("":
	// the table's): the key conditions after the partition's, and whether
	// the range is empty.
	render func(index string) ([]keyCond, bool, error)
}

// SortWhere is the sort condition of [Query.Where] on r's sort key: the
// named fields are the sort key's first fields, in order, their values
// taken from key; all but the last equal key's, the last is compared with
// op. users.Collection(User{Username: "john"}).Where(skills.SortWhere(Ge,
// UserSkill{SkillName: "p"}, "SkillName")) reads john's skills from "p" on.
func (r *Repo[T]) SortWhere(op SortOp, key T, fields ...string) SortCondition {
	return r.sortCondition(r.Query(key).Where(op, fields...))
}

// SortBetween is the sort condition of [Query.Between] on r's sort key:
// lo.last <= last <= hi.last for the final named field, the fields before
// it equal to lo's.
func (r *Repo[T]) SortBetween(lo, hi T, fields ...string) SortCondition {
	return r.sortCondition(r.Query(lo).Between(hi, fields...))
}

// SortBeginsWith is the sort condition of [Query.BeginsWith] on r's sort
// key: the final named field (a string) starts with prefix, the fields
// before it equal to key's.
func (r *Repo[T]) SortBeginsWith(key T, prefix string, fields ...string) SortCondition {
	return r.sortCondition(r.Query(key).BeginsWith(prefix, fields...))
}

// SortShape narrows a collection to the sort keys of r's shape: those
// starting with the constant text r's sort key template begins with (all
// of SKILL#{SkillName}'s, "SKILL#"), as a [Query] without a sort
// condition reads. A template starting with a field, or a multi-attribute
// index, has no shape to narrow to: the condition reads every sort key.
func (r *Repo[T]) SortShape() SortCondition {
	var zero T
	return r.sortCondition(r.Query(zero))
}

func (r *Repo[T]) sortCondition(q *Query[T]) SortCondition {
	return SortCondition{entity: r.e.name, table: r.t, render: func(index string) ([]keyCond, bool, error) {
		if len(q.errs) > 0 {
			return nil, false, errors.Join(q.errs...)
		}
		kv, hv := reflect.ValueOf(&q.key).Elem(), reflect.ValueOf(&q.hi).Elem()
		if index == "" {
			kc, empty, err := q.templatedSort(r.e.sk, r.t.opts.SortKey, kv, hv)
			return optCond(kc), empty, err
		}
		idx, err := r.e.index(index)
		if err != nil {
			return nil, false, err
		}
		qi := q.clone()
		qi.index = index
		if idx.multi {
			conds, err := qi.multiSort(idx, kv, hv)
			return conds, false, err
		}
		kc, empty, err := qi.templatedSort(idx.sk, idx.skAttr, kv, hv)
		return optCond(kc), empty, err
	}}
}

func optCond(c *keyCond) []keyCond {
	if c == nil {
		return nil
	}
	return []keyCond{*c}
}

// conds renders the condition for a collection of table t on index.
func (s *SortCondition) conds(t *Table, index string) ([]keyCond, bool, error) {
	if s.render == nil {
		return nil, false, validationErr("", "", "collection: zero SortCondition (make one with a Repo's SortWhere, SortBetween, SortBeginsWith or SortShape)")
	}
	if s.table != t {
		return nil, false, validationErr(s.entity, "", "collection: sort condition's repository is bound to table %s, the collection reads %s", s.table.name, t.name)
	}
	return s.render(index)
}
