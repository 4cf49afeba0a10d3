// Command devstore runs a MongoDB-compatible development server (FerretDB on SQLite)
// so that seqd can be run and tested on a machine without mongod.
//
// It lives in its own module so that the seqd module does not depend on FerretDB.
//
//	devstore -listen 127.0.0.1:27017 -dir ./data
//
// It prints "listening on ADDR" to stdout once the server accepts connections and
// stops cleanly on SIGINT or SIGTERM.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/FerretDB/FerretDB/ferretdb"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "devstore:", err)
		}
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("devstore", flag.ContinueOnError)
	listen := fs.String("listen", "127.0.0.1:27017", "TCP address to listen on (port 0 picks a free port)")
	dir := fs.String("dir", "data", "directory for the SQLite files")
	var level slog.Level
	fs.TextVar(&level, "log-level", slog.LevelWarn, "FerretDB's log level: debug, info, warn or error (on stderr)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	abs, err := filepath.Abs(*dir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return err
	}
	addr := *listen
	if _, port, err := net.SplitHostPort(addr); err == nil && port == "0" {
		// FerretDB reports no bound address, so pick a free port here.
		l, err := net.Listen("tcp", addr)
		if err != nil {
			return err
		}
		addr = l.Addr().String()
		l.Close()
	}

	f, err := ferretdb.New(&ferretdb.Config{
		Listener:  ferretdb.ListenerConfig{TCP: addr},
		Logger:    slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level})),
		Handler:   "sqlite",
		SQLiteURL: "file:" + abs + "/",
	})
	if err != nil {
		return err
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f.Run(ctx)
	}()
	if err := waitListening(ctx, addr, done); err != nil {
		return err
	}
	fmt.Printf("listening on %s\n", addr)
	<-done
	return nil
}

// waitListening returns once addr accepts TCP connections.
func waitListening(ctx context.Context, addr string, done <-chan struct{}) error {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-done:
			return fmt.Errorf("server stopped before listening on %s", addr)
		case <-tick.C:
		}
	}
}
