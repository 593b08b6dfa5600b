async function deliver(webhookUrl, event) {
  return fetch(webhookUrl, { method: "POST", body: JSON.stringify(event) });
}
module.exports = { deliver };
