package openapi

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/agentready/agentready/engine/clip"
)

// Why a description does not load, in words a site owner can act on: the
// YAML parser's and kin-openapi's own texts never reach a report (they name
// Go types and internal steps: "struct field \"nope\" not found", "cannot
// unmarshal string into value of type openapi3.PathItem"). What is not
// recognised gets a generic sentence, not the library's text.

// maxQuotedRef caps, in characters, a $ref or key quoted in an explanation.
const maxQuotedRef = 120

var yamlLine = regexp.MustCompile(`^yaml: (?:line (\d+): )?(.*)$`)

// yamlProblems words yaml.v3's parse problems (its scanner's and parser's
// texts, which this module's pinned version fixes). The parser's problems
// (parser true) carry a 0-based line, the scanner's a 1-based one.
var yamlProblems = []struct {
	prefix, words string
	parser        bool
}{
	{"mapping values are not allowed in this context", "a `key: value` appears where it is not allowed (check the indentation, and quote a value that contains \": \")", false},
	{"mapping keys are not allowed in this context", "a key appears where it is not allowed (check the indentation)", false},
	{"block sequence entries are not allowed in this context", "a `- ` list item appears where it is not allowed (check the indentation)", false},
	{"did not find expected key", "a line does not continue the mapping around it (check its indentation, or text after a quoted value)", true},
	{"could not find expected ':'", "a key has no `:` after it", false},
	{"found a tab character", "a tab is used for indentation; YAML indents with spaces", false},
	{"found character that cannot start any token", "a character that cannot start a value (a tab used for indentation, or an unquoted @ or `)", false},
	{"did not find expected ',' or ']'", "a list in brackets is not closed with `]`, or lacks a comma", true},
	{"did not find expected ',' or '}'", "a mapping in braces is not closed with `}`, or lacks a comma", true},
	{"did not find expected node content", "a value is missing where one is expected", true},
	{"did not find expected '-' indicator", "a list item does not start with `- ` like the others", true},
	{"found unexpected end of stream", "the document ends inside a quoted string or an unclosed bracket", false},
	{"found unknown escape character", "a double-quoted string has a backslash escape YAML does not know (use single quotes, or double the backslash)", false},
	{"did not find expected comment or line break", "more text follows a value on the same line (a quoted string followed by more text?)", false},
	{"did not find expected alphabetic or numeric character", "an anchor or alias (`&` or `*`) has no name", false},
	{"unknown anchor", "an alias (`*name`) refers to an anchor the document does not define", false},
	{"document contains excessive aliasing", "its aliases expand to more than a parser will read", false},
	{"exceeded max depth", "it nests deeper than a parser will read", false},
	{"found unexpected document indicator", "a `---` or `...` line appears inside a value", false},
	{"did not find expected <document start>", "more text follows the end of the document", true},
	{"control characters are not allowed", "it contains control characters", false},
	{"invalid leading UTF-8 octet", "it is not valid UTF-8 text", false},
	{"invalid trailing UTF-8 octet", "it is not valid UTF-8 text", false},
	{"incomplete UTF-8 octet sequence", "it is not valid UTF-8 text", false},
	{"found an incorrect", "it is not valid UTF-8 text", false},
	{"invalid Unicode character", "it is not valid UTF-8 text", false},
	{"invalid length of a UTF-8 sequence", "it is not valid UTF-8 text", false},
}

var yamlDuplicate = regexp.MustCompile(`^line (\d+): mapping key (".*") already defined at line (\d+)$`)

// describeYAML explains a yaml.Unmarshal error: where (the line, when the
// parser gives one) and what is wrong.
func describeYAML(err error) string {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		// Decoding into any, the only type errors are duplicated keys.
		for _, e := range te.Errors {
			if m := yamlDuplicate.FindStringSubmatch(e); m != nil {
				key, uerr := strconv.Unquote(m[2])
				if uerr != nil {
					key = m[2]
				}
				return fmt.Sprintf("line %s: the key %s appears twice in one mapping (first at line %s)", m[1], clip.Quote(key, maxQuotedRef), m[3])
			}
		}
		return "a value does not fit where it appears"
	}
	first, _, _ := strings.Cut(err.Error(), "\n")
	m := yamlLine.FindStringSubmatch(first)
	if m == nil {
		return "the YAML does not parse"
	}
	words, parser := "the YAML does not parse there", false
	for _, p := range yamlProblems {
		if strings.HasPrefix(m[2], p.prefix) {
			words, parser = p.words, p.parser
			break
		}
	}
	line, err := strconv.Atoi(m[1])
	if err != nil {
		return strings.TrimSuffix(words, " there")
	}
	if parser {
		line++
	}
	return fmt.Sprintf("line %d: %s", line, words)
}

