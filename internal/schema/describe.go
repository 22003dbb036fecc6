package schema

import (
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/describe"
	"github.com/singletable-go/singletable/internal/keys"
	"github.com/singletable-go/singletable/internal/model"
)

// Physical describes index p as a table holds it: its key attributes with
// their types, and its projection without keys (the attributes a
// projection always holds: the table's and the index's keys).
func (p *Index) Physical(keys []string) describe.Index {
	proj := p.Proj.Without(keys...)
	ix := describe.Index{Name: p.Name, MultiAttribute: p.Multi, Projection: proj.Type, Include: proj.Attrs}
	if !p.Multi {
		ix.Partition = []describe.KeyAttribute{{Name: p.PKAttr, Type: types.ScalarAttributeTypeS}}
		if p.SKAttr != "" {
			ix.Sort = []describe.KeyAttribute{{Name: p.SKAttr, Type: types.ScalarAttributeTypeS}}
		}
		return ix
	}
	attrs := func(fs []*model.Field) (out []describe.KeyAttribute) {
		for _, f := range fs {
			st, _ := f.Scalar()
			out = append(out, describe.KeyAttribute{Name: f.Attr, Type: st})
		}
		return out
	}
	ix.Partition, ix.Sort = attrs(p.Partition), attrs(p.Sort)
	return ix
}

// DescribeFields describes fs, nil when there are none.
func DescribeFields(fs []*model.Field) []describe.Field {
	var out []describe.Field
	for _, f := range fs {
		d := describe.Field{Name: f.Name, Attr: f.Attr, TimeForm: f.Form.String()}
		if f.KeyOnly {
			d.Attr = "-"
		}
		out = append(out, d)
	}
	return out
}

// DescribeKey describes the key attribute attr rendered from template t.
func DescribeKey(attr string, t *keys.Template) describe.Key {
	d := describe.Key{Attr: attr, Template: t.Raw}
	for _, p := range t.Parts {
		d.Parts = append(d.Parts, describe.KeyPart{Literal: p.Literal, Field: p.Field, Format: p.Spec()})
	}
	return d
}
