// Triage keyboard: n = next item; on an item, w / f / u decide, 1-9 pick the error class, / focuses the note;
// z undoes the decision just saved (while its toast shows).
(() => {
  const typing = (el) => el && (el.tagName === "INPUT" || el.tagName === "TEXTAREA" || el.tagName === "SELECT");
  const decisionForm = document.getElementById("decision-form");
  const submitDecision = (resolution) => {
    if (!decisionForm) return;
    const errorClass = document.getElementById("error-class");
    if (resolution === "confirmed_wrong" && !errorClass.value) {
      errorClass.focus();
      errorClass.setAttribute("aria-invalid", "true");
      return;
    }
    document.getElementById("resolution").value = resolution;
    decisionForm.submit();
  };
  if (decisionForm) {
    decisionForm.querySelectorAll("button[data-resolution]").forEach((button) => {
      button.addEventListener("click", () => submitDecision(button.dataset.resolution));
    });
  }
  document.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (typing(document.activeElement)) {
      if (event.key === "Escape") document.activeElement.blur();
      return;
    }
    const keys = { w: "confirmed_wrong", f: "false_alarm", u: "unclear" };
    if (keys[event.key] && decisionForm) {
      event.preventDefault();
      submitDecision(keys[event.key]);
    } else if (/^[1-9]$/.test(event.key) && decisionForm) {
      const select = document.getElementById("error-class");
      const option = select.options[Number(event.key)];
      if (option) select.value = option.value;
    } else if (event.key === "/" && decisionForm) {
      event.preventDefault();
      document.getElementById("note").focus();
    } else if (event.key === "z") {
      const undo = document.getElementById("undo-form");
      if (undo) {
        event.preventDefault();
        undo.submit();
      }
    } else if (event.key === "n") {
      const next = document.getElementById("claim-next");
      if (next) next.submit();
    }
  });
})();

// The "saved" toast goes away by itself once its undo can no longer be used (at most ten
// seconds: z still works for the whole undo window), or when dismissed.
(() => {
  const toast = document.getElementById("undo-toast");
  if (!toast) return;
  const hide = () => { toast.hidden = true; };
  const seconds = Math.min(Number(toast.dataset.hideAfter) || 10, 10);
  window.setTimeout(hide, seconds * 1000);
  toast.querySelectorAll("[data-dismiss]").forEach((button) => button.addEventListener("click", hide));
})();

// The queue list refreshes itself (htmx polls the `queue-live` partial). A swap must not lose the
// analyst's place: the link that had focus before the swap gets it back after, wherever its row went.
(() => {
  let focusedHref = null;
  document.addEventListener("htmx:beforeSwap", (event) => {
    const target = event.detail.target;
    if (!target || target.id !== "queue-live") return;
    const active = document.activeElement;
    focusedHref = active && target.contains(active) ? active.getAttribute("href") : null;
  });
  // On the swap itself, not after htmx's settle delay: no moment without the analyst's place.
  document.addEventListener("htmx:afterSwap", () => {
    if (!focusedHref) return;
    const live = document.getElementById("queue-live");
    const links = live ? Array.from(live.querySelectorAll("a[href]")) : [];
    const again = links.find((link) => link.getAttribute("href") === focusedHref);
    focusedHref = null;
    if (again) again.focus({ preventScroll: true });
  });
})();
