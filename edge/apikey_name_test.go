package edge

import (
	"strings"
	"testing"
)

// One rule for an API key's name, in AGENTREADY_API_KEYS and in
// `agentready keygen`: an entry whose name breaks it is
// refused naming the name, never the hash.
func TestAPIKeyNames(t *testing.T) {
	hash := strings.Repeat("ab", 32)
	for name, ok := range map[string]bool{
		"acme-ci": true, "a": true, "ops@acme.example": true, "Team_2.prod": true, strings.Repeat("k", 64): true,
		"": false, "bad name": false, "-flag": false, ".x": false, "@x": false, "a/b": false, "naïve": false,
		"tab\tname": false, strings.Repeat("k", 65): false,
	} {
		err := CheckAPIKeyName(name)
		if (err == nil) != ok {
			t.Errorf("CheckAPIKeyName(%q) = %v, want ok %v", name, err, ok)
		}
		if !ok && err != nil && !strings.Contains(err.Error(), APIKeyNameRule) {
			t.Errorf("CheckAPIKeyName(%q) does not state the rule: %v", name, err)
		}
		if name == "" || strings.TrimSpace(name) != name {
			continue // the list's blank and padded entries are another matter
		}
		keys, err := ParseAPIKeys("ci:" + hash + "," + name + ":" + hash)
		if (err == nil) != ok || (ok && keys[1].Name != name) {
			t.Errorf("ParseAPIKeys with %q: %v, want ok %v", name, err, ok)
		}
		if err != nil && strings.Contains(err.Error(), hash) {
			t.Errorf("the refusal shows the hash: %v", err)
		}
	}
}
