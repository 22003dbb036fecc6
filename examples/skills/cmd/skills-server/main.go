// Command skills-server serves the skills API (the skills service) over HTTP.
//
//	go run ./examples/skills/cmd/skills-server -local            # DynamoDB Local, table created
//	DYNAMODB_ENDPOINT=http://127.0.0.1:8000 go run ./examples/skills/cmd/skills-server -create-table
//	go run ./examples/skills/cmd/skills-server -table glad-entities   # real AWS, default credentials
//
// With -local it starts DynamoDB Local through ddblocal (downloading it on
// first use) and stops it on exit. With DYNAMODB_ENDPOINT it talks to the
// server there. Otherwise it uses the AWS SDK's default configuration
// (environment, shared config, instance role).
//
// The service's migrations (the legacy users table → glad-entities), its
// catalog and drift check are run by the singletable command-line tool
// through the service's registration, cmd/singletable/examples/skills (a
// module of its own, so that this one carries no command-line
// dependencies; see docs/cli.md):
//
//	go run -C cmd/singletable ./examples/skills migrate status|run|verify [flags] [ID]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/singletable-go/singletable/ddblocal"
	"github.com/singletable-go/singletable/examples/skills"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "address to listen on")
	table := flag.String("table", skills.TableName, "DynamoDB table name")
	local := flag.Bool("local", false, "start DynamoDB Local and create the table")
	create := flag.Bool("create-table", false, "create the table from the declarations before serving")
	flag.Parse()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "skills-server takes no arguments, got %q (migrations: go run -C cmd/singletable ./examples/skills migrate)\n", flag.Args())
		os.Exit(2)
	}
	if err := run(log, *addr, *table, *local, *create); err != nil {
		log.Error("skills-server", "err", err)
		os.Exit(1)
	}
}

func awsClient(ctx context.Context) (*dynamodb.Client, error) {
	if ep := os.Getenv("DYNAMODB_ENDPOINT"); ep != "" {
		return ddblocal.NewClient(ep), nil
	}
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("load AWS config: %w", err)
	}
	return dynamodb.NewFromConfig(cfg), nil
}

func run(log *slog.Logger, addr, table string, local, create bool) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	var client *dynamodb.Client
	switch {
	case local:
		srv, err := ddblocal.Start(ctx, ddblocal.Options{})
		if err != nil {
			return err
		}
		defer srv.Stop()
		client = srv.Client()
		create = true
		log.Info("DynamoDB Local", "endpoint", srv.Endpoint())
	default:
		c, err := awsClient(ctx)
		if err != nil {
			return err
		}
		client = c
	}

	st := skills.NewStore(client, table)
	if create {
		if err := st.Table.CreateTable(ctx); err != nil {
			return err
		}
		log.Info("created table", "table", table)
	} else if err := st.Table.Check(ctx); err != nil {
		return fmt.Errorf("table %s does not match the declarations (run with -create-table on an empty account): %w", table, err)
	}

	hs := &http.Server{Addr: addr, Handler: skills.Handler(skills.NewService(st), log), ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- hs.ListenAndServe() }()
	log.Info("listening", "addr", addr, "table", table)
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := hs.Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
