package ddblocal

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
)

// EndpointEnv names the environment variable that points Start and Run at an
// already running DynamoDB Local instead of starting one.
const EndpointEnv = "DYNAMODB_ENDPOINT"

// DefaultStartTimeout bounds how long Start waits for the server to answer,
// unless Options.StartTimeout or the environment variable named by
// StartTimeoutEnv (a Go duration such as "5m") says otherwise. A JVM on a
// busy 2-core machine has been seen to need over a minute.
const DefaultStartTimeout = 3 * time.Minute

// ReuseTimeout bounds how long Start waits for a server named by
// DYNAMODB_ENDPOINT to answer (unless Options.StartTimeout or
// StartTimeoutEnv says otherwise): such a server is already running, so a
// wrong address fails in seconds, not after a JVM's start-up allowance.
const ReuseTimeout = 10 * time.Second

// StartTimeoutEnv names the environment variable that overrides
// DefaultStartTimeout.
const StartTimeoutEnv = "DDBLOCAL_START_TIMEOUT"

// Options configure Start. The zero value is ready to use.
type Options struct {
	// Port to listen on; 0 picks a free one.
	Port int
	// Dir holds (or will hold) DynamoDBLocal.jar; "" means DefaultDir().
	Dir string
	// Java is the java executable; "" means $JAVA_HOME/bin/java if it exists,
	// else "java" from PATH.
	Java string
	// JavaArgs are extra JVM arguments, e.g. "-Xmx2g", put before -jar.
	JavaArgs []string
	// Args are extra DynamoDB Local arguments, e.g. "-delayTransientStatuses".
	Args []string
	// StartTimeout bounds the wait for the server to answer; 0 means
	// DefaultStartTimeout. Installing is bounded by ctx only.
	StartTimeout time.Duration
	// Output, if set, receives a copy of the server's stdout and stderr.
	Output io.Writer
	// IgnoreEnv makes Start launch a server even when DYNAMODB_ENDPOINT is set.
	IgnoreEnv bool
}

// Server is a running DynamoDB Local, started by Start or reused from
// DYNAMODB_ENDPOINT.
type Server struct {
	endpoint string
	reused   bool

	cmd     *exec.Cmd
	out     *tailBuffer
	done    chan struct{} // closed when the process has exited
	waitErr error         // set before done is closed

	mu      sync.Mutex
	stopped bool
	stopErr error
}

// Start returns a running DynamoDB Local.
//
// If DYNAMODB_ENDPOINT is set (and opts.IgnoreEnv is not), Start checks that
// the server there answers and returns it; its Stop does nothing. Otherwise
// Start installs DynamoDB Local if needed (see Install), runs
//
//	java -Djava.library.path=DIR/DynamoDBLocal_lib -jar DIR/DynamoDBLocal.jar -inMemory -sharedDb -disableTelemetry -port P
//
// and waits until it answers ListTables. -sharedDb makes every client see the
// same tables whatever its credentials and region. On Linux the server is
// killed when the calling process dies, so a crashed or interrupted test
// binary does not leave it behind.
func Start(ctx context.Context, opts Options) (*Server, error) {
	timeout := opts.StartTimeout
	if d, err := time.ParseDuration(os.Getenv(StartTimeoutEnv)); timeout <= 0 && err == nil && d > 0 {
		timeout = d
	}
	ep := os.Getenv(EndpointEnv)
	reuse := ep != "" && !opts.IgnoreEnv
	switch {
	case timeout > 0:
	case reuse:
		timeout = ReuseTimeout
	default:
		timeout = DefaultStartTimeout
	}
	if reuse {
		s := &Server{endpoint: strings.TrimRight(ep, "/"), reused: true, done: make(chan struct{})}
		if err := waitReady(ctx, s.endpoint, timeout, nil); err != nil {
			return nil, fmt.Errorf("ddblocal: %s=%s does not answer: %w", EndpointEnv, ep, err)
		}
		return s, nil
	}

	java, err := findJava(opts.Java)
	if err != nil {
		return nil, err
	}
	dir := opts.Dir
	if dir == "" {
		dir = DefaultDir()
	}
	if err := Install(ctx, dir); err != nil {
		return nil, err
	}

	attempts := 1
	if opts.Port == 0 {
		attempts = 3 // a picked port can be taken before java binds it
	}
	for i := 1; ; i++ {
		port := opts.Port
		if port == 0 {
			if port, err = freePort(); err != nil {
				return nil, fmt.Errorf("ddblocal: pick a free port: %w", err)
			}
		} else if err := checkPortFree(port); err != nil {
			// Checked first: polling would otherwise find whatever already
			// answers there and take it for the new server.
			return nil, fmt.Errorf("ddblocal: port %d is in use: %w", port, err)
		}
		s, err := launch(ctx, java, dir, port, timeout, opts)
		if err == nil {
			return s, nil
		}
		if i >= attempts || !errors.Is(err, errBind) {
			return nil, err
		}
	}
}

var errBind = errors.New("port already in use")

