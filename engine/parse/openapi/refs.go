package openapi

import (
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/agentready/agentready/engine/clip"
)

// References, resolved before kin-openapi sees the document.
//
// kin-openapi's loader stops at the first $ref it cannot follow and returns
// nothing, so one streaming-response schema pointing at `#/$defs/Roles`
// would throw away a 288-operation API. And it resolves references only as
// pointers from the document's root, while OpenAPI 3.1 schemas are JSON
// Schema 2020-12, where `$id` starts a new base and `$anchor` names a
// schema. No library here does both halves (kin-openapi does neither; the
// JSON Schema libraries resolve schemas, not OpenAPI documents), so this file
// walks the decoded tree once: it rewrites every reference that resolves
// within the document into a root pointer kin-openapi can follow, and
// replaces every one that does not with an empty object, which makes only
// the schema (or parameter, response…) it sits in unknown. Each replacement
// is a BrokenRef, reported as a finding.

// BrokenRef is a $ref that does not resolve within the document.
type BrokenRef struct {
	At     string `json:"at"`     // JSON pointer of the object holding the $ref
	Ref    string `json:"ref"`    // the reference as written (clipped)
	Reason string `json:"reason"` // why it does not resolve, in words
}

// Why a reference does not resolve.
const (
	reasonUndefined = "the document does not define it"
	reasonExternal  = "it points outside the document, which agents and agentready read alone"
	reasonCycle     = "it is part of a cycle of references that never reaches a definition"
	reasonNotObject = "it points to a value that is not an object"
	reasonLoader    = "it points to an object of another kind than belongs where it is used"
	reasonMalformed = "it is not a valid URI reference"
)

// unresolvedKey marks an object whose $ref was removed (an OpenAPI
// extension, so every object that holds one accepts it).
const unresolvedKey = "x-agentready-unresolved-ref"

// Bounds on a hostile tree: nodes visited per walk and nesting depth (the
// decoder already stops at 200 levels).
const (
	refWalkBudget = 1 << 20
	refMaxDepth   = 200
)

// literalKeys hold data, not OpenAPI or schema objects: an object inside an
// example is not a schema, and a `$id` or `$ref` in it means nothing.
// (A schema's `examples` is an array of such data; the OpenAPI `examples`
// member is a map of Example objects, whose `value` is data.)
var literalKeys = map[string]bool{"example": true, "const": true, "enum": true, "default": true, "value": true}

// nameMaps are members whose keys are names chosen by the author, so a key
// there is never a keyword ("example" may be a property's name).
var nameMaps = map[string]bool{"properties": true, "patternProperties": true, "$defs": true, "definitions": true,
	"dependentSchemas": true, "schemas": true, "parameters": true, "responses": true, "headers": true,
	"securitySchemes": true, "requestBodies": true, "links": true, "callbacks": true, "pathItems": true,
	"paths": true, "webhooks": true, "content": true, "encoding": true, "examples": true}

// refIndex is what a reference can name: the document and the schema
// resources embedded in it (by `$id`), and anchors.
type refIndex struct {
	root      any
	doc       string              // the document's base URI, without fragment
	resources map[string][]string // absolute URI of a schema resource → its pointer
	anchors   map[string][]string // resource URI + "#" + anchor → pointer
}

// refSite is one $ref found in the tree.
type refSite struct {
	node   map[string]any
	at     []string
	ref    string
	base   *url.URL // the base URI where it is written
	wrap   bool     // an OpenAPI 3.1 schema with assertions beside its $ref
	target []string // resolved pointer from the root, when reason is ""
	reason string
}

