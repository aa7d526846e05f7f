// The version picker (includes/version_picker.html): checking a version in the list writes it
// into the typed list, typing checks it; the datalist completes the last ref of the typed list
// (its options carry the refs before it, so "a@1,prose-bpe@" is offered prose-bpe's versions and
// aliases); the filter hides the tokenizers whose name does not hold its text. The checkboxes
// lose their name, so the form sends the typed list alone, as a link shares it.
(function () {
  function setUp(picker) {
    var input = picker.querySelector("input[name=versions]");
    var list = picker.querySelector("datalist");
    var options = Array.prototype.map.call(list.options, function (o) {
      return {value: o.value, label: o.label};
    });
    var boxes = Array.prototype.slice.call(picker.querySelectorAll(".picker-choice input"));
    var groups = picker.querySelectorAll(".picker-group");
    var filterBox = picker.querySelector(".picker-filter");
    function typed() {
      return input.value.split(",").map(function (s) { return s.trim(); }).filter(Boolean);
    }
    function complete() {
      var parts = input.value.split(",");
      parts.pop();
      var before = parts.map(function (s) { return s.trim(); }).filter(Boolean);
      var prefix = before.length ? before.join(",") + "," : "";
      list.textContent = "";
      options.forEach(function (o) {
        var option = document.createElement("option");
        option.value = prefix + o.value;
        option.label = o.label;
        list.appendChild(option);
      });
      var now = typed();
      boxes.forEach(function (box) { box.checked = now.indexOf(box.value) >= 0; });
    }
    boxes.forEach(function (box) {
      box.removeAttribute("name");
      box.addEventListener("change", function () {
        var now = typed().filter(function (ref) { return ref !== box.value; });
        if (box.checked) now.push(box.value);
        input.value = now.join(",");
        complete();
      });
    });
    input.addEventListener("input", complete);
    if (filterBox) {
      filterBox.hidden = false;
      filterBox.querySelector("input").addEventListener("input", function (event) {
        var text = event.target.value.trim().toLowerCase();
        Array.prototype.forEach.call(groups, function (group) {
          group.hidden = text !== "" && group.dataset.name.toLowerCase().indexOf(text) < 0;
        });
      });
    }
    complete();
  }
  Array.prototype.forEach.call(document.querySelectorAll("[data-picker]"), setUp);
})();
