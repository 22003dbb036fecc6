// Package codec is the library's compiled item codec: per Go struct type a
// plan, built once by reflection and cached, that converts a struct value to
// a DynamoDB item (map[string]types.AttributeValue) and back.
//
// # Contract
//
// The codec produces exactly the items attributevalue.MarshalMap produces
// and decodes exactly as attributevalue.UnmarshalMap does, with the default
// encoder and decoder options (feature/dynamodb/attributevalue v1.21.19): the
// same field resolution (dynamodbav tags, "-", embedded structs and pointer
// embeds, Go's visibility rules), the same tag options (omitempty,
// omitemptyelem, nullempty, nullemptyelem, string, stringset, numberset,
// binaryset, unixtime), the same treatment of nil (NULL or omitted), of
// time.Time (RFC3339Nano strings, unix seconds with unixtime), of sets, of
// []byte, of attributevalue.Marshaler and Unmarshaler, of map keys (including
// encoding.TextMarshaler keys) and of interfaces. It is checked by
// differential tests and a fuzz target against attributevalue itself.
//
// What the plans do not handle directly (arrays of bytes, channels,
// pointers to interfaces, named pointer types, a non-nil interface as a
// decoding target, …) is delegated, field by field, to attributevalue, so an
// exotic field never changes the item. A struct type attributevalue itself
// handles in a special way (it implements Marshaler or Unmarshaler, or has
// fields reached through unexported embedded pointers) is delegated whole.
// When encoding fails, the codec asks attributevalue again so that the error
// returned is attributevalue's own.
//
// # What DynamoDB would refuse
//
// The library's entry points ([Marshal], [MarshalSized], [Plan.EncodeAttr])
// also refuse, with an *InvalidError naming the attribute but never the
// value, items DynamoDB would refuse: numbers it cannot store (NaN, the
// infinities, more than 38 significant digits, magnitudes outside 1E-130
// to 9.99…E+125) and sets that are empty or repeat a member (number sets
// compared as numbers). MarshalSized reports invalid UTF-8, which the SDK
// would silently send as U+FFFD, and EncodeAttr refuses it. [Check] is the
// same check for a value made elsewhere (a condition's operand, say). The
// encoders note while encoding the few values that may be refused (floats
// out of range, sets, values from Marshalers and attributevalue) and only
// those are checked, so items without them cost nothing more. Plan.Encode
// and Plan.EncodeSized stay attributevalue's exact mirror.
//
// # Why
//
// attributevalue re-discovers on every call what a type looks like (method
// sets, tags, field lookups) and allocates for every value. A plan decides
// all that once; encoding then allocates the item map, one block for all
// its attribute values of a kind and one string for all its numbers and
// times, and decoding shares the item's strings instead of copying them.
package codec
