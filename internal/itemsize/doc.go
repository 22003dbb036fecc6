// Package itemsize computes the size DynamoDB assigns to an item, so that an
// item over the 400 KB limit can be refused before it is sent (and a batch
// or transaction is not failed by one oversized member).
//
// # Rules
//
// The size of an item is the sum over its attributes of the attribute name's
// length in UTF-8 bytes plus the size of the value:
//
//   - S: its length in UTF-8 bytes. (Bytes that are not valid UTF-8 are sent
//     by the SDK as U+FFFD and so count 3 bytes each.)
//   - B: its raw length (not the base64 length).
//   - BOOL, NULL: 1 byte.
//   - N: see below.
//   - SS, NS, BS: the sum of the sizes of the elements, with no overhead.
//   - L: 3 bytes, plus for each element 1 byte and the element's size.
//   - M: 3 bytes, plus for each entry 1 byte, the key's UTF-8 length and the
//     value's size.
//
// These are the rules of the DynamoDB developer guide ("DynamoDB item sizes
// and formats"), except for numbers, which the guide only approximates as
// "1 byte per two significant digits, plus 1 byte", with leading and
// trailing zeros trimmed.
//
// Numbers are stored as base-100 digits aligned on the decimal point (as in
// 12|34.56|7 → 12 34 . 56 70): a number takes 1 byte, plus 1 byte for each
// base-100 digit from its most to its least significant non-zero one, plus
// 1 byte more when it is negative. Zero (also written -0, 0.00, 0e9) takes
// 1 byte. So 1, 99, 100 and 1e9 take 2 bytes, 101, 1.1, 0.012 and -1 take
// 3, a 38-digit integer takes 20 and its negation 21. This is never less
// than the guide's approximation: the alignment can only add a digit, and
// the guide leaves out the sign byte. (1.1 is 2 bytes by the guide and 3
// here; -12 is 2 by the guide and 3 here.) Of uses this rule, the stricter
// one, so that it never lets through an item that DynamoDB would reject.
//
// # Measurements
//
// Of was checked against DynamoDB Local 3.3.1 (dynamodb_local_2026-05-28),
// which the real service is taken to agree with:
//
//   - Exact sizes, read from the write capacity a PutItem consumed (the
//     1 KB boundary found by padding), for every type: empty and non-empty
//     S and B, multi-byte and invalid UTF-8, BOOL, NULL, SS, NS, BS, empty
//     and nested L and M, unicode attribute names and map keys, and 467
//     numbers (67 chosen cases and 400 random ones with signs, leading and
//     trailing zeros, decimal points and exponents from 1e-130 to 1e125).
//     All matched Of to the byte once numbers used the rule above. The
//     guide's number rule came out up to 2 bytes short per number (the sign
//     byte and the alignment digit), never over.
//   - The acceptance limit: for six item shapes (one large S; an NS of
//     19,000 38-digit numbers and 800 negative N attributes; an M/L document
//     25 levels deep with 12,500 small maps; B and BS; 4-byte characters in
//     an S with a unicode name; 20,000 BOOL attributes), each padded so that
//     Of is exactly 409,600 and 409,601: PutItem accepted every item of
//     409,600 bytes (400 WCU) and rejected every item of 409,601 with
//     "ValidationException: Item size has exceeded the maximum allowed
//     size". A binary search found the largest accepted Of to be 409,600 for
//     every shape. The limit is therefore MaxItemBytes = 400 × 1024 bytes,
//     inclusive, counting attribute names.
package itemsize
