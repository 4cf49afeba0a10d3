package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// setMode puts the sequence in cfg.mode on every address before the load, with the
// admin token, within -timeout: the mode is stored with the sequence, and an instance told directly
// serves in it at once instead of within its mode refresh. A switch to strict
// that drains (strict_from in the answer) is waited out before the load starts.
func setMode(ctx context.Context, cfg config) error {
	outer := ctx
	ctx, cancel := context.WithTimeout(ctx, cfg.timeout)
	defer cancel()
	var strictFrom time.Time // the latest an answer gave
	for _, addr := range cfg.addrs {
		u := addr + "/seq/" + url.PathEscape(cfg.name)
		req, err := http.NewRequestWithContext(ctx, http.MethodPut, u, strings.NewReader(`{"mode":"`+cfg.mode+`"}`))
		if err != nil {
			return fmt.Errorf("-mode: %w", err)
		}
		req.Header.Set("Authorization", "Bearer "+cfg.adminToken)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return fmt.Errorf("-mode %s: PUT %s: %w", cfg.mode, u, err)
		}
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<10))
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("-mode %s: PUT %s: %s: %s", cfg.mode, u, resp.Status, excerpt(body))
		}
		var answer struct {
			StrictFrom time.Time `json:"strict_from"`
		}
		if json.Unmarshal(body, &answer) == nil && answer.StrictFrom.After(strictFrom) {
			strictFrom = answer.StrictFrom
		}
	}
	// A sequence leaving cached mode answers 503 draining until strict values
	// start: the load starts then, not into the drain.
	if wait := time.Until(strictFrom); wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-t.C:
		case <-outer.Done():
			return outer.Err()
		}
	}
	return nil
}
