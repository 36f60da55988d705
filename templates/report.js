(function () {
  "use strict";
  var table = document.getElementById("kernels");
  if (!table) { return; }
  var body = table.tBodies[0];
  var rows = Array.prototype.slice.call(body.rows);
  var search = document.getElementById("filter-text");
  var severity = document.getElementById("filter-severity");
  var count = document.getElementById("filter-count");

  function value(row, key, numeric) {
    var cell = row.querySelector("[data-key='" + key + "']");
    var raw = cell ? cell.getAttribute("data-value") : "";
    if (!numeric) { return raw || ""; }
    var number = parseFloat(raw);
    return isNaN(number) ? null : number;
  }

  function sortBy(header) {
    var key = header.getAttribute("data-key");
    var numeric = header.getAttribute("data-type") === "number";
    var ascending = header.getAttribute("aria-sort") !== "ascending";
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th) { th.removeAttribute("aria-sort"); });
    header.setAttribute("aria-sort", ascending ? "ascending" : "descending");
    rows.sort(function (a, b) {
      var x = value(a, key, numeric), y = value(b, key, numeric);
      if (x === y) { return 0; }
      if (x === null) { return 1; }
      if (y === null) { return -1; }
      var order = numeric ? x - y : String(x).localeCompare(String(y));
      return ascending ? order : -order;
    });
    rows.forEach(function (row) { body.appendChild(row); });
  }

  function filter() {
    var text = search.value.trim().toLowerCase();
    var level = severity.value;
    var shown = 0;
    rows.forEach(function (row) {
      var name = (value(row, "kernel", false) + " " + value(row, "metric", false)).toLowerCase();
      var keep = (!text || name.indexOf(text) !== -1) && (!level || row.getAttribute("data-severity") === level);
      row.hidden = !keep;
      if (keep) { shown += 1; }
    });
    count.textContent = shown + " of " + rows.length + " shown";
  }

  Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th) {
    var button = th.querySelector("button");
    if (button) { button.addEventListener("click", function () { sortBy(th); }); }
  });
  search.addEventListener("input", filter);
  severity.addEventListener("change", filter);
  filter();
}());
