package agentcard

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/agentready/agentready/internal/testing/testenv"
)

const corpus = "../../../../shared/corpus/a2a/" // fuzz seeds only; tests use testenv.Shared

func TestCorpus(t *testing.T) {
	cases := map[string]struct {
		valid    bool
		version  string
		identity bool
		missing  []string
	}{
		"invoice-agent.json":      {true, "1.0", true, nil},
		"weather-agent.json":      {true, "1.0", true, nil},
		"recipe-agent-full.json":  {true, "1.0", true, nil}, // interfaces use `transport` instead of protocolBinding
		"minimal-agent.json":      {false, "", true, []string{"supportedInterfaces"}},
		"incomplete-agent.json":   {false, "", true, []string{"capabilities", "defaultInputModes", "defaultOutputModes", "skills", "supportedInterfaces"}},
		"facts-agent-legacy.json": {false, "", true, []string{"supportedInterfaces"}},
		// v0.3 card with the AP2 extension and modes that are not MIME types
		"ap2-merchant-agent.json": {true, "0.3", true, nil},
		"currency-agent-v03.json": {true, "0.3", true, nil},
		// two supportedInterfaces at different protocol versions
		"currency-agent-two-interfaces.json": {true, "1.0", true, nil},
		// legacy: `url` but no protocolVersion or supportedInterfaces
		"air-ticketing-agent.json": {false, "", true, []string{"supportedInterfaces"}},
	}
	dir := testenv.Shared(t, "corpus/a2a") + "/"
	files, _ := filepath.Glob(dir + "*.json")
	if len(files) != len(cases) {
		t.Fatalf("corpus %d files, table %d", len(files), len(cases))
	}
	for _, f := range files {
		b, _ := os.ReadFile(f)
		r, err := Validate(b)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		w := cases[filepath.Base(f)]
		if r.Valid != w.valid || r.Version != w.version || r.HasIdentity != w.identity || !reflect.DeepEqual(r.Missing, w.missing) {
			t.Errorf("%s: %+v", filepath.Base(f), r)
		}
	}
	b, _ := os.ReadFile(dir + "minimal-agent.json")
	if r, _ := Validate(b); len(r.Findings) != 1 || r.Findings[0] != "skills[0] has no tags" {
		t.Errorf("minimal: findings %v", r.Findings)
	}
}

func TestV03Card(t *testing.T) {
	r, err := Validate([]byte(`{"name":"A","description":"d","url":"https://a.example/a2a","protocolVersion":"0.3.0","version":"1","capabilities":{},
	 "defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"skills":[{"id":"s","name":"S","description":"d","tags":["t"]}]}`))
	if err != nil || !r.Valid || r.Version != "0.3" {
		t.Errorf("%+v %v", r, err)
	}
	if _, err := Validate([]byte(`[1,2]`)); err == nil {
		t.Error("an array is not a card")
	}
}

func FuzzValidate(f *testing.F) {
	files, _ := filepath.Glob(corpus + "*")
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := Validate(body)
		if err == nil && r.Valid && (r.Version == "" || !r.HasIdentity) {
			t.Fatalf("valid card without version or identity: %+v", r)
		}
	})
}
