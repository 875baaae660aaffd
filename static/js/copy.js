// "Copy" buttons: <button data-copy="#element-id"> copies that element's text and says so.
// Loaded by base.html and the admin's token page (no inline script: the CSP refuses it).
document.addEventListener("click", async (event) => {
  const button = event.target.closest("[data-copy]");
  if (!button) return;
  const source = document.querySelector(button.dataset.copy);
  if (!source) return;
  const text = "value" in source && source.value !== undefined ? source.value : source.textContent;
  const status = button.parentElement.querySelector(".copy-status") || button;
  try {
    await navigator.clipboard.writeText(text.trim());
    status.textContent = "Copied";
  } catch {
    // No clipboard (plain http on another host): select the text so Ctrl+C copies it.
    const range = document.createRange();
    range.selectNodeContents(source);
    window.getSelection().removeAllRanges();
    window.getSelection().addRange(range);
    status.textContent = "Selected: press Ctrl+C";
  }
});