// repairRefs resolves every $ref in root (mutating it) and returns the ones
// that do not resolve, sorted by location. base is the document's URL
// (nil: unknown); an OpenAPI 3.2 `$self` overrides it.
func repairRefs(root map[string]any, base *url.URL) []BrokenRef {
	docBase := &url.URL{Scheme: "agentready-document", Opaque: "root"}
	if base != nil {
		b := *base
		b.Fragment, b.RawFragment = "", ""
		docBase = &b
	}
	if self, ok := root["$self"].(string); ok {
		if u, err := url.Parse(self); err == nil {
			docBase = docBase.ResolveReference(u)
			docBase.Fragment, docBase.RawFragment = "", ""
		}
	}
	v, _ := root["openapi"].(string)
	jsonSchema2020 := strings.HasPrefix(v, "3.") && !strings.HasPrefix(v, "3.0")
	idx := &refIndex{root: root, doc: docBase.String(), resources: map[string][]string{}, anchors: map[string][]string{}}
	var sites []*refSite
	budget := refWalkBudget
	var walk func(v any, at []string, base *url.URL, parentKey string)
	walk = func(v any, at []string, base *url.URL, parentKey string) {
		budget--
		if budget < 0 || len(at) > refMaxDepth {
			return
		}
		switch x := v.(type) {
		case map[string]any:
			names := nameMaps[parentKey]
			if !names {
				if id, ok := x["$id"].(string); ok && len(at) > 0 {
					if u, err := url.Parse(id); err == nil {
						nb := base.ResolveReference(u)
						nb.Fragment, nb.RawFragment = "", ""
						base = nb
						if _, dup := idx.resources[base.String()]; !dup {
							idx.resources[base.String()] = clone(at)
						}
					}
				}
				for _, k := range []string{"$anchor", "$dynamicAnchor"} {
					if a, ok := x[k].(string); ok && a != "" {
						key := base.String() + "#" + a
						if _, dup := idx.anchors[key]; !dup {
							idx.anchors[key] = clone(at)
						}
					}
				}
				if r, ok := x["$ref"].(string); ok {
					sites = append(sites, &refSite{node: x, at: clone(at), ref: r, base: base,
						wrap: jsonSchema2020 && isSchemaAt(at) && hasAssertions(x)})
				}
			}
			for _, k := range sortedKeys(x) {
				if _, isList := x[k].([]any); !names && (literalKeys[k] || k == "examples" && isList) {
					continue
				}
				walk(x[k], append(at, k), base, k)
			}
		case []any:
			for i, e := range x {
				walk(e, append(at, strconv.Itoa(i)), base, "")
			}
		}
	}
	walk(root, nil, docBase, "")
	// Resolved once every `$id` and anchor is known: a reference may name
	// a schema that comes later in the document.
	byPointer := make(map[string]*refSite, len(sites))
	for _, s := range sites {
		s.target, s.reason = idx.resolve(s.ref, s.base)
		if !s.wrap {
			byPointer[pointer(s.at)] = s // a wrapped one is a schema, not a link in a chain
		}
	}
	// A reference to a reference is a chain; one that comes back to where
	// it started never reaches a definition (and would send a reader round
	// forever). Every member of such a loop is broken; a chain that merely
	// leads into one ends at an empty object, like one ending at any
	// broken reference.
	var inLoop []*refSite
	for _, s := range sites {
		seen := map[*refSite]bool{}
		for cur := s; cur != nil && cur.reason == "" && !seen[cur]; cur = byPointer[pointer(cur.target)] {
			seen[cur] = true
			if byPointer[pointer(cur.target)] == s {
				inLoop = append(inLoop, s)
				break
			}
		}
	}
	for _, s := range inLoop {
		s.reason = reasonCycle
	}

	var broken []BrokenRef
	for _, s := range sites {
		if s.reason == reasonUndefined {
			s.reason += idx.enclosingHint(s)
		}
		if s.reason == "" {
			p := "#" + (&url.URL{Fragment: pointer(s.target)}).EscapedFragment()
			if s.wrap {
				delete(s.node, "$ref")
				allOf, _ := s.node["allOf"].([]any)
				s.node["allOf"] = append(allOf, map[string]any{"$ref": p})
			} else if p != s.ref {
				s.node["$ref"] = p
			}
			continue
		}
		broken = append(broken, breakRef(s.node, s.at, s.ref, s.reason))
	}
	return broken
}

// Keywords next to a $ref that only describe (kin-openapi's list of
// annotations, and the ones that name or hold schemas). Any other sibling
// of a $ref in an OpenAPI 3.1 schema is an assertion that applies beside
// the referenced schema; kin-openapi then asks whether the siblings are
// empty by a recursion with no guard, which a cycle through them turns into
// a stack overflow: a fatal error no recover catches, from a document any
// site can publish. So such a $ref is moved into the schema's `allOf`, the
// same schema in JSON Schema 2020-12, which kin-openapi resolves like any
// recursive schema. Pointers into the schema's members stay valid.
var refAnnotations = map[string]bool{"$ref": true, "$comment": true, "allowEmptyValue": true, "default": true, "deprecated": true,
	"description": true, "discriminator": true, "example": true, "examples": true, "externalDocs": true, "nullable": true,
	"readOnly": true, "title": true, "writeOnly": true, "xml": true, "summary": true,
	"$id": true, "$anchor": true, "$dynamicAnchor": true, "$defs": true, "$schema": true}

func hasAssertions(node map[string]any) bool {
	for k := range node {
		if !refAnnotations[k] && !strings.HasPrefix(k, "x-") {
			return true
		}
	}
	return false
}

// schemaMembers hold one schema; schemaMaps and schemaLists hold schemas by
// name or position.
var (
	schemaMembers = map[string]bool{"schema": true, "items": true, "additionalProperties": true, "not": true, "contains": true,
		"if": true, "then": true, "else": true, "propertyNames": true, "unevaluatedItems": true, "unevaluatedProperties": true,
		"contentSchema": true}
	schemaMaps  = map[string]bool{"properties": true, "patternProperties": true, "$defs": true, "dependentSchemas": true}
	schemaLists = map[string]bool{"allOf": true, "oneOf": true, "anyOf": true, "prefixItems": true}
)

// isSchemaAt reports whether the object at a pointer is a schema, by the
// members that lead to it.
func isSchemaAt(at []string) bool {
	n := len(at)
	switch {
	case n >= 1 && schemaMembers[at[n-1]]:
		return true
	case n >= 2 && (schemaMaps[at[n-2]] || schemaLists[at[n-2]]):
		return true
	case n == 3 && at[0] == "components" && at[1] == "schemas":
		return true
	}
	return false
}

