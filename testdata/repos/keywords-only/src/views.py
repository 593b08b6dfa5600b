"""
@app.post("/orders/{id}/cancel")
def cancel(): ...
request.headers.get("X-Agent-Session")
hmac.new(secret, body, hashlib.sha256); headers["X-Signature"]; "X-Timestamp"
os.getenv("SANDBOX_BASE_URL")
"""
# @app.post("/orders/{id}/refund")
VALUE = 1
