package origin_test

import (
	"encoding/base64"
	"encoding/json"
	"testing"

	. "github.com/agentready/agentready/edge/x402"
	"github.com/agentready/agentready/engine/parse/wellknown"
)

// Our requirements satisfy the scanner's own x402 check (2.11) in both versions.
func TestRequirementsParse(t *testing.T) {
	c := Config{PayTo: "AgentreadyPayee111111111111111111111111111", FeePayer: "FeePayer1111"}
	req := c.Required("https://agentready.example", "daily allowance used up")
	hdr := req.Header()
	raw, err := base64.StdEncoding.DecodeString(hdr)
	if err != nil {
		t.Fatal(err)
	}
	var back PaymentRequired
	if json.Unmarshal(raw, &back) != nil || back.Accepts[0].Amount != "100000" || back.Resource.URL != "https://agentready.example/api/v1/scan-gateway" {
		t.Fatalf("%s", raw)
	}
	v1, _ := json.Marshal(c.V1("https://agentready.example", "x"))
	if p := wellknown.ParseX402(hdr, v1); !p.Valid() || p.Version != 2 {
		t.Errorf("v2 header: %+v", p)
	}
	if p := wellknown.ParseX402("", v1); !p.Valid() || p.Version != 1 {
		t.Errorf("v1 body: %+v", p)
	}
}
