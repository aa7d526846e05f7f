// The run form shows the chosen algorithm's fields only. Without this script both groups show,
// each under its heading, and the server passes on only the chosen algorithm's fields.
(function () {
  "use strict";
  var form = document.getElementById("run-form");
  if (!form) return;
  var specials = form.querySelector("textarea[name=special_tokens]");
  var groups = form.querySelectorAll(".algorithm-fields");
  var defaults = {};  // each kind's default special tokens, as its group carries them
  groups.forEach(function (group) { defaults[group.dataset.algorithm] = group.dataset.specials; });
  function chosen() {  // none chosen: the first kind (the default)
    var checked = form.querySelector("input[name=algorithm]:checked") ||
      form.querySelector("input[name=algorithm]");
    return checked ? checked.value : "";
  }
  function show(changed) {
    var algorithm = chosen();
    groups.forEach(function (group) {
      group.hidden = group.dataset.algorithm !== algorithm;
    });
    // the other algorithm's default special tokens, untouched: this one's default instead
    if (changed && specials) {
      for (var other in defaults) {
        if (other !== algorithm && specials.value.trim() === defaults[other]) {
          specials.value = defaults[algorithm];
        }
      }
    }
  }
  form.querySelectorAll("input[name=algorithm]").forEach(function (radio) {
    radio.addEventListener("change", function () { show(true); });
  });
  show(false);
})();
