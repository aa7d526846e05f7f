// The run form shows the chosen algorithm's fields only. Without this script both groups show,
// each under its heading, and the server passes on only the chosen algorithm's fields.
(function () {
  "use strict";
  var form = document.getElementById("run-form");
  if (!form) return;
  var specials = form.querySelector("textarea[name=special_tokens]");
  var defaults = {byte_bpe: "<|endoftext|>", char_bpe: "<unk>"};
  function chosen() {
    var checked = form.querySelector("input[name=algorithm]:checked");
    return checked ? checked.value : "byte_bpe";
  }
  function show(changed) {
    var algorithm = chosen();
    form.querySelectorAll(".algorithm-fields").forEach(function (group) {
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
