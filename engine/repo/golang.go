package repo

import (
	"go/ast"
	"go/parser"
	"go/token"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/agentready/agentready/engine/parse/mcpcard"
)

var routeMethods = map[string]string{
	"HandleFunc": "", "Handle": "", "Get": "GET", "Post": "POST", "Put": "PUT", "Patch": "PATCH", "Delete": "DELETE",
	"GET": "GET", "POST": "POST", "PUT": "PUT", "PATCH": "PATCH", "DELETE": "DELETE", "Any": "", "Method": "",
}

func strLit(e ast.Expr) (string, bool) {
	if bl, ok := e.(*ast.BasicLit); ok && bl.Kind == token.STRING {
		s, err := strconv.Unquote(bl.Value)
		return s, err == nil
	}
	return "", false
}

func selName(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.SelectorExpr:
		return x.Sel.Name
	case *ast.Ident:
		return x.Name
	}
	return ""
}

// requestHeader reports the headers of an incoming request: r.Header,
// req.Header, request.Header (net/http) or ctx.Request.Header (fasthttp) — not
// the headers of a response the code received as a client.
func requestHeader(e ast.Expr) bool {
	s, ok := e.(*ast.SelectorExpr)
	if !ok || (s.Sel.Name != "Header" && s.Sel.Name != "Headers") {
		return false
	}
	switch x := s.X.(type) {
	case *ast.Ident:
		switch x.Name {
		case "r", "req", "request", "httpReq", "in", "inbound":
			return true
		}
	case *ast.SelectorExpr:
		return x.Sel.Name == "Request"
	case *ast.CallExpr:
		return selName(x.Fun) == "Request"
	}
	return false
}

// returnsResponse: the function returns an *http.Response (a client).
func returnsResponse(t *ast.FuncType) bool {
	if t.Results == nil {
		return false
	}
	for _, r := range t.Results.List {
		if st, ok := r.Type.(*ast.StarExpr); ok {
			if sel, ok := st.X.(*ast.SelectorExpr); ok && sel.Sel.Name == "Response" && selName(sel.X) == "http" {
				return true
			}
		}
	}
	return false
}

