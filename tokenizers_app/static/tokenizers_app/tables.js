// A table that scrolls sideways says so: its scroller gets data-overflows and a visible
// "scroll" hint before it while it holds more than it shows (rechecked when its size changes).
(function () {
  "use strict";
  function mark(scroller) {
    var overflows = scroller.scrollWidth > scroller.clientWidth + 1;
    var hint = scroller.previousElementSibling;
    var hinted = hint && hint.classList.contains("scroll-hint");
    scroller.toggleAttribute("data-overflows", overflows);
    if (overflows && !hinted) {
      hint = document.createElement("p");
      hint.className = "scroll-hint";
      hint.setAttribute("aria-hidden", "true");
      hint.textContent = "Scroll sideways for more columns \u2192";
      scroller.parentNode.insertBefore(hint, scroller);
    } else if (!overflows && hinted) {
      hint.remove();
    }
  }
  function markAll(root) {
    (root || document).querySelectorAll(".table-scroll").forEach(function (scroller) {
      mark(scroller);
      if (window.ResizeObserver && !scroller.dataset.watched) {
        scroller.dataset.watched = "1";
        new ResizeObserver(function () { mark(scroller); }).observe(scroller);
      }
    });
  }
  document.addEventListener("DOMContentLoaded", function () { markAll(); });
  document.addEventListener("htmx:afterSettle", function (event) { markAll(event.target); });
}());
