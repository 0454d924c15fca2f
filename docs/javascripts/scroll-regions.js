// A table, drawing or code block too wide for the screen scrolls sideways in its own box, and a
// keyboard user scrolls it by giving it focus: the page marks every such box tabindex="0", which is
// right with JavaScript off. A box that fits needs no stop in the tab order, so, with JavaScript,
// a box is a tab stop exactly while the browser scrolls it (checked again when the window or the
// box changes size, and for code blocks Material's script marks later).
(function () {
  "use strict";

  var BOXES = ".table-scroll, .diagram-scroll, .md-typeset pre > code";

  // Only a change is written: the observer below hears every write, so writing the same value again
  // would call it again without end.
  function place(box) {
    var scrolls = box.scrollWidth > box.clientWidth || box.scrollHeight > box.clientHeight;
    if (scrolls && box.getAttribute("tabindex") !== "0") {
      box.setAttribute("tabindex", "0");
    } else if (!scrolls && box.hasAttribute("tabindex")) {
      box.removeAttribute("tabindex");
    }
  }

  var sizes = new ResizeObserver(function (entries) {
    entries.forEach(function (entry) {
      place(entry.target);
    });
  });

  function watch() {
    document.querySelectorAll(BOXES).forEach(function (box) {
      if (!box.hasAttribute("data-scroll-watched")) {
        box.setAttribute("data-scroll-watched", "");
        sizes.observe(box);
        place(box);
      }
    });
  }

  watch();
  new MutationObserver(function () {
    document.querySelectorAll("[data-scroll-watched]").forEach(place);
    watch();
  }).observe(document.body, { attributes: true, attributeFilter: ["tabindex"], childList: true, subtree: true });
})();
