// Registers page tools for browser agents (WebMCP).
document.modelContext?.registerTool({
  name: "create_invoice_draft",
  description: "Create a draft invoice for a customer",
  inputSchema: {type: "object", properties: {customer: {type: "string", description: "Customer name"}}},
  execute: async ({customer}) => ({content: [{type: "text", text: "draft for " + customer}]}),
});
