// Package workbench connects a table's declarations to NoSQL Workbench,
// the modelling tool DynamoDB users open to draw single-table designs.
//
// [Export] writes the Workbench data model of a table as its bound
// entities declare it (read through [singletable.Table.Describe]): the
// table's key, its global secondary indexes, and one facet per entity
// whose key aliases are the entity's key templates, with sample items
// rendered through the declarations from example values ([Samples]) or
// read from a table ([ScanItems]).
//
//	m, err := workbench.Export(table, func(o *workbench.ExportOptions) {
//		o.Samples = []workbench.Sample{workbench.Samples(users, User{Name: "ann"})}
//	})
//	err = m.Write(f)
//
// [Generate] goes the other way: from a model designed in Workbench, Go
// declarations, a struct per facet and a [singletable.Schema] whose key
// templates are inferred from the facet's sample items. What the samples
// leave open is said in a comment in the generated code.
//
// [Model] is the format as Go values; [Read] decodes one strictly and
// [Model.Validate] checks what Workbench needs to open it. See
// docs/workbench.md.
package workbench
