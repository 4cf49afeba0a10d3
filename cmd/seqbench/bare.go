package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
	"go.mongodb.org/mongo-driver/v2/bson"
)

// newBareHandler is the anchor of figure 2: what an Echo user writes to hand out
// ObjectIds with the driver, idiomatically and without middleware.
func newBareHandler() http.Handler {
	e := echo.New()
	e.GET("/oid", func(c echo.Context) error {
		return c.JSON(http.StatusOK, map[string]string{"oid": bson.NewObjectID().Hex()})
	})
	return e
}

// serveBare serves newBareHandler on a free loopback port, says "listening on ADDR" on
// stdout, and serves until ctx is done (SIGTERM). Its http.Server has seqd's timeouts,
// so that the two servers differ in their handlers only.
func serveBare(ctx context.Context, stdout io.Writer) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           newBareHandler(),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      12 * time.Second,
		IdleTimeout:       2 * time.Minute,
	}
	defer context.AfterFunc(ctx, func() { srv.Close() })()
	fmt.Fprintln(stdout, "listening on", ln.Addr())
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
