// Hovering an element of the explanation's pictures highlights where it comes from and goes to, in
// the grids and in the byte strips; installed once per page however many explanations it holds.
(function(){
  if (window.__dmltileHover) return; window.__dmltileHover = true;
  function inRange(el, b){ var s=+el.dataset.start, n=+el.dataset.len; return b>=s && b<s+n; }
  document.addEventListener('mouseover', function(e){
    var el = e.target.closest ? e.target.closest('[data-out]') : null;
    if (!el) return;
    var root = el.closest('.dmltile'); if (!root) return;
    root.querySelectorAll('.hl,.hl-in,.hl-out').forEach(function(x){x.classList.remove('hl','hl-in','hl-out');});
    var out = el.dataset.out, src = el.dataset.src, ob = el.dataset.ob, ib = el.dataset.ib;
    root.querySelectorAll('.grid-output [data-out]').forEach(function(x){
      if (x.dataset.out === out) x.classList.add('hl-out'); });
    root.querySelectorAll('.grid-input [data-in]').forEach(function(x){
      if (x.dataset.in === src) x.classList.add('hl-in'); });
    if (ob !== undefined && ob !== '') root.querySelectorAll('.strip-output [data-start]').forEach(function(x){
      if (inRange(x, +ob)) x.classList.add('hl-out'); });
    if (ib !== undefined && ib !== '') root.querySelectorAll('.strip-input [data-start]').forEach(function(x){
      if (inRange(x, +ib)) x.classList.add('hl-in'); });
    var info = root.querySelector('.dt-info');
    if (info) info.textContent = el.dataset.writers ? el.dataset.writers :
      'output [' + out + ']' + (ob ? ' at byte ' + ob : '') + ' copies input [' + src + ']' +
      (ib ? ' at byte ' + ib : '');
  });
})();
