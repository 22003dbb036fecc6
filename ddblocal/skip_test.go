package ddblocal_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/singletable-go/singletable/ddblocal"
)

// TestSharedWhereUnavailable is run by TestSharedSkipsUnlessRequired in a
// child process that has no Java; on its own it does nothing.
func TestSharedWhereUnavailable(t *testing.T) {
	if os.Getenv("DDBLOCAL_SKIP_CHILD") != "1" {
		t.Skip("runs only as TestSharedSkipsUnlessRequired's child process")
	}
	ddblocal.Shared(t)
	t.Error("Shared returned a server in a process without Java")
}

// Where DynamoDB Local cannot run (here: no java on PATH, no JAVA_HOME, no
// DYNAMODB_ENDPOINT), a test that asks for it is skipped with the reason
// and what to install, or fails with it when SINGLETABLE_REQUIRE_DYNAMODB
// is set; either way at once, without waiting for a start-up timeout.
func TestSharedSkipsUnlessRequired(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		require string
		want    string
	}{
		{"", "--- SKIP: TestSharedWhereUnavailable"},
		{"0", "--- SKIP: TestSharedWhereUnavailable"},
		{"1", "--- FAIL: TestSharedWhereUnavailable"},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestSharedWhereUnavailable$", "-test.v", "-test.count=1")
		var env []string
		for _, kv := range os.Environ() {
			switch k, _, _ := strings.Cut(kv, "="); k {
			case "PATH", "JAVA_HOME", ddblocal.EndpointEnv, ddblocal.RequireEnv, ddblocal.DirEnv:
			default:
				env = append(env, kv)
			}
		}
		cmd.Env = append(env,
			"DDBLOCAL_SKIP_CHILD=1",
			"PATH="+t.TempDir(), // no java, no npm
			ddblocal.DirEnv+"="+t.TempDir(),
			ddblocal.RequireEnv+"="+tc.require,
		)
		out, _ := cmd.CombinedOutput()
		got := string(out)
		if !strings.Contains(got, tc.want) {
			t.Errorf("%s=%q: child output lacks %q:\n%s", ddblocal.RequireEnv, tc.require, tc.want, got)
			continue
		}
		for _, must := range []string{"java not found", "make deps", ddblocal.EndpointEnv} {
			if !strings.Contains(got, must) {
				t.Errorf("%s=%q: the message does not mention %q:\n%s", ddblocal.RequireEnv, tc.require, must, got)
			}
		}
	}
}
