// Upload progress for the gold set import: htmx reports upload bytes; after the upload the
// server imports in one transaction, which we show as an indeterminate "importing" state.
// The server says how it went in X-Import-Status: the status line never says "Done." for
// an import that failed or wrote nothing; the result below gives the reason or the counts.
(() => {
  const form = () => document.getElementById("import-form");
  const bar = () => document.querySelector("#import-progress > span");
  const status = () => document.getElementById("import-status");

  document.addEventListener("htmx:beforeRequest", (event) => {
    if (event.detail.elt !== form()) return;
    status().textContent = "";
    bar().style.width = "0%";
  });

  document.addEventListener("htmx:xhr:progress", (event) => {
    if (!form() || !event.detail.lengthComputable) return;
    const percent = Math.round((event.detail.loaded / event.detail.total) * 100);
    document.getElementById("import-progress").hidden = false;
    bar().style.width = `${percent}%`;
    status().textContent = percent < 100 ? `Uploading… ${percent}%` : "Uploaded. Importing and publishing…";
  });

  document.addEventListener("htmx:afterRequest", (event) => {
    if (event.detail.elt !== form()) return;
    const outcome = event.detail.xhr ? event.detail.xhr.getResponseHeader("X-Import-Status") : null;
    const imported = event.detail.successful && outcome === "imported";
    document.getElementById("import-progress").hidden = !imported;
    bar().style.width = imported ? "100%" : "0%";
    status().textContent = imported
      ? "Imported: see the counts below."
      : event.detail.successful
        ? "Failed: nothing was imported (the reason is below)."
        : "Failed: the server did not answer (nothing was imported).";
  });
})();
