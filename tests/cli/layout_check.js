// Put into a copy of the latency report by latency_report_test.cpp. Once the page has loaded it measures
// every piece of text as the browser laid it out and writes what it found, as JSON, into
// <pre id="layout-check">, which `chromium --dump-dom` prints:
//   problems: text boxes that overlap, chart text cut off by its chart or inside a plot area (where it
//             could hide data), and a page wider than the window;
//   charts:   each chart's (svg[data-metric]) text;  header: the run's context as the page shows it;
//   texts:    how many text boxes were measured;  used_width, window_width: in CSS pixels.
window.addEventListener('load', function () {
  'use strict';
  var boxes = [];
  function add(text, r, svg) {
    if (r.width > 0 && r.height > 0) boxes.push({text: text, r: r, svg: svg});
  }
  document.querySelectorAll('svg text').forEach(function (t) {
    add(t.textContent, t.getBoundingClientRect(), t.ownerSVGElement);
  });
  // HTML text: one box per line of each text node.
  var walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (var n = walk.nextNode(); n; n = walk.nextNode()) {
    if (!n.textContent.trim() || n.parentElement.closest('svg, script, style')) continue;
    var range = document.createRange();
    range.selectNodeContents(n);
    var text = n.textContent.trim();
    Array.prototype.forEach.call(range.getClientRects(), function (r) { add(text, r, null); });
  }
  function overlap(a, b) {  // by more than a pixel each way
    return Math.min(a.right, b.right) - Math.max(a.left, b.left) > 1 &&
           Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > 1;
  }
  function inside(a, b) {
    return a.left >= b.left - 1 && a.right <= b.right + 1 && a.top >= b.top - 1 && a.bottom <= b.bottom + 1;
  }
  function box(b) {
    return '"' + b.text + '" [' + [b.r.left, b.r.top, b.r.right, b.r.bottom].map(Math.round).join(',') + ']';
  }
  var problems = [];
  for (var i = 0; i < boxes.length; ++i)
    for (var j = i + 1; j < boxes.length; ++j)
      if (overlap(boxes[i].r, boxes[j].r)) problems.push(box(boxes[i]) + ' overlaps ' + box(boxes[j]));
  boxes.forEach(function (b) {
    if (!b.svg) return;
    if (!inside(b.r, b.svg.getBoundingClientRect())) problems.push(box(b) + ' is cut off by its chart');
    b.svg.querySelectorAll('rect.area').forEach(function (a) {
      if (overlap(b.r, a.getBoundingClientRect())) problems.push(box(b) + ' is inside a plot area');
    });
  });
  var doc = document.documentElement;
  if (doc.scrollWidth > window.innerWidth)
    problems.push('the page is ' + doc.scrollWidth + ' px wide in a ' + window.innerWidth + ' px window');
  var charts = {};
  document.querySelectorAll('svg[data-metric]').forEach(function (s) {
    charts[s.getAttribute('data-metric')] =
        Array.prototype.map.call(s.querySelectorAll('text'), function (t) { return t.textContent; });
  });
  var context = document.querySelector('.context');
  var out = document.createElement('pre');
  out.id = 'layout-check';
  out.textContent = JSON.stringify({
    texts: boxes.length,
    problems: problems,
    charts: charts,
    header: context ? context.textContent : '',
    used_width: document.querySelector('main').getBoundingClientRect().width,
    window_width: window.innerWidth
  });
  document.body.appendChild(out);
});
