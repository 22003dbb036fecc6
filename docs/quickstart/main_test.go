package main

import (
	"os"
	"strings"
	"testing"

	"github.com/singletable-go/singletable/ddblocal"
)

func TestMain(m *testing.M) { os.Exit(ddblocal.Run(m)) }

func TestQuickStart(t *testing.T) {
	client := ddblocal.Shared(t).Client() // skips, with the reason, where DynamoDB Local cannot run
	var out strings.Builder
	if err := quickStart(t.Context(), client, ddblocal.TableName(t), &out); err != nil {
		t.Fatal(err)
	}
	want := "true\ncall mum <nil>\n2 call mum\n3 write docs\n"
	if out.String() != want {
		t.Errorf("quick start printed\n%s\nwant\n%s", out.String(), want)
	}
}
