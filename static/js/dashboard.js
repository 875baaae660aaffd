// Judge comparison dashboard: click a column header to sort the judges table by it.
document.addEventListener("click", (event) => {
  const header = event.target.closest("table.sortable th[data-sort]");
  if (!header || event.target.closest("a.def-link")) return;  // a header's "?" opens its definition
  const table = header.closest("table");
  const column = Array.from(header.parentNode.children).indexOf(header);
  const numeric = header.dataset.sort === "num";
  const ascending = header.dataset.direction !== "asc";
  header.dataset.direction = ascending ? "asc" : "desc";
  const body = table.tBodies[0];
  const rows = Array.from(body.rows);
  const key = (row) => {
    const raw = row.cells[column]?.dataset.value ?? row.cells[column]?.textContent ?? "";
    if (!numeric) return raw.toLowerCase();
    return raw === "" ? (ascending ? Infinity : -Infinity) : Number(raw);
  };
  rows.sort((a, b) => {
    const [x, y] = [key(a), key(b)];
    const order = x < y ? -1 : x > y ? 1 : 0;
    return ascending ? order : -order;
  });
  rows.forEach((row) => body.appendChild(row));
});

// Choosing another gold-set version opens its dashboard with the same options, less the
// run selection (runs belong to a version).
document.getElementById("version-select")?.addEventListener("change", (event) => {
  const query = new URLSearchParams(window.location.search);
  query.delete("runs");
  window.location = event.target.value + (query.toString() ? `?${query}` : "");
});

// A list a click fetched (a heatmap cell, an UpSet bar) comes into view instead of loading off-screen.
document.addEventListener("htmx:afterSwap", (event) => {
  const target = event.detail.target;
  if (target && target.hasAttribute("data-scroll-into-view")) {
    target.scrollIntoView({ block: "start" });
  }
});
