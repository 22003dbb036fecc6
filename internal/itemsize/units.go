package itemsize

import "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

// WriteUnits is the write capacity a put of item consumes: one unit per
// started kilobyte (at least one).
func WriteUnits(item map[string]types.AttributeValue) int64 {
	return max(1, int64((Of(item)+1023)/1024))
}