var (
	// "cannot unmarshal string into field Operation.parameters of type
	// openapi3.Parameters" or "… into value of type openapi3.PathItem", as
	// encoding/json words it and kin-openapi passes it on.
	loadTypeError = regexp.MustCompile(`cannot unmarshal (\w+) into (?:Go )?(?:struct )?(?:field (\w+)\.([\w.]+)|value) of type ([\w.*\[\]]+)`)
	loadMustError = regexp.MustCompile(`invalid (\w+): value MUST be an object`)
	loadQuotedRef = regexp.MustCompile(`"([^"]*)"`)
	// kin-openapi's words for a reference it could not follow.
	loadRefError = regexp.MustCompile(`resolv|reference|fragment`)
)

// describeLoad explains why kin-openapi did not load a document: a member
// of the wrong type, a $ref to the wrong kind of object, or a generic
// sentence. (A $ref that points nowhere does not stop a document loading:
// refs.go takes it out first.)
func describeLoad(err error) string {
	text := err.Error()
	if m := loadTypeError.FindStringSubmatch(text); m != nil {
		return wrongType(m[1], m[2], m[3], m[4])
	}
	// References that do not resolve were taken out before loading
	// (refs.go); what remains is one that resolves to the wrong kind of
	// object, or more than loadRetrying takes out.
	switch {
	case strings.Contains(text, "bad data in"):
		if m := loadQuotedRef.FindStringSubmatch(text); m != nil {
			return fmt.Sprintf("a $ref points to %s, which is not the kind of object that belongs where it is used", clip.To(m[1], maxQuotedRef))
		}
		return "a $ref points to an object that is not the kind that belongs where it is used"
	case strings.Contains(text, "cannot contain both schema and content in a parameter"):
		return "a parameter has both `schema` and `content`; it may have only one"
	case loadRefError.MatchString(text):
		return "more $refs than a reader follows point to places it cannot follow"
	}
	if m := loadMustError.FindStringSubmatch(text); m != nil {
		return fmt.Sprintf("%s is not an object", article(words(m[1])))
	}
	return "its structure is not what the OpenAPI specification describes"
}

// wrongType words a JSON type mismatch: got is the JSON kind found
// ("string", "number", "array"…), in the Go struct owner's field member (or
// a whole value when owner is ""), goType what was expected.
func wrongType(got, owner, member, goType string) string {
	found, want := jsonKind(got), expectedKind(goType)
	if owner == "" {
		return fmt.Sprintf("%s is %s, where %s is expected", objectName(typeName(goType)), found, want)
	}
	return fmt.Sprintf("`%s` in %s is %s, where %s is expected", member, objectName(owner), found, want)
}

// objectName names the OpenAPI object a Go type of kin-openapi holds:
// "`info`" for the document's members that occur once, "a path item" for
// the others.
func objectName(goType string) string {
	switch goType {
	case "T":
		return "the document"
	case "Info", "Components", "Paths", "Contact", "License":
		return "`" + strings.ToLower(goType[:1]) + goType[1:] + "`"
	}
	return article(words(goType))
}

func jsonKind(k string) string {
	switch k {
	case "string":
		return "a string"
	case "number":
		return "a number"
	case "bool":
		return "true or false"
	case "array":
		return "a list"
	case "object":
		return "an object"
	}
	return "a value of another kind"
}

// expectedKind is the JSON kind a Go type decodes from.
func expectedKind(goType string) string {
	t := strings.TrimLeft(goType, "*")
	switch {
	case t == "string":
		return "a string"
	case t == "bool":
		return "true or false"
	case strings.HasPrefix(t, "int") || strings.HasPrefix(t, "uint") || strings.HasPrefix(t, "float"):
		return "a number"
	case strings.HasPrefix(t, "[]"):
		return "a list"
	case strings.HasPrefix(t, "map["):
		return "an object"
	}
	switch typeName(t) {
	case "Parameters", "SecurityRequirements", "Servers", "Tags", "SchemaRefs":
		return "a list"
	case "Types":
		return "a type name or a list of them"
	}
	return "an object"
}

// typeName drops a Go type's package ("openapi3.PathItem" → "PathItem").
func typeName(goType string) string {
	t := strings.TrimLeft(goType, "*")
	if i := strings.LastIndexByte(t, '.'); i >= 0 {
		return t[i+1:]
	}
	return t
}

// words splits a CamelCase name into lower-case words ("PathItem" → "path
// item", "requestBody" → "request body").
func words(name string) string {
	var b strings.Builder
	for i, r := range name {
		if r >= 'A' && r <= 'Z' {
			if i > 0 {
				b.WriteByte(' ')
			}
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

func article(w string) string {
	if w != "" && strings.ContainsRune("aeiou", rune(w[0])) {
		return "an " + w
	}
	return "a " + w
}
