// The header's menus (<details class="menu">) work without this; it only closes an open one when the
// click lands outside it or on Escape, as a menu does.
(function () {
  "use strict";
  function closeMenus(except) {
    document.querySelectorAll("details.menu[open]").forEach(function (menu) {
      if (!except || !menu.contains(except)) {
        menu.removeAttribute("open");
      }
    });
  }
  document.addEventListener("click", function (event) {
    closeMenus(event.target);
  });
  document.addEventListener("keydown", function (event) {
    if (event.key === "Escape") {
      closeMenus(null);
    }
  });
})();
