// Material's script puts each code block's copy button in a <nav class="md-code__nav">.
// That is a toolbar for one block, not a way around the site, yet as a <nav> each one is
// an unnamed navigation landmark: a screen reader lists several alike on a page with code.
// Give them no landmark role; the buttons inside are unchanged.
(function () {
  "use strict";

  function unlandmark() {
    document.querySelectorAll("nav.md-code__nav:not([role])").forEach(function (nav) {
      nav.setAttribute("role", "none");
    });
  }

  unlandmark();
  // The toolbars are added by Material's script, now or later (e.g. when a block scrolls into view).
  new MutationObserver(unlandmark).observe(document.body, { childList: true, subtree: true });
})();
