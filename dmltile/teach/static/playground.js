// The playground page's behaviour: it gathers the form into a descriptor document, POSTs it to
// api/explain and shows the answer. Every verdict, hint and picture is computed by the server (the
// same validator and explainer as the command line), never here. The exercises and the starting
// document come from the page's #playground-data JSON.
var $ = function(id){ return document.getElementById(id); };
var DATA = JSON.parse($('playground-data').textContent);
var EXERCISES = DATA.exercises;
var current = null, revealed = false, timer = null, seq = 0;
function tokens(text){
  return text.split(/[\s,]+/).filter(function(t){ return t.length; }).map(function(t){
    return /^-?\d+$/.test(t) ? Number(t) : t; });
}
function tensor(prefix){
  var d = {DataType: $('dtype').value, Sizes: tokens($(prefix + '-sizes').value)};
  if (!$(prefix + '-sizes').value.trim()) delete d.Sizes;
  var st = $(prefix + '-strides').value.trim(); d.Strides = st ? tokens(st) : null;
  var b = $(prefix + '-bytes').value.trim(); if (b) d.TotalTensorSizeInBytes = /^\d+$/.test(b) ? Number(b) : b;
  return {Type: 'DML_TENSOR_TYPE_BUFFER', Desc: d};
}
function documentFromForm(){
  return {Type: 'DML_OPERATOR_TILE', Desc: {InputTensor: tensor('in'), OutputTensor: tensor('out'),
          Repeats: tokens($('repeats').value)}};
}
function fillForm(doc, level){
  var i = doc.Desc.InputTensor.Desc, o = doc.Desc.OutputTensor.Desc;
  $('dtype').value = i.DataType.replace('DML_TENSOR_DATA_TYPE_', '');
  $('in-sizes').value = i.Sizes.join(', '); $('in-strides').value = i.Strides ? i.Strides.join(', ') : '';
  $('in-bytes').value = ('TotalTensorSizeInBytes' in i) ? i.TotalTensorSizeInBytes : '';
  $('out-sizes').value = o.Sizes.join(', '); $('out-strides').value = o.Strides ? o.Strides.join(', ') : '';
  $('out-bytes').value = ('TotalTensorSizeInBytes' in o) ? o.TotalTensorSizeInBytes : '';
  $('repeats').value = doc.Desc.Repeats.join(', ');
  if (level) $('level').value = level;
  $('index').value = '';
}
function post(url, body){
  return fetch(url, {method: 'POST', headers: {'Content-Type': 'application/json'},
                     body: JSON.stringify(body)}).then(function(r){ return r.json(); });
}
function update(guess){
  var doc = documentFromForm();
  $('doc-json').textContent = JSON.stringify(doc, null, 1);
  var idx = $('index').value.trim();
  var body = {document: doc, feature_level: $('level').value, index: idx ? tokens(idx) : null,
              exercise: current ? current.id : null, guess: guess === undefined ? null : guess};
  var mine = ++seq;
  return post('api/explain', body).then(function(r){
    if (mine !== seq) return;
    var status = $('status'), hints = $('hints');
    hints.innerHTML = '';
    if (r.error){ status.textContent = r.error; status.className = 'bad'; return; }
    status.textContent = r.verdict + (r.min_feature_level ? ' (lowest level that accepts it: ' +
      r.min_feature_level + ')' : ' (no feature level accepts it)');
    status.className = r.valid ? 'ok' : 'bad';
    r.issues.forEach(function(i){
      var li = document.createElement('li'); li.className = 'hint-item ' + i.severity;
      li.textContent = i.code + ' ' + (i.path || '<document>') + ': ' + i.message + (i.hint ? '  fix: ' + i.hint : '');
      hints.appendChild(li);
    });
    if (r.index_error){ var li = document.createElement('li'); li.textContent = 'index: ' + r.index_error;
      hints.appendChild(li); }
    $('result').innerHTML = r.html;
    if (r.exercise && (r.exercise.message || r.exercise.solved)) $('exercise-status').textContent = r.exercise.message;
  });
}
function veil(parts){
  ['result', 'output'].forEach(function(p){ document.body.classList.toggle('veil-' + p, parts.indexOf(p) >= 0); });
}
function schedule(){ clearTimeout(timer); timer = setTimeout(function(){ update(); }, 200); }
function loadExercise(n){
  current = EXERCISES[n]; revealed = false; veil([]);
  fillForm(current.document, current.level);
  $('exercise-box').style.display = 'block';
  $('exercise-title').textContent = current.title; $('exercise-text').textContent = current.text;
  $('exercise-status').textContent = '';
  $('guess-row').style.display = current.kind === 'guess' ? 'block' : 'none';
  $('guess').value = '';
  veil(current.hide || []);
  update();
}
document.addEventListener('DOMContentLoaded', function(){
  document.querySelectorAll('form input, form select').forEach(function(el){
    el.addEventListener('input', schedule); el.addEventListener('change', schedule); });
  $('match').addEventListener('click', function(ev){
    ev.preventDefault();
    post('api/new', {sizes: tokens($('in-sizes').value), repeats: tokens($('repeats').value),
                     dtype: $('dtype').value}).then(function(r){
      if (r.error){ $('status').textContent = r.error; $('status').className = 'bad'; return; }
      var o = r.document.Desc.OutputTensor.Desc;
      $('out-sizes').value = o.Sizes.join(', '); $('out-strides').value = ''; $('out-bytes').value = '';
      update();
    });
  });
  $('reveal').addEventListener('click', function(ev){
    ev.preventDefault(); revealed = true; veil([]); update($('guess').value);
  });
  document.querySelectorAll('[data-exercise]').forEach(function(b){
    b.addEventListener('click', function(ev){ ev.preventDefault(); loadExercise(+b.dataset.exercise); }); });
  fillForm(DATA.start, DATA.level);
  update();
});
