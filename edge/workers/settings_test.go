package workers

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/agentready/agentready/edge"
)

func TestReadSettings(t *testing.T) {
	good := map[string]string{
		"ORIGIN_URL":          "https://origin.example.com",
		"AGENTREADY_BASE_URL": "https://agentready.example.com",
		"REDIS_URL":           "rediss://default:s3cret@redis.example.com:6380/2",
	}
	with := func(k, v string) map[string]string {
		m := map[string]string{}
		for k, v := range good {
			m[k] = v
		}
		if v == "" {
			delete(m, k)
		} else {
			m[k] = v
		}
		return m
	}
	for _, c := range []struct {
		name    string
		env     map[string]string
		setting string // the setting the error names; "" for none
	}{
		{"all set", good, ""},
		{"Redis unset", with("REDIS_URL", ""), "REDIS_URL"},
		{"origin unset", with("ORIGIN_URL", ""), "ORIGIN_URL"},
		{"origin placeholder", with("ORIGIN_URL", "<https://origin.example.com: your origin's base URL>"), "ORIGIN_URL"},
		{"origin not a URL", with("ORIGIN_URL", "origin.example.com"), "ORIGIN_URL"},
		{"origin with credentials", with("ORIGIN_URL", "https://u:p@origin.example.com"), "ORIGIN_URL"},
		{"base URL unset", with("AGENTREADY_BASE_URL", ""), "AGENTREADY_BASE_URL"},
		{"base URL placeholder", with("AGENTREADY_BASE_URL", "<https://agentready.example.com>"), "AGENTREADY_BASE_URL"},
		{"Redis placeholder", with("REDIS_URL", "<rediss://…>"), "REDIS_URL"},
		{"Redis not a Redis URL", with("REDIS_URL", "https://redis.example.com"), "REDIS_URL"},
		{"the edge's own settings", with("AGENTREADY_TOKEN_KEYS", "short"), "AGENTREADY_TOKEN_KEYS"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, s, err := ReadSettings(func(k string) string { return c.env[k] })
			var ce *edge.ConfigError
			switch {
			case c.setting == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case c.setting == "":
				if s.Origin.String() != good["ORIGIN_URL"] || !reflect.DeepEqual(s.Redis, Target{Seeds: []string{"redis.example.com:6380"}, User: "default", Password: "s3cret", DB: 2, TLS: true}) || s.Prefix != "rate:" {
					t.Errorf("settings %+v", s)
				}
			case !errors.As(err, &ce) || ce.Setting != c.setting:
				t.Errorf("error %v, want a ConfigError naming %s", err, c.setting)
			}
		})
	}
	addr := with("REDIS_URL", "")
	addr["REDIS_ADDR"] = "10.0.0.5:6379"
	if _, s, err := ReadSettings(func(k string) string { return addr[k] }); err != nil || !reflect.DeepEqual(s.Redis.Seeds, []string{"10.0.0.5:6379"}) {
		t.Errorf("REDIS_ADDR: %+v %v", s.Redis, err)
	}
}

// No error repeats the value of the setting it names: a Redis URL carries a
// password, and the log is read by more people than the secret.
func TestSettingsErrorsHideValues(t *testing.T) {
	for _, v := range []string{"redis://user:hunter2secret@cache.example:x", "ftp://user:hunter2secret@cache.example", "redis://hunter2secret@cache.example/db"} {
		_, _, err := ReadSettings(func(k string) string {
			return map[string]string{"ORIGIN_URL": "https://o.example", "AGENTREADY_BASE_URL": "https://b.example", "REDIS_URL": v}[k]
		})
		if err == nil || strings.Contains(err.Error(), "hunter2secret") {
			t.Errorf("%q: %v", v, err)
		}
	}
}
