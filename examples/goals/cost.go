package goals

import "github.com/singletable-go/singletable/catalog"

// Workload is the traffic the goals service is planned for. The playbook
// gives no figures, so these are illustrative, picked to be plausible for
// a wellness app with 100,000 users and about 30,000 of them active on a
// day, each logging three meals and two or three activities and opening
// the dashboard a few times; they are averages over the day, in requests
// a second:
//
//   - users: 0.1 registrations (a profile of 0.5 KB, with its email
//     guard, in one transaction), 5 sign-ins by email (EmailIndex) and 50
//     dashboard loads, each reading a whole partition of about 40 items
//     of 0.5 KB (20 KB);
//   - goals (0.5 KB): 1 created, 5 got (LogActivity and SetGoalStatus get
//     the goal first), 10 lists of a user's goals (10 goals), 2 pages of
//     100 goals by status and 1 page of 20 since a time, 0.5 status
//     changes and 0.1 deletions. The goals of one status share one
//     EmailIndex partition (GOALS#ACTIVE), so the status queries are
//     checked against one partition's limits;
//   - meals (0.4 KB): 4 logged, 1 list of a user's meals (90), 10 date
//     ranges (a month: 90 meals) and 2 category lists (30); every meal is
//     counted in EmailIndex, an upper bound, as uncategorised meals are
//     not indexed;
//   - activities (0.3 KB): 3 logged, 10 lists of one day's (3), 1 list of
//     a user's (60) and 2 of a goal's (60, EmailIndex).
//
// Reads are eventually consistent, as the repository makes them. Index
// entries project the whole item. Storage: 100,000 profiles, 500,000
// goals, 9 million meals and 6 million activities.
//
// Two lines take the capacity DynamoDB Local reports for a request
// (Measured) instead of the estimate from item sizes, which does not know
// what these writes are charged. A registration (U1) is a transaction of
// the profile and its email guard: 4 table write units, and its EmailIndex
// write doubled like the table's, 2. A status change (G6) reads created_at
// first (1 strongly consistent read unit, the library's read for the
// index key), writes the goal (1 unit) and moves it to another
// GOALS#<status> partition of EmailIndex, a delete and a put there (2
// units). TestCostMeasured runs both against DynamoDB Local and checks
// these figures; the first read of SetGoalStatus, for the status, is
// counted in G2.
//
// docs/cost.md is the capacity and cost report of this workload.
func Workload() catalog.Workload {
	return catalog.Workload{
		Loads: []catalog.Load{
			{Pattern: "U1", PerSecond: 0.1, Measured: &catalog.Units{Write: 4, IndexWrite: map[string]float64{IndexName: 2}}},
			{Pattern: "U2", PerSecond: 5, ItemKB: 0.5},
			{Pattern: "U3", PerSecond: 50, ItemKB: 0.5, Items: 40},
			{Pattern: "G1", PerSecond: 1, ItemKB: 0.5},
			{Pattern: "G2", PerSecond: 5, ItemKB: 0.5},
			{Pattern: "G3", PerSecond: 10, ItemKB: 0.5, Items: 10},
			{Pattern: "G4", PerSecond: 2, ItemKB: 0.5, Items: 100, Partitions: 1},
			{Pattern: "G5", PerSecond: 1, ItemKB: 0.5, Items: 20, Partitions: 1},
			{Pattern: "G6", PerSecond: 0.5, Measured: &catalog.Units{Read: 1, Write: 1, IndexWrite: map[string]float64{IndexName: 2}}},
			{Pattern: "G7", PerSecond: 0.1, ItemKB: 0.5},
			{Pattern: "M1", PerSecond: 4, ItemKB: 0.4},
			{Pattern: "M2", PerSecond: 1, ItemKB: 0.4, Items: 90},
			{Pattern: "M3", PerSecond: 10, ItemKB: 0.4, Items: 90},
			{Pattern: "M4", PerSecond: 2, ItemKB: 0.4, Items: 30},
			{Pattern: "A1", PerSecond: 3, ItemKB: 0.3},
			{Pattern: "A2", PerSecond: 10, ItemKB: 0.3, Items: 3},
			{Pattern: "A3", PerSecond: 1, ItemKB: 0.3, Items: 60},
			{Pattern: "A4", PerSecond: 2, ItemKB: 0.3, Items: 60},
		},
		Storage: []catalog.Stored{
			{Entity: "UserProfile", Items: 100_000, ItemKB: 0.5},
			{Entity: "Goal", Items: 500_000, ItemKB: 0.5},
			{Entity: "Meal", Items: 9_000_000, ItemKB: 0.4},
			{Entity: "Activity", Items: 6_000_000, ItemKB: 0.3},
		},
	}
}