// breakRef replaces a reference that cannot be followed by an empty object
// marked with what it was.
func breakRef(node map[string]any, at []string, ref, reason string) BrokenRef {
	delete(node, "$ref")
	node[unresolvedKey] = ref
	return BrokenRef{At: "#" + pointer(at), Ref: clip.To(ref, maxQuotedRef), Reason: reason}
}

// resolve finds what ref names from base: the pointer from the root, or
// why there is none.
func (idx *refIndex) resolve(ref string, base *url.URL) (target []string, reason string) {
	u, err := url.Parse(ref)
	if err != nil {
		return nil, reasonMalformed
	}
	abs := base.ResolveReference(u)
	frag := abs.Fragment
	abs.Fragment, abs.RawFragment = "", ""
	resource, ok := []string(nil), false
	if abs.String() == idx.doc {
		ok = true
	} else {
		resource, ok = idx.resources[abs.String()]
	}
	if !ok {
		return nil, reasonExternal
	}
	switch {
	case frag == "":
		target = resource
	case strings.HasPrefix(frag, "/"):
		target = clone(resource)
		for _, tok := range strings.Split(frag[1:], "/") {
			target = append(target, strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~"))
		}
	default:
		if target, ok = idx.anchors[abs.String()+"#"+frag]; !ok {
			return nil, reasonUndefined
		}
	}
	v, found := lookup(idx.root, target)
	if !found {
		return nil, reasonUndefined
	}
	if _, isObject := v.(map[string]any); !isObject {
		return nil, reasonNotObject
	}
	return target, ""
}

// enclosingHint: a pointer that does not resolve from the document's root
// but does from an object around the reference is a schema pasted from a
// standalone JSON Schema file, where "#" was that schema; say where it
// resolves and how to write it.
func (idx *refIndex) enclosingHint(s *refSite) string {
	u, err := url.Parse(s.ref)
	if err != nil || u.Scheme != "" || u.Host != "" || u.Path != "" || !strings.HasPrefix(u.Fragment, "/") {
		return ""
	}
	var tokens []string
	for _, tok := range strings.Split(u.Fragment[1:], "/") {
		tokens = append(tokens, strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~"))
	}
	for n := len(s.at) - 1; n > 0; n-- {
		if v, ok := lookup(idx.root, append(clone(s.at[:n]), tokens...)); ok {
			if _, isObject := v.(map[string]any); isObject {
				at := pointer(s.at[:n])
				return fmt.Sprintf("; it resolves from the schema at #%s, as if that schema were a file of its own: write #%s%s, or give that schema an `$id`", clip.To(at, maxQuotedRef), clip.To(at, maxQuotedRef), clip.To(u.Fragment, maxQuotedRef))
			}
		}
	}
	return ""
}

// lookup follows a pointer's tokens from root.
func lookup(root any, tokens []string) (any, bool) {
	cur := root
	for _, tok := range tokens {
		switch x := cur.(type) {
		case map[string]any:
			next, ok := x[tok]
			if !ok {
				return nil, false
			}
			cur = next
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(x) || tok != strconv.Itoa(i) {
				return nil, false
			}
			cur = x[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// pointer writes tokens as an RFC 6901 JSON pointer ("" for the root).
func pointer(tokens []string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(strings.ReplaceAll(strings.ReplaceAll(t, "~", "~0"), "/", "~1"))
	}
	return b.String()
}

// breakLoaderRef marks unresolved every reference written as ref that the
// loader refused although the walk resolved it (a target kin-openapi's
// model cannot reach, such as a member it does not keep), and returns them.
func breakLoaderRef(root map[string]any, ref string) []BrokenRef {
	var out []BrokenRef
	budget := refWalkBudget
	var walk func(v any, at []string)
	walk = func(v any, at []string) {
		budget--
		if budget < 0 || len(at) > refMaxDepth {
			return
		}
		switch x := v.(type) {
		case map[string]any:
			if r, ok := x["$ref"].(string); ok && r == ref {
				out = append(out, breakRef(x, clone(at), r, reasonLoader))
			}
			for _, k := range sortedKeys(x) {
				walk(x[k], append(at, k))
			}
		case []any:
			for i, e := range x {
				walk(e, append(at, strconv.Itoa(i)))
			}
		}
	}
	walk(root, nil)
	return out
}

// refFindings words broken references for a report: one line each, at most
// MaxListed, then how many more.
func refFindings(broken []BrokenRef) []string {
	var out []string
	for i, b := range broken {
		if i == MaxListed {
			out = append(out, fmt.Sprintf("and %d more $ref that do not resolve", len(broken)-MaxListed))
			break
		}
		out = append(out, fmt.Sprintf("the $ref %s at %s does not resolve (%s): what it stands for is unknown", clip.Quote(b.Ref, maxQuotedRef), clip.To(b.At, maxQuotedRef), b.Reason))
	}
	return out
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func clone(s []string) []string { return append([]string(nil), s...) }