func launch(ctx context.Context, java, dir string, port int, timeout time.Duration, opts Options) (*Server, error) {
	args := append([]string{}, opts.JavaArgs...)
	args = append(args,
		"-Djava.library.path="+filepath.Join(dir, libName),
		"-jar", filepath.Join(dir, jarName),
		"-inMemory", "-sharedDb", "-disableTelemetry",
		"-port", strconv.Itoa(port),
	)
	args = append(args, opts.Args...)
	cmd := exec.Command(java, args...)
	cmd.Dir = dir
	s := &Server{
		endpoint: "http://127.0.0.1:" + strconv.Itoa(port),
		cmd:      cmd,
		out:      &tailBuffer{max: 64 << 10},
		done:     make(chan struct{}),
	}
	var w io.Writer = s.out
	if opts.Output != nil {
		w = io.MultiWriter(s.out, opts.Output)
	}
	cmd.Stdout = w
	cmd.Stderr = w
	if err := startProcess(cmd, func(err error) {
		s.waitErr = err
		close(s.done)
	}); err != nil {
		return nil, fmt.Errorf("ddblocal: start %s: %w", java, err)
	}
	if err := waitReady(ctx, s.endpoint, timeout, s.done); err != nil {
		select {
		case <-s.done:
			out := s.out.String()
			err = fmt.Errorf("ddblocal: DynamoDB Local exited before answering (%v); command: %s\noutput:\n%s",
				s.waitErr, strings.Join(cmd.Args, " "), lastLines(out, 30))
			if strings.Contains(out, "Failed to bind") || strings.Contains(out, "Address already in use") {
				err = fmt.Errorf("%w: %w", errBind, err)
			}
			return nil, err
		default:
		}
		_ = s.Stop()
		return nil, fmt.Errorf("ddblocal: DynamoDB Local on %s did not answer: %w; command: %s\noutput:\n%s",
			s.endpoint, err, strings.Join(cmd.Args, " "), lastLines(s.out.String(), 30))
	}
	return s, nil
}

// Endpoint returns the server's URL, e.g. "http://127.0.0.1:8000".
func (s *Server) Endpoint() string { return s.endpoint }

// Client returns a new client for the server; see NewClient.
func (s *Server) Client(optFns ...func(*dynamodb.Options)) *dynamodb.Client {
	return NewClient(s.endpoint, optFns...)
}

// StreamsClient returns a new DynamoDB Streams client for the server; see
// NewStreamsClient.
func (s *Server) StreamsClient(optFns ...func(*dynamodbstreams.Options)) *dynamodbstreams.Client {
	return NewStreamsClient(s.endpoint, optFns...)
}

// Done returns a channel closed when the server process exits. For a server
// reused from DYNAMODB_ENDPOINT it is never closed.
func (s *Server) Done() <-chan struct{} { return s.done }

// Output returns the last 64 KiB the server printed (empty for a reused one).
func (s *Server) Output() string {
	if s.out == nil {
		return ""
	}
	return s.out.String()
}

// Stop stops a server started by Start: SIGTERM (or its platform equivalent),
// then SIGKILL after 10 seconds, and waits for the process to exit. It returns
// an error if the server had died on its own before Stop. Stop is a no-op for
// a server reused from DYNAMODB_ENDPOINT and safe to call more than once.
func (s *Server) Stop() error {
	if s.reused {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return s.stopErr
	}
	s.stopped = true
	select {
	case <-s.done:
		s.stopErr = fmt.Errorf("ddblocal: DynamoDB Local on %s had exited on its own (%v); output:\n%s",
			s.endpoint, s.waitErr, lastLines(s.out.String(), 30))
		return s.stopErr
	default:
	}
	terminate(s.cmd)
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		kill(s.cmd)
		<-s.done
	}
	return nil
}

// waitReady polls ListTables on endpoint until it answers, timeout passes, ctx
// is done, or exited is closed.
func waitReady(ctx context.Context, endpoint string, timeout time.Duration, exited <-chan struct{}) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	client := NewClient(endpoint, func(o *dynamodb.Options) { o.RetryMaxAttempts = 1 })
	var lastErr error
	for {
		attemptCtx, cancelAttempt := context.WithTimeout(ctx, 2*time.Second)
		_, err := client.ListTables(attemptCtx, &dynamodb.ListTablesInput{Limit: aws.Int32(1)})
		cancelAttempt()
		if err == nil {
			return nil
		}
		lastErr = err
		select {
		case <-exited:
			return errors.New("process exited")
		case <-ctx.Done():
			return fmt.Errorf("%w (last error: %v)", ctx.Err(), lastErr)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// ErrUnavailable marks the errors of Start (and Install) that mean DynamoDB
// Local cannot run on this machine as it is: no Java, or DynamoDB Local not
// installed and no npm to fetch it. Shared skips a test for these unless
// RequireEnv is set. Test with errors.Is.
var ErrUnavailable = errors.New("DynamoDB Local is unavailable here")

func findJava(java string) (string, error) {
	if java == "" {
		if home := os.Getenv("JAVA_HOME"); home != "" {
			if p := filepath.Join(home, "bin", "java"); isExecutable(p) {
				return p, nil
			}
		}
		java = "java"
	}
	p, err := exec.LookPath(java)
	if err != nil {
		return "", fmt.Errorf("ddblocal: %w: java not found (%v): DynamoDB Local %s needs Java 17 or later; "+
			"install it (`make deps`, or on Debian/Ubuntu: apt-get install openjdk-17-jre-headless) "+
			"or point %s at an already running DynamoDB Local", ErrUnavailable, err, Version, EndpointEnv)
	}
	return p, nil
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// freePort returns a port free on all interfaces, as DynamoDB Local binds
// 0.0.0.0.
func freePort() (int, error) {
	l, err := net.Listen("tcp", ":0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func checkPortFree(port int) error {
	l, err := net.Listen("tcp", ":"+strconv.Itoa(port))
	if err != nil {
		return err
	}
	return l.Close()
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - b.max; over > 0 {
		b.buf = append(b.buf[:0], b.buf[over:]...)
	}
	return len(p), nil
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}
