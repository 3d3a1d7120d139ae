// Forms with data-confirm="question" ask before they submit (cancelling a move, removing throttles).
(function () {
  "use strict";
  document.addEventListener(
    "submit",
    function (event) {
      var question = event.target.getAttribute && event.target.getAttribute("data-confirm");
      if (question && !window.confirm(question)) {
        event.preventDefault();
        event.stopImmediatePropagation();
      }
    },
    true
  );
})();
