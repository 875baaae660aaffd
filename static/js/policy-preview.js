// The triage policy's change page: post the form's values, as they stand, to the preview and show
// what that policy would have flagged over the last 7 days (nothing is saved). Runs on load, on
// the button, and after any change to the form.
(() => {
  const button = document.getElementById("policy-preview-button");
  const target = document.getElementById("policy-preview");
  if (!button || !target) return;
  const form = button.closest("form");
  let timer = null;
  let sequence = 0;

  async function preview() {
    const mine = ++sequence;
    target.setAttribute("aria-busy", "true");
    try {
      const response = await fetch(button.dataset.previewUrl, {
        method: "POST",
        body: new FormData(form),
        headers: { "X-Requested-With": "fetch" },
        credentials: "same-origin",
      });
      const html = await response.text();
      if (mine !== sequence) return; // a later preview is on its way
      target.innerHTML = response.ok ? html : `<p class="errornote">The preview failed (${response.status}).</p>`;
    } catch (error) {
      if (mine === sequence) target.textContent = `The preview failed: ${error}`;
    } finally {
      if (mine === sequence) target.removeAttribute("aria-busy");
    }
  }

  function soon() {
    clearTimeout(timer);
    timer = setTimeout(preview, 400);
  }

  button.addEventListener("click", preview);
  form.addEventListener("change", soon);
  window.addEventListener("load", preview);
})();
