package singletable

// AnyEntity is an entity of any type: every *Entity[T] satisfies it, and
// only those do. Functions that take entities of several types accept it,
// such as BindAll and singletabletest.NewTable.
type AnyEntity interface {
	// Name returns the entity type name stored in every item.
	Name() string
	bindTo(t *Table) error
}

func (e *Entity[T]) bindTo(t *Table) error {
	_, err := Bind(t, e)
	return err
}

// BindAll binds entities to t, as Bind does each, for code that needs the
// table to know its entities but not their repositories: a tool that
// creates the table, or a test helper. It stops at the first error.
func BindAll(t *Table, entities ...AnyEntity) error {
	for _, e := range entities {
		if err := e.bindTo(t); err != nil {
			return err
		}
	}
	return nil
}
