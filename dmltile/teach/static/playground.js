// The playground page's behaviour: it posts the form's fields, as typed, to api/explain and shows the
// answer. The server builds the descriptor document from the fields and computes every verdict, hint
// and picture (the same validator and explainer as the command line), never this page. The fields,
// the exercises and the starting form come from the page's #playground-data JSON.
var $ = function(id){ return document.getElementById(id); };
var DATA = JSON.parse($('playground-data').textContent);
var EXERCISES = DATA.exercises, FIELDS = DATA.fields;
var current = null, timer = null, seq = 0;
function formFields(){
  var form = {}; FIELDS.forEach(function(id){ form[id] = $(id).value; }); return form;
}
function fillForm(fields, level){
  FIELDS.forEach(function(id){ $(id).value = fields[id]; });
  if (level) $('level').value = level;
  $('index').value = '';
}
function post(url, body){
  return fetch(url, {method: 'POST', headers: {'Content-Type': 'application/json'},
                     body: JSON.stringify(body)}).then(function(r){ return r.json(); });
}
function update(guess){
  var idx = $('index').value.trim();
  var body = {form: formFields(), feature_level: $('level').value, index: idx || null,
              exercise: current ? current.id : null, guess: guess === undefined ? null : guess};
  var mine = ++seq;
  return post('api/explain', body).then(function(r){
    if (mine !== seq) return;
    var status = $('status'), hints = $('hints');
    $('doc-json').textContent = r.document ? JSON.stringify(r.document, null, 1) : '';
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
  current = EXERCISES[n];
  fillForm(current.form, current.level);
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
    post('api/new', {sizes: $('in-sizes').value, repeats: $('repeats').value,
                     dtype: $('in-dtype').value}).then(function(r){
      if (r.error){ $('status').textContent = r.error; $('status').className = 'bad'; return; }
      FIELDS.filter(function(id){ return id.indexOf('out-') === 0; }).forEach(function(id){
        $(id).value = r.form[id]; });
      update();
    });
  });
  $('reveal').addEventListener('click', function(ev){
    ev.preventDefault(); veil([]); update($('guess').value);
  });
  document.querySelectorAll('[data-exercise]').forEach(function(b){
    b.addEventListener('click', function(ev){ ev.preventDefault(); loadExercise(+b.dataset.exercise); }); });
  fillForm(DATA.start, DATA.level);
  update();
});
