package wasm

import (
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"

	"github.com/agentready/agentready/edge"
	"github.com/agentready/agentready/edge/identity"
	"github.com/agentready/agentready/edge/wasi/abi"
)

// The host's answers are the edge's, byte for byte, headers included.
func TestHostAnswersAreTheEdges(t *testing.T) {
	for name, pair := range map[string][2]func(http.ResponseWriter){
		"413": {payloadTooLarge, edge.PayloadTooLarge},
		"400": {badRequest, edge.BadRequest},
		"500": {internalError, edge.InternalError},
		"502": {originUnavailable, edge.OriginUnavailable},
	} {
		host, want := httptest.NewRecorder(), httptest.NewRecorder()
		pair[0](host)
		pair[1](want)
		if host.Code != want.Code || host.Body.String() != want.Body.String() || !reflect.DeepEqual(host.Header(), want.Header()) {
			t.Errorf("%s: host answers %d %v %s\nthe edge %d %v %s", name, host.Code, host.Header(), host.Body, want.Code, want.Header(), want.Body)
		}
	}
	want := append(append([]string{}, identity.Headers...), abi.PeerHeader, abi.PathHeader)
	if !reflect.DeepEqual(identityHeaders, want) {
		t.Errorf("identity headers %v, the edge's are %v", identityHeaders, want)
	}
}
