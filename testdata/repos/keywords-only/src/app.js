// app.post('/orders/:id/cancel', cancel)  -- planned
/* req.headers['mcp-session-id'] and crypto.createHmac('sha256', secret)
   res.setHeader('X-Signature', sig); 'X-Timestamp'
   logger.info({ agentId, action }) ; process.env.SANDBOX_URL
   server.tool("cancel_order", "Cancel an order", {})  destructiveHint: true */
module.exports = {};
