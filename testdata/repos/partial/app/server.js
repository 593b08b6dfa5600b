const express = require("express");
const app = express();

app.get("/orders", (req, res) => res.json([]));
app.post("/orders", (req, res) => res.status(201).end());
app.post("/orders/:id/cancel", (req, res) => res.end());

app.post("/token", (req, res) => res.json({ access_token: "t", scope: "orders:read" }));

async function notify(sub, event) {
  await fetch(sub.callbackUrl, { method: "POST", body: JSON.stringify(event) });
}

module.exports = { app, notify };