// goFile extracts structural evidence from Go source. Comments are not part of
// the syntax tree, so prose never counts.
func goFile(e *Findings, rel string, src []byte) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, rel, src, parser.SkipObjectResolution)
	if err != nil {
		return
	}
	line := func(n ast.Node) int { return fset.Position(n.Pos()).Line }
	hit := func(n ast.Node, what string) Hit { return Hit{File: rel, Line: line(n), What: what} }
	// A client's RoundTrip (or any function returning *http.Response) reads
	// the headers of requests it sends, not of requests it serves: a session
	// header read there is not a handler honouring agent sessions.
	var clientSide []ast.Node
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Body != nil && (fd.Name.Name == "RoundTrip" || returnsResponse(fd.Type)) {
			clientSide = append(clientSide, fd)
		}
	}
	inClient := func(n ast.Node) bool {
		for _, c := range clientSide {
			if n.Pos() >= c.Pos() && n.End() <= c.End() {
				return true
			}
		}
		return false
	}

	ast.Inspect(f, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.CallExpr:
			name := selName(x.Fun)
			// Route registrations: mux.HandleFunc("POST /x"), r.Post("/x"), e.POST("/x")…
			if method, ok := routeMethods[name]; ok && len(x.Args) >= 1 {
				if p, ok := strLit(x.Args[0]); ok {
					if m, rest, found := strings.Cut(p, " "); found && strings.HasPrefix(rest, "/") && m == strings.ToUpper(m) {
						method, p = m, rest
					}
					if strings.HasPrefix(p, "/") {
						e.addRoute(Route{Hit: hit(x, name+" "+p), Method: method, Path: p})
					}
				}
			}
			// Session headers read by handlers: r.Header.Get("Mcp-Session-Id"), ctx.Request.Header.Peek(…).
			if sel, ok := x.Fun.(*ast.SelectorExpr); ok && (name == "Get" || name == "Peek" || name == "Values") && requestHeader(sel.X) && len(x.Args) == 1 && !inClient(x) {
				if h, ok := strLit(x.Args[0]); ok && sessionHeaderNames[strings.ToLower(h)] {
					e.add(&e.SessionHeaders, hit(x, "reads header "+h))
				}
			}
			// Scope enforcement: requireScope(…), hasScope(…).
			if scopeFunc.MatchString(name) {
				e.add(&e.ScopeEnforce, hit(x, "calls "+name))
			}
			// Sandbox configuration read by code: os.Getenv("SANDBOX_URL"), flag.Bool("dry-run", …).
			if (name == "Getenv" || name == "LookupEnv" || name == "Bool" || name == "String" || name == "BoolVar" || name == "StringVar") && len(x.Args) >= 1 {
				arg := x.Args[0]
				if name == "BoolVar" || name == "StringVar" {
					if len(x.Args) < 2 {
						break
					}
					arg = x.Args[1]
				}
				if s, ok := strLit(arg); ok && sandboxName.MatchString(s) {
					e.add(&e.SandboxReads, hit(x, name+"("+s+")"))
				}
			}
			// Structured logs carrying who acted and what they did.
			if isLogCall(name) {
				keys := map[string]bool{}
				collectKeys(x, keys)
				if anyKey(keys, identityKeys) && (anyKey(keys, actionKeys) || len(x.Args) > 0) {
					if _, msg := strLitFirst(x.Args); msg || anyKey(keys, actionKeys) {
						e.add(&e.AuditLogs, hit(x, name+" with "+strings.Join(keysIn(keys, identityKeys), ", ")))
					}
				}
			}
		case *ast.CompositeLit:
			// Tool definitions in code: &mcp.Tool{Name: …, Description: …} (the SDK infers the input schema).
			if sel, ok := x.Type.(*ast.SelectorExpr); ok && sel.Sel.Name == "Tool" && selName(sel.X) == "mcp" {
				if t := toolLiteral(x); t != nil {
					t.Hit = hit(x, "mcp.Tool "+t.Name)
					e.addTool(*t)
				}
			}
			keys := map[string]bool{}
			for _, el := range x.Elts {
				kv, ok := el.(*ast.KeyValueExpr)
				if !ok {
					continue
				}
				if k, ok := strLit(kv.Key); ok {
					keys[strings.ToLower(k)] = true
				} else if id, ok := kv.Key.(*ast.Ident); ok {
					keys[strings.ToLower(id.Name)] = true
					switch id.Name {
					case "DestructiveHint", "ReadOnlyHint", "RequiresConfirmation", "ConfirmationRequired", "Irreversible":
						e.add(&e.Consequence, hit(kv, id.Name))
					}
				}
			}
			if (keys["access_token"] || keys["accesstoken"]) && keys["scope"] {
				e.add(&e.ScopeIssue, hit(x, "token response with scope"))
			}
			if (keys["scope"] || keys["scp"]) && strings.Contains(strings.ToLower(typeName(x.Type)), "claims") {
				e.add(&e.ScopeIssue, hit(x, "token claims with scope"))
			}
		case *ast.StructType:
			// Fields whose tags name a sandbox setting: `env:"SANDBOX_URL"`.
			for _, fld := range x.Fields.List {
				if fld.Tag == nil {
					continue
				}
				tag, _ := strconv.Unquote(fld.Tag.Value)
				for _, key := range []string{"env", "envconfig", "yaml", "json", "toml", "mapstructure"} {
					if v := reflect.StructTag(tag).Get(key); v != "" && sandboxName.MatchString(v) {
						e.add(&e.SandboxReads, hit(fld, key+` tag "`+v+`"`))
					}
				}
				if v := reflect.StructTag(tag).Get("json"); strings.HasPrefix(v, "scope") {
					for _, other := range x.Fields.List {
						if other.Tag != nil && strings.Contains(other.Tag.Value, "access_token") {
							e.add(&e.ScopeIssue, hit(fld, "token type with a scope field"))
						}
					}
				}
			}
		case *ast.FuncDecl:
			if x.Body != nil {
				webhookFunc(e, rel, f.Name.Name, x.Name.Name, fset, x.Body)
			}
		case *ast.FuncLit:
			webhookFunc(e, rel, f.Name.Name, "func literal", fset, x.Body)
		}
		return true
	})
}

func typeName(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.Ident:
		return x.Name
	case *ast.SelectorExpr:
		return x.Sel.Name
	case *ast.MapType:
		return "map"
	}
	return ""
}

func isLogCall(name string) bool {
	switch name {
	case "Info", "Warn", "Error", "Debug", "Log", "LogAttrs", "InfoContext", "WarnContext", "ErrorContext", "Infow", "Warnw", "Errorw", "WithFields", "With":
		return true
	}
	return false
}

func strLitFirst(args []ast.Expr) (string, bool) {
	for _, a := range args {
		if s, ok := strLit(a); ok {
			return s, true
		}
	}
	return "", false
}

// collectKeys gathers string literals used as log keys, and keys of maps/attrs inside the call.
func collectKeys(n ast.Node, keys map[string]bool) {
	ast.Inspect(n, func(m ast.Node) bool {
		if bl, ok := m.(*ast.BasicLit); ok && bl.Kind == token.STRING {
			if s, err := strconv.Unquote(bl.Value); err == nil && len(s) < 40 {
				keys[strings.ToLower(s)] = true
			}
		}
		return true
	})
}

func anyKey(keys, set map[string]bool) bool {
	for k := range keys {
		if set[k] {
			return true
		}
	}
	return false
}

func keysIn(keys, set map[string]bool) []string {
	var out []string
	for k := range keys {
		if set[k] {
			out = append(out, k)
		}
	}
	sort.Strings(out) // map order would make the message differ from run to run
	return out
}

