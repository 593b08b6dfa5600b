package origin

import (
	_ "embed"

	"github.com/valyala/fasthttp"
)

// OpenAPIDocument is the API description served at /openapi.json.
//
//go:embed openapi.json
var OpenAPIDocument []byte

func (s *Server) openapi(ctx *fasthttp.RequestCtx) {
	ctx.SetContentType("application/json")
	ctx.Response.Header.Set("Access-Control-Allow-Origin", "*")
	ctx.Response.Header.Set("Cache-Control", "public, max-age=3600")
	ctx.SetBody(OpenAPIDocument)
}
