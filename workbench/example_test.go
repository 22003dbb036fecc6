package workbench_test

import (
	"io"
	"os"
	"time"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/workbench"
)

type Note struct {
	Owner string `dynamodbav:"owner"`
	ID    string `dynamodbav:"id"`
	Text  string `dynamodbav:"text"`
}

var Notes = singletable.MustDefine(singletable.Schema[Note]{
	Type: "Note", PK: "USER#{Owner:raw}", SK: "NOTE#{ID:raw}",
})

// exportNotes writes the model of table, its notes' sample the one note
// given (docs/workbench.md shows it).
func exportNotes(table *singletable.Table, notes *singletable.Repo[Note], w io.Writer) error {
	m, err := workbench.Export(table, func(o *workbench.ExportOptions) {
		o.Date = time.Date(2025, 1, 15, 10, 30, 0, 0, time.UTC)
		o.Description = "Notes by user."
		o.Samples = []workbench.Sample{workbench.Samples(notes, Note{Owner: "ann", ID: "1", Text: "hello"})}
	})
	if err != nil {
		return err
	}
	return m.Write(w)
}

// Export a tiny model: one entity, one sample item.
func ExampleExport() {
	table := singletable.NewTable(nil, "notes")
	notes := singletable.MustBind(table, Notes)
	if err := exportNotes(table, notes, os.Stdout); err != nil {
		panic(err)
	}
	// Output:
	// {
	//   "ModelName": "notes",
	//   "ModelMetadata": {
	//     "Author": "",
	//     "DateCreated": "Jan 15, 2025, 10:30 AM",
	//     "DateLastModified": "Jan 15, 2025, 10:30 AM",
	//     "Description": "Notes by user.",
	//     "AWSService": "Amazon DynamoDB",
	//     "Version": "3.0"
	//   },
	//   "DataModel": [
	//     {
	//       "TableName": "notes",
	//       "KeyAttributes": {
	//         "PartitionKey": {
	//           "AttributeName": "PK",
	//           "AttributeType": "S"
	//         },
	//         "SortKey": {
	//           "AttributeName": "SK",
	//           "AttributeType": "S"
	//         }
	//       },
	//       "NonKeyAttributes": [
	//         {
	//           "AttributeName": "EntityType",
	//           "AttributeType": "S"
	//         },
	//         {
	//           "AttributeName": "owner",
	//           "AttributeType": "S"
	//         },
	//         {
	//           "AttributeName": "id",
	//           "AttributeType": "S"
	//         },
	//         {
	//           "AttributeName": "text",
	//           "AttributeType": "S"
	//         }
	//       ],
	//       "TableFacets": [
	//         {
	//           "FacetName": "Note",
	//           "KeyAttributeAlias": {
	//             "PartitionKeyAlias": "USER#{Owner:raw}",
	//             "SortKeyAlias": "NOTE#{ID:raw}"
	//           },
	//           "TableData": [
	//             {
	//               "EntityType": {
	//                 "S": "Note"
	//               },
	//               "PK": {
	//                 "S": "USER#ann"
	//               },
	//               "SK": {
	//                 "S": "NOTE#1"
	//               },
	//               "id": {
	//                 "S": "1"
	//               },
	//               "owner": {
	//                 "S": "ann"
	//               },
	//               "text": {
	//                 "S": "hello"
	//               }
	//             }
	//           ],
	//           "NonKeyAttributes": [
	//             "EntityType",
	//             "owner",
	//             "id",
	//             "text"
	//           ],
	//           "DataAccess": {
	//             "MySql": {}
	//           }
	//         }
	//       ],
	//       "DataAccess": {
	//         "MySql": {}
	//       },
	//       "BillingMode": "PAY_PER_REQUEST"
	//     }
	//   ]
	// }
}
