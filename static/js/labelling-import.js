// Upload progress for the gold set import: htmx reports upload bytes; after the upload the
// server imports in one transaction, which we show as an indeterminate "importing" state.
(() => {
  const form = () => document.getElementById("import-form");
  const bar = () => document.querySelector("#import-progress > span");
  const status = () => document.getElementById("import-status");

  document.addEventListener("htmx:xhr:progress", (event) => {
    if (!form() || !event.detail.lengthComputable) return;
    const percent = Math.round((event.detail.loaded / event.detail.total) * 100);
    document.getElementById("import-progress").hidden = false;
    bar().style.width = `${percent}%`;
    status().textContent = percent < 100 ? `Uploading… ${percent}%` : "Uploaded. Importing and publishing…";
  });

  document.addEventListener("htmx:afterRequest", (event) => {
    if (event.detail.elt !== form()) return;
    status().textContent = event.detail.successful ? "Done." : "Failed.";
    bar().style.width = "100%";
  });
})();
