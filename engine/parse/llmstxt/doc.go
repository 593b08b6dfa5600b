// Package llmstxt validates llms.txt files against the llmstxt.org format: one
// H1 title first, an optional blockquote summary, free markdown, then H2
// sections whose items are markdown links. The same validator serves check 1.1
// and the MCP tool validate_llms_txt.
package llmstxt
