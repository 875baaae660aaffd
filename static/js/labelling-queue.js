// Keyboard flow of the labelling queue. Every key clicks a real button or link, so the
// page works the same with a mouse, and htmx swaps in the next item without a reload.
(() => {
  let wrongMode = false;
  let typed = "";  // the digits of a class key typed so far (keys of one taxonomy share a length)

  const item = () => document.querySelector("#queue-item .label-item");
  const classList = () => document.querySelector("#queue-item .error-classes");

  function setWrongMode(on) {
    wrongMode = on;
    typed = "";
    const list = classList();
    if (list) list.hidden = !on;
  }

  function press(selector) {
    const target = document.querySelector(`#queue-item ${selector}`);
    // htmx takes over a swapped-in item when it settles; a key pressed before that would
    // submit the button as a plain form (a whole page load, the confirmation elsewhere).
    if (target && window.htmx) window.htmx.process(target);
    if (target) target.click();
    return Boolean(target);
  }

  function typing(event) {
    const tag = event.target.tagName;
    // A ticked class box keeps the keys: Enter saves the ticked classes.
    if (tag === "INPUT" && event.target.type === "checkbox") return false;
    return tag === "TEXTAREA" || tag === "INPUT" || tag === "SELECT" || event.target.isContentEditable;
  }

  document.addEventListener("keydown", (event) => {
    if (!item() || event.ctrlKey || event.metaKey || event.altKey) return;
    if (typing(event)) {
      if (event.key === "Escape") event.target.blur();
      return;
    }
    const key = event.key.toLowerCase();
    if (wrongMode) {
      if (/^[0-9]$/.test(key)) {
        typed += key;
        const length = Number(classList()?.dataset.keyLength || 1);
        if (typed.length >= length) {
          press(`[data-class-key="${typed}"]`);
          setWrongMode(false);
        }
        event.preventDefault();
      } else if (key === "enter") {
        press(".several-classes");
        setWrongMode(false);
        event.preventDefault();
      } else if (key === "escape") {
        setWrongMode(false);
        event.preventDefault();
      }
      return;
    }
    const actions = {
      c: () => press('[data-key="c"]'),
      u: () => press('[data-key="u"]'),
      w: () => setWrongMode(true),
      n: () => document.getElementById("label-note")?.focus(),
      j: () => press('[data-key="j"]'),
      k: () => press('[data-key="k"]'),
      z: () => press('[data-key="z"]'),
      escape: () => setWrongMode(false),
    };
    if (actions[key]) { actions[key](); event.preventDefault(); }
  });

  document.addEventListener("click", (event) => {
    if (event.target.closest(".wrong-toggle")) setWrongMode(!wrongMode);
  });

  // A new item arrived: leave wrong mode and keep focus off the note field.
  document.addEventListener("htmx:afterSwap", (event) => {
    if (event.detail.target.id === "queue-item") {
      setWrongMode(false);
      window.scrollTo({ top: 0 });
    }
  });
})();
