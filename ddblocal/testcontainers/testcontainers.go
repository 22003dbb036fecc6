// Package testcontainers runs DynamoDB Local in Docker with testcontainers-go's
// DynamoDB module, for teams whose tests already use testcontainers. It is
// opt-in and lives in its own Go module, so the Docker client and its
// dependencies stay out of the singletable library's go.mod:
//
//	go get github.com/singletable-go/singletable/ddblocal/testcontainers
//
// It hands out what package ddblocal does — an endpoint, clients made by
// [ddblocal.NewClient], and Stop — so code written against ddblocal works
// with either launcher. Import it under another name if you also import
// testcontainers-go itself:
//
//	import ddbtc "github.com/singletable-go/singletable/ddblocal/testcontainers"
//
//	func TestWithDocker(t *testing.T) {
//		srv := ddbtc.ForTest(t) // skips with the reason when there is no Docker
//		client := srv.Client()
//		// ...
//	}
//
// Without Docker, use package ddblocal, which runs DynamoDB Local with Java.
package testcontainers

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	tc "github.com/testcontainers/testcontainers-go"
	tcdynamodb "github.com/testcontainers/testcontainers-go/modules/dynamodb"

	"github.com/singletable-go/singletable/ddblocal"
)

// DefaultImage is the image Start runs unless Options.Image says otherwise:
// the DynamoDB Local version package ddblocal runs with Java.
const DefaultImage = "amazon/dynamodb-local:" + ddblocal.Version

// RequireEnv names the environment variable that makes ForTest fail, rather
// than skip, when there is no Docker engine. It is separate from
// ddblocal.RequireEnv because a CI machine may have Java but no Docker.
const RequireEnv = "SINGLETABLE_REQUIRE_DOCKER"

// Options configure Start. The zero value is ready to use.
type Options struct {
	// Image is the DynamoDB Local image; "" means DefaultImage.
	Image string
	// Customizers are extra testcontainers-go options (environment, labels,
	// log consumers, ...), applied after this package's.
	Customizers []tc.ContainerCustomizer
}

// Server is DynamoDB Local running in a container started by Start.
type Server struct {
	endpoint string
	ctr      *tcdynamodb.DynamoDBContainer
}

// Start runs DynamoDB Local in a new container (in memory, one database for
// every client, no telemetry) and waits until it answers. When no Docker
// engine answers, the error wraps ddblocal.ErrUnavailable. DYNAMODB_ENDPOINT
// is not consulted: use ddblocal for that.
func Start(ctx context.Context, opts Options) (*Server, error) {
	if err := dockerHealthy(ctx); err != nil {
		return nil, err
	}
	img := opts.Image
	if img == "" {
		img = DefaultImage
	}
	custom := []tc.ContainerCustomizer{
		tc.WithCmdArgs("-inMemory", "-sharedDb"),
		tcdynamodb.WithDisableTelemetry(),
	}
	custom = append(custom, opts.Customizers...)
	ctr, err := tcdynamodb.Run(ctx, img, custom...)
	if err != nil {
		if ctr != nil {
			_ = tc.TerminateContainer(ctr)
		}
		return nil, fmt.Errorf("ddblocal/testcontainers: start %s: %w", img, err)
	}
	hostPort, err := ctr.ConnectionString(ctx)
	if err != nil {
		_ = tc.TerminateContainer(ctr)
		return nil, fmt.Errorf("ddblocal/testcontainers: endpoint of %s: %w", img, err)
	}
	s := &Server{endpoint: "http://" + hostPort, ctr: ctr}
	// The module waits for the port; wait for DynamoDB Local to answer too.
	if err := s.waitReady(ctx, time.Minute); err != nil {
		_ = s.Stop()
		return nil, fmt.Errorf("ddblocal/testcontainers: %s at %s: %w", img, s.endpoint, err)
	}
	return s, nil
}

// ForTest starts a server for t and stops it when t ends. When there is no
// Docker engine it skips t with the reason, unless RequireEnv is set, in
// which case it fails t; any other failure fails t.
func ForTest(t testing.TB, optFns ...func(*Options)) *Server {
	t.Helper()
	var o Options
	for _, fn := range optFns {
		fn(&o)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // bounds an image pull
	defer cancel()
	s, err := Start(ctx, o)
	switch {
	case err == nil:
		t.Cleanup(func() {
			if err := s.Stop(); err != nil {
				t.Errorf("ddblocal/testcontainers: %v", err)
			}
		})
		return s
	case errors.Is(err, ddblocal.ErrUnavailable) && !required():
		t.Skipf("skipping, this test needs Docker: %v (set %s=1 to fail instead of skipping)", err, RequireEnv)
	default:
		t.Fatal(err)
	}
	return nil
}

func required() bool {
	switch os.Getenv(RequireEnv) {
	case "", "0", "false":
		return false
	}
	return true
}

// Endpoint returns the server's URL, e.g. "http://127.0.0.1:32768".
func (s *Server) Endpoint() string { return s.endpoint }

// Client returns a new client for the server; see ddblocal.NewClient.
func (s *Server) Client(optFns ...func(*dynamodb.Options)) *dynamodb.Client {
	return ddblocal.NewClient(s.endpoint, optFns...)
}

// Container returns the testcontainers-go container, for logs or exec.
func (s *Server) Container() *tcdynamodb.DynamoDBContainer { return s.ctr }

// Stop terminates and removes the container. It is safe to call more than
// once.
func (s *Server) Stop() error {
	if err := tc.TerminateContainer(s.ctr); err != nil {
		return fmt.Errorf("ddblocal/testcontainers: stop: %w", err)
	}
	return nil
}

// waitReady polls ListTables until the server answers or timeout passes.
func (s *Server) waitReady(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	c := s.Client(func(o *dynamodb.Options) { o.RetryMaxAttempts = 1 })
	for {
		_, err := c.ListTables(ctx, &dynamodb.ListTablesInput{Limit: aws.Int32(1)})
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("does not answer: %w", err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// dockerHealthy checks that a Docker engine answers, wrapping
// ddblocal.ErrUnavailable when none does. testcontainers-go panics in some
// set-ups without Docker, so a panic counts as no Docker too.
func dockerHealthy(ctx context.Context) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("ddblocal/testcontainers: %w: no Docker engine: %v", ddblocal.ErrUnavailable, r)
		}
	}()
	p, err := tc.ProviderDocker.GetProvider()
	if err == nil {
		err = p.Health(ctx)
	}
	if err != nil {
		msg := strings.TrimSpace(err.Error())
		return fmt.Errorf("ddblocal/testcontainers: %w: no Docker engine answers (%s); "+
			"start Docker, or use package ddblocal, which runs DynamoDB Local with Java", ddblocal.ErrUnavailable, msg)
	}
	return nil
}
