package report

// DocsBase is where error codes are documented.
const DocsBase = "https://github.com/agentready/agentready/blob/main/docs/api.md#error-codes"

// ErrorEnvelope is the body of every error the service, the CLI (--json) and
// the MCP tools report: error is a short title, code a stable machine-readable
// value, message a sentence that says what went wrong and what to do.
type ErrorEnvelope struct {
	Error   string `json:"error"`
	Code    string `json:"code"`
	Message string `json:"message"`
	Docs    string `json:"docs"`
}

// NewError builds an envelope whose docs link points at the code's entry.
func NewError(title, code, message string) ErrorEnvelope {
	return ErrorEnvelope{Error: title, Code: code, Message: message, Docs: DocsBase}
}
