package src

// TODO: r.Post("/orders/{id}/cancel", cancel) and r.Post("/messages/send", send)
// TODO: read r.Header.Get("Mcp-Session-Id") and r.Header.Get("X-Agent-Session")
// TODO: issue tokens {"access_token": …, "scope": …} and requireScope("orders:write")
// TODO: slog.Info("x", "agent_id", id, "action", a)
// TODO: os.Getenv("SANDBOX_BASE_URL"); flag.Bool("dry-run", false, "")
// TODO: mac := hmac.New(sha256.New, secret); req.Header.Set("X-Signature", sig); req.Header.Set("X-Timestamp", ts)

/*
	mcp.AddTool(s, &mcp.Tool{Name: "cancel_order", Description: "Cancel an order"}, h)
	ToolAnnotations{DestructiveHint: true}
*/

// Placeholder keeps the package compiling.
func Placeholder() {}
