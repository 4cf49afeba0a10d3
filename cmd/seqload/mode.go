package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// setMode puts the sequence in cfg.mode on every address before the load, with the
// admin token, within -timeout: the mode is stored with the sequence, and an instance told directly
// serves in it at once instead of within its mode refresh.
func setMode(ctx context.Context, cfg config) error {
	ctx, cancel := context.WithTimeout(ctx, cfg.timeout)
	defer cancel()
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
	}
	return nil
}
