// Docket's small shared script. Page-specific keyboard handlers live beside their pages.
document.addEventListener("htmx:responseError", (event) => {
  const status = event.detail.xhr.status;
  const box = document.getElementById("flash") || document.body;
  const note = document.createElement("p");
  note.className = "error";
  note.textContent = `Request failed (${status}). Nothing was saved; try again.`;
  box.prepend(note);
});

// The Content-Security-Policy allows no inline style, not even a style="" attribute, so a
// size or colour computed on the server travels as data-width (a percentage) or data-colour
// and is set here, through the DOM (which the policy allows), on load and after each swap.
function applyDataStyles(root) {
  root.querySelectorAll("[data-width]").forEach((element) => {
    element.style.width = `${Number(element.dataset.width) || 0}%`;
  });
  root.querySelectorAll("[data-colour]").forEach((element) => {
    element.style.background = element.dataset.colour;
  });
}
applyDataStyles(document);
document.addEventListener("htmx:load", (event) => applyDataStyles(event.target));

// "Go back" on the error pages (a javascript: link is inline script to the policy).
document.addEventListener("click", (event) => {
  if (event.target.closest("[data-history-back]")) {
    event.preventDefault();
    history.back();
  }
});
