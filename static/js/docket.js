// Docket's small shared script. Page-specific keyboard handlers live beside their pages.
document.addEventListener("htmx:responseError", (event) => {
  const status = event.detail.xhr.status;
  const box = document.getElementById("flash") || document.body;
  const note = document.createElement("p");
  note.className = "error";
  note.textContent = `Request failed (${status}). Nothing was saved; try again.`;
  box.prepend(note);
});
