// The live progress fragment: counts "updated N s ago" up between polls, and warns once three
// polls in a row failed (the console is unreachable), so a frozen page never looks current.
(function () {
  "use strict";
  var banner = document.getElementById("connection-lost");
  var missed = 0;
  var baseAge = null;
  var readAt = Date.now();

  function fragment() {
    return document.getElementById("reassign-progress");
  }
  function readAge() {
    var f = fragment();
    var age = f ? f.getAttribute("data-age") : "";
    baseAge = age === "" || age === null ? null : Number(age);
    readAt = Date.now();
  }
  function succeeded() {
    missed = 0;
    readAge();
    if (banner) banner.hidden = true;
  }
  function failed() {
    missed += 1;
    if (banner && missed >= 3) {
      banner.querySelector(".js-missed").textContent = String(missed);
      banner.hidden = false;
    }
  }
  readAge();
  document.body.addEventListener("htmx:afterSettle", succeeded);
  document.body.addEventListener("htmx:sendError", failed);
  document.body.addEventListener("htmx:responseError", failed);
  document.body.addEventListener("htmx:timeout", failed);
  setInterval(function () {
    var elapsed = Math.round((Date.now() - readAt) / 1000);
    var shown = document.querySelector("#reassign-progress .js-age");
    if (shown && baseAge !== null) shown.textContent = String(baseAge + elapsed);
    var since = banner && banner.querySelector(".js-since");
    if (since) since.textContent = String((baseAge || 0) + elapsed);
  }, 1000);
})();
