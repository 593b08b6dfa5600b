package report

import "github.com/agentready/agentready/apierr"

// ErrorEnvelope is the body of every error the service, the CLI (--json) and
// the MCP tools report; apierr owns it and the codes.
type ErrorEnvelope = apierr.Envelope
