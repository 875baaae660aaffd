// "Send a live query from this page" (templates/triage/_try_query.html): posts one query to the
// ingestion API with the token given, as a client would, and shows the answer.
document.addEventListener("submit", async (event) => {
  const form = event.target.closest("#try-query");
  if (!form) return;
  event.preventDefault();
  const data = new FormData(form);
  const body = {};
  for (const name of ["external_id", "question", "sql", "warehouse"]) body[name] = String(data.get(name) || "").trim();
  const status = form.querySelector("#try-status");
  const output = form.querySelector("#try-response");
  status.textContent = "Posting…";
  try {
    const response = await fetch(form.dataset.endpoint, {
      method: "POST",
      credentials: "omit",
      headers: { Authorization: `Bearer ${String(data.get("token") || "").trim()}`, "Content-Type": "application/json" },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    let shown = text;
    try { shown = JSON.stringify(JSON.parse(text), null, 2); } catch { /* not JSON: show as sent */ }
    status.textContent = response.ok
      ? `${response.status}: accepted. Docket judges it in the background; its status URL is below.`
      : `${response.status}: refused, nothing was stored.`;
    status.className = response.ok ? "ok" : "error";
    output.textContent = shown;
    output.hidden = false;
  } catch (error) {
    status.textContent = `Could not reach the API: ${error}`;
    status.className = "error";
  }
});