// toolLiteral reads &mcp.Tool{Name: "…", Description: "…"}.
func toolLiteral(e ast.Expr) *ToolDef {
	if u, ok := e.(*ast.UnaryExpr); ok {
		e = u.X
	}
	cl, ok := e.(*ast.CompositeLit)
	if !ok || typeName(cl.Type) != "Tool" {
		return nil
	}
	t := &ToolDef{Ecosystem: "mcp"}
	var desc string
	for _, el := range cl.Elts {
		kv, ok := el.(*ast.KeyValueExpr)
		if !ok {
			continue
		}
		id, _ := kv.Key.(*ast.Ident)
		if id == nil {
			continue
		}
		s, _ := strLit(kv.Value)
		switch id.Name {
		case "Name":
			t.Name = s
		case "Description":
			desc = s
		}
	}
	switch {
	case !mcpcard.ValidToolName(t.Ecosystem, t.Name):
		t.Problem = "name missing or not a valid tool name"
	case strings.TrimSpace(desc) == "":
		t.Problem = "no description"
	}
	return t
}

// webhookFunc records what one function does toward an outbound delivery:
// computes an HMAC, sets a signature or timestamp header, posts to a
// callback or webhook URL, and which functions it calls. Real senders split
// this work (a send function calls a Sign helper, which calls a MAC helper),
// so the verdict is reached across functions once the walk is done
// (resolveDeliveries), not inside one.
func webhookFunc(e *Findings, rel, pkg, name string, fset *token.FileSet, body *ast.BlockStmt) {
	fn := &sigFunc{key: pkg + "." + name}
	var postAt ast.Node
	at := func(n ast.Node, what string) Hit {
		return Hit{File: rel, Line: fset.Position(n.Pos()).Line, What: what}
	}
	ast.Inspect(body, func(n ast.Node) bool {
		if _, ok := n.(*ast.FuncLit); ok {
			return false // judged on its own
		}
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		name := selName(call.Fun)
		switch f := call.Fun.(type) {
		case *ast.SelectorExpr:
			if x, ok := f.X.(*ast.Ident); ok {
				fn.calls = append(fn.calls, x.Name+"."+f.Sel.Name) // pkg.Func (or var.Method: harmless)
			}
		case *ast.Ident:
			fn.calls = append(fn.calls, pkg+"."+f.Name)
		}
		if sel, ok := call.Fun.(*ast.SelectorExpr); ok && name == "New" && selName(sel.X) == "hmac" {
			fn.hmac = true
		}
		if (name == "Set" || name == "Add") && len(call.Args) == 2 {
			// The header name as a literal, or as a named constant
			// (HeaderSignature, headerTimestamp).
			k, ok := strLit(call.Args[0])
			if !ok {
				k = selName(call.Args[0])
			}
			if signatureKey.MatchString(k) && fn.sig == nil {
				h := at(call, "HMAC signature header")
				fn.sig = &h
			}
			if timestampKey.MatchString(k) && fn.ts == nil {
				h := at(call, "signature timestamp")
				fn.ts = &h
			}
		}
		for _, a := range call.Args {
			if s, ok := strLit(firstOperand(a)); ok && (strings.HasPrefix(s, "t=") || strings.Contains(s, ",v1=")) && fn.ts == nil {
				h := at(call, "signature timestamp")
				fn.ts = &h
			}
		}
		if name == "NewRequest" || name == "NewRequestWithContext" || name == "Post" {
			for _, a := range call.Args {
				if id, ok := a.(*ast.Ident); ok {
					l := strings.ToLower(id.Name)
					if strings.Contains(l, "callback") || strings.Contains(l, "webhook") || strings.Contains(l, "hook") {
						postAt = call
					}
				}
				if s, ok := a.(*ast.SelectorExpr); ok {
					l := strings.ToLower(s.Sel.Name)
					if strings.Contains(l, "callback") || strings.Contains(l, "webhook") {
						postAt = call
					}
				}
			}
		}
		return true
	})
	if postAt != nil {
		h := at(postAt, "delivery")
		fn.post = &h
	}
	if fn.hmac || fn.sig != nil || fn.ts != nil || fn.post != nil || len(fn.calls) > 0 {
		e.mu.Lock()
		if e.funcs == nil {
			e.funcs = map[string][]*sigFunc{}
		}
		e.funcs[fn.key] = append(e.funcs[fn.key], fn)
		e.mu.Unlock()
	}
}

// firstOperand is the leftmost operand of a string concatenation
// ("t=" + ts + ",v1=" + mac): where a signature header's format shows.
func firstOperand(e ast.Expr) ast.Expr {
	for {
		b, ok := e.(*ast.BinaryExpr)
		if !ok || b.Op != token.ADD {
			return e
		}
		e = b.X
	}
}
