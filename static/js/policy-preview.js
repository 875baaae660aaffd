// The triage policy's change page: post the form's values, as they stand, to the preview and show
// what that policy would have flagged over the last 7 days (nothing is saved). Runs on load, on
// the button, and after any change to the form (the judges' selector moves options, so a click
// on its arrows counts as a change too).
(() => {
  const button = document.getElementById("policy-preview-button");
  const target = document.getElementById("policy-preview");
  if (!button || !target) return;
  const form = button.closest("form");
  let timer = null;
  let sequence = 0;

  function formData() {
    // The admin's two-box judge selector submits only the selected options of its "chosen" box.
    form.querySelectorAll("select.filtered[id$='_to']").forEach((box) => {
      Array.from(box.options).forEach((option) => { option.selected = true; });
    });
    const data = new FormData(form);
    form.querySelectorAll("select.filtered[id$='_to']").forEach((box) => {
      Array.from(box.options).forEach((option) => { option.selected = false; });
    });
    return data;
  }

  async function preview() {
    const mine = ++sequence;
    target.setAttribute("aria-busy", "true");
    try {
      const response = await fetch(button.dataset.previewUrl, {
        method: "POST",
        body: formData(),
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
  form.addEventListener("click", (event) => {
    if (event.target.closest(".selector-chooser, .selector-chooseall, .selector-clearall")) soon();
  });
  window.addEventListener("load", preview);
})();
