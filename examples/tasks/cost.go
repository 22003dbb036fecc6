package tasks

import "github.com/singletable-go/singletable/catalog"

// perDay turns a daily count into the request rate of a catalog.Load.
func perDay(n float64) float64 { return n / 86_400 }

// DesignPrices are the prices the design's capacity planning uses: on
// demand $0.25 per million read and $1.25 per million write request
// units (the list prices before the halving of November 2024; see
// catalog.USEast1), provisioned $0.00013 per read and $0.00065 per write
// capacity unit-hour, storage $0.25 per GB-month.
var DesignPrices = catalog.Prices{
	Region: "the design's", AsOf: "its capacity planning",
	ReadRequestUnit: 0.25, WriteRequestUnit: 1.25,
	ReadCapacityUnitHour: 0.00013, WriteCapacityUnitHour: 0.00065,
	StorageGBMonth: 0.25,
}

// Workload is the design's example day (100 users, 1,000 tasks: 500 task
// views, 100 task creations, 200 assignments, 300 status updates and 500
// "my tasks" queries of 5 tasks each) as the manager serves it. Every
// command first reads the acting user (P2: 600 a day), a status update
// also reads the task (P1: 300 more than the views), the status updates
// are members' (T3) and "my tasks" is a GSI1 query of the assignments
// (P4) followed by one BatchGetItem of the tasks (P4+). Item sizes are
// the design's "all items under 4 KB", taken as at most 1 KB for a task
// and 0.25 KB for a user or an assignment; the storage holds 1,000 tasks,
// 100 users and 500 assignments (5 tasks for each user).
//
// Reads and task creation are estimated from the sizes. The two
// transactions take the capacity DynamoDB Local reports for them
// (Measured), because the estimate from item sizes does not know what a
// transaction is charged: its index writes are doubled like its table
// writes, and a status change moves the task within GSI2 (a delete and a
// put there). An assignment (P7+: two condition checks and a put) takes 4
// table and 2 GSI1 write units, a member's status change (T3: two
// condition checks and the update) 4 table and 4 GSI2 write units.
// TestCostMeasured runs the day in miniature through the manager and
// checks every figure of this workload against what DynamoDB Local
// reports. docs/cost.md is the report of this workload.
func Workload() catalog.Workload {
	return catalog.Workload{
		Loads: []catalog.Load{
			{Pattern: "P1", PerSecond: perDay(500 + 300), ItemKB: 1},
			{Pattern: "P2", PerSecond: perDay(100 + 200 + 300), ItemKB: 0.25},
			{Pattern: "P4", PerSecond: perDay(500), ItemKB: 0.25, Items: 5},
			{Pattern: "P4+", PerSecond: perDay(500), ItemKB: 1, Items: 5},
			{Pattern: "T1", PerSecond: perDay(100), ItemKB: 1},
			{Pattern: "P7+", PerSecond: perDay(200), Measured: &catalog.Units{Write: 4, IndexWrite: map[string]float64{"GSI1": 2}}},
			{Pattern: "T3", PerSecond: perDay(300), Measured: &catalog.Units{Write: 4, IndexWrite: map[string]float64{"GSI2": 4}}},
		},
		Storage: []catalog.Stored{
			{Entity: "TASK", Items: 1_000, ItemKB: 1},
			{Entity: "USER", Items: 100, ItemKB: 0.25},
			{Entity: "ASSIGNMENT", Items: 500, ItemKB: 0.25},
		},
	}
}
