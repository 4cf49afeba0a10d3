package client_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/http/httptest"

	"github.com/seqd/seqd"
	"github.com/seqd/seqd/blocks"
	"github.com/seqd/seqd/client"
	"github.com/seqd/seqd/counters"
	"github.com/seqd/seqd/httpapi"
	"github.com/seqd/seqd/internal/memseq"
)

// exampleSeqd stands in for a running seqd: its API over an in-memory store.
func exampleSeqd() *httptest.Server {
	h, err := httpapi.New(httpapi.Config{
		Sequencers: []counters.Sequencer{memseq.New(counters.StrategyCounter)},
		Ping:       func(context.Context) error { return nil },
	})
	if err != nil {
		log.Fatal(err)
	}
	return httptest.NewServer(h)
}

func Example() {
	srv := exampleSeqd()
	defer srv.Close()
	ctx := context.Background()

	c, err := client.New(srv.URL) // in production: client.New("https://seqd.example", client.WithToken(token))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close(ctx)

	id, err := c.Next(ctx, "orders")
	if err != nil {
		log.Fatal(err)
	}
	batch, err := c.NextN(ctx, "orders", 100)
	if err != nil {
		log.Fatal(err)
	}
	s, err := c.Current(ctx, "orders")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(id, batch.First, batch.Last, s.Value, s.Mode)
	// Output: 1 2 101 101 strict
}

func ExampleWithCache() {
	srv := exampleSeqd()
	defer srv.Close()
	ctx := context.Background()

	// Blocks of 1000 values, each reserved with one request.
	c, err := client.New(srv.URL, client.WithCache(blocks.Options{MinBlock: 1000, MaxBlock: 1000}))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close(ctx)

	for range 3 {
		id, err := c.Next(ctx, "events")
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(id)
	}
	s, _ := c.Current(ctx, "events")
	fmt.Println("seqd has handed out up to", s.Value)
	// Output:
	// 1
	// 2
	// 3
	// seqd has handed out up to 1000
}

func ExampleError() {
	srv := exampleSeqd()
	defer srv.Close()
	ctx := context.Background()
	c, err := client.New(srv.URL)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close(ctx)

	_, err = c.Current(ctx, "never-used")
	var e *client.Error
	fmt.Println(errors.Is(err, seqd.ErrNotFound), errors.As(err, &e) && e.Status == 404, e.Code)
	// Output: true true sequence_not_found
}
