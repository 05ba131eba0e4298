/* The script inside dbtap's flame graph SVG: hover details, click to zoom, search that highlights and sums. */
#ifndef DBTAP_REPORT_FLAME_JS_H
#define DBTAP_REPORT_FLAME_JS_H

/*
 * Each frame is <g class="f" data-o="OFFSET" data-n="COUNT" data-d="DEPTH"> with a
 * <title>, a <rect> and a <text>; offsets and counts are in the unit of the graph.
 * The script recomputes x and width from those on zoom, so no layout is guessed.
 * "#search=REGEX" in the URL searches at load (and lets a headless browser check it).
 */
static const char flame_js[] =
"'use strict';\n"
"var svg = document.documentElement, W = +svg.getAttribute('data-w'), M = +svg.getAttribute('data-m');\n"
"var total = +svg.getAttribute('data-total'), unit = svg.getAttribute('data-unit');\n"
"var frames = [].slice.call(document.querySelectorAll('g.f'));\n"
"var details = document.getElementById('details'), matched = document.getElementById('matched');\n"
"var zoomed = null, CH = 7.2;\n"
"frames.forEach(function (g) {\n"
"  g.o = +g.getAttribute('data-o'); g.n = +g.getAttribute('data-n'); g.d = +g.getAttribute('data-d');\n"
"  g.r = g.querySelector('rect'); g.t = g.querySelector('text');\n"
"  g.name = g.getAttribute('data-name'); g.fill = g.r.getAttribute('fill');\n"
"  g.addEventListener('mouseover', function () { details.textContent = g.querySelector('title').textContent; });\n"
"  g.addEventListener('mouseout', function () { details.textContent = ' '; });\n"
"  g.addEventListener('click', function (e) { zoom(g); e.stopPropagation(); });\n"
"});\n"
"function label(g, w) {\n"
"  var max = Math.floor((w - 6) / CH);\n"
"  g.t.textContent = max < 3 ? '' : (g.name.length <= max ? g.name : g.name.slice(0, max - 2) + '..');\n"
"}\n"
"function place(g, x, w) {\n"
"  g.r.setAttribute('x', x.toFixed(2)); g.r.setAttribute('width', w.toFixed(2));\n"
"  g.t.setAttribute('x', (x + 3).toFixed(2)); label(g, w);\n"
"}\n"
"function zoom(z) {\n"
"  zoomed = z;\n"
"  var scale = W / z.n;\n"
"  frames.forEach(function (g) {\n"
"    var inside = g.d >= z.d && g.o >= z.o && g.o + g.n <= z.o + z.n;\n"
"    var above = g.d < z.d && g.o <= z.o && g.o + g.n >= z.o + z.n;\n"
"    var w = inside ? g.n * scale : W;\n"
"    if ((inside || above) && w >= 0.1) {\n"
"      g.style.display = ''; g.style.opacity = above ? 0.6 : 1;\n"
"      place(g, M + (inside ? (g.o - z.o) * scale : 0), w);\n"
"    } else g.style.display = 'none';\n"
"  });\n"
"  document.getElementById('unzoom').style.display = z.d > 0 ? '' : 'none';\n"
"}\n"
"function unzoom() { zoom(frames[0]); }\n"
"document.getElementById('unzoom').addEventListener('click', unzoom);\n"
"function search(re) {\n"
"  var rx = null, spans = [];\n"
"  if (re) { try { rx = new RegExp(re); } catch (e) { matched.textContent = 'bad regular expression'; return; } }\n"
"  frames.forEach(function (g) {\n"
"    var hit = rx && rx.test(g.name);\n"
"    g.r.setAttribute('fill', hit ? 'rgb(230,0,230)' : g.fill);\n"
"    if (hit) spans.push([g.o, g.o + g.n]);\n"
"  });\n"
"  /* nested matches (a recursive function) count once: the union of their spans */\n"
"  spans.sort(function (a, b) { return a[0] - b[0]; });\n"
"  var sum = 0, end = -1;\n"
"  spans.forEach(function (s) {\n"
"    if (s[0] >= end) { sum += s[1] - s[0]; end = s[1]; }\n"
"    else if (s[1] > end) { sum += s[1] - end; end = s[1]; }\n"
"  });\n"
"  matched.setAttribute('data-sum', rx ? sum : '');\n"
"  matched.textContent = rx ? 'matched ' + sum + ' ' + unit + ' (' + (100 * sum / total).toFixed(2) + '%) of ' + total : ' ';\n"
"}\n"
"var box = document.getElementById('searchbox');\n"
"if (box) box.addEventListener('input', function () { search(box.value); });\n"
"var h = location.hash.match(/[#&]search=([^&]*)/);\n"
"if (h) { var q = decodeURIComponent(h[1]); if (box) box.value = q; search(q); }\n"
"svg.addEventListener('click', function () { unzoom(); });\n";

#endif
