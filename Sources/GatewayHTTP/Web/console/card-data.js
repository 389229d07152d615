/*
 * The console's Card data page: the co-brand table (BIN ranges -> affiliate codes, edited row by row or
 * uploaded as CSV; GET/PUT /v1/co-brand-table) and the BIN table upload (PUT /v1/bin-table). A refused table
 * shows each bad row with its message (the error's `rows`) and marks the editor's row.
 */
import * as C from './console.js';
var el = C.el;
var rowSerial = 0;

/* The list of a refused table's rows, or the plain error. */
function problems(target, error, rowWord) {
  target.textContent = '';
  target.appendChild(el('p', { class: 'error', role: 'alert' }, C.errorText(error)));
  if (error.rows && error.rows.length) {
    target.appendChild(el('ul', { class: 'row-errors', 'data-row-errors': '' }, error.rows.map(function (row) {
      return el('li', { 'data-row': String(row.row) }, rowWord + ' ' + row.row + ': ' + row.message);
    })));
  }
}

function editorRow(body, range) {
  var id = 'cb' + (++rowSerial);
  function field(name, text, value, size) {
    return C.cell(text, [
      el('label', { for: id + '-' + name, class: 'visually-hidden' }, text),
      el('input', { id: id + '-' + name, name: name, value: value || '', inputmode: name === 'affiliate_code' ? null : 'numeric',
        maxlength: size, autocomplete: 'off', spellcheck: 'false' })]);
  }
  var row = el('tr', null,
    field('bin_low', 'First BIN', range.bin_low, 8), field('bin_high', 'Last BIN', range.bin_high, 8),
    field('affiliate_code', 'Affiliate code', range.affiliate_code, 20),
    C.cell('Row', el('button', { type: 'button', class: 'secondary', onclick: function () {
      row.remove();
      number(body);
    } }, 'Remove')));
  body.appendChild(row);
  number(body);
  return row;
}

/* Each row's label says its number, as the API's errors name it. */
function number(body) {
  Array.prototype.forEach.call(body.rows, function (row, index) {
    row.setAttribute('data-row', String(index + 1));
    row.querySelector('button').setAttribute('aria-label', 'Remove row ' + (index + 1));
    Array.prototype.forEach.call(row.querySelectorAll('label'), function (label) {
      label.textContent = label.textContent.replace(/ \(row \d+\)$/, '') + ' (row ' + (index + 1) + ')';
    });
  });
}

function coBrandSection(table) {
  var status = el('div', { 'aria-live': 'polite' });
  var body = el('tbody');
  table.ranges.forEach(function (range) { editorRow(body, range); });
  function rows() {
    return Array.prototype.map.call(body.rows, function (row) {
      return {
        bin_low: row.querySelector('[name=bin_low]').value.trim(),
        bin_high: row.querySelector('[name=bin_high]').value.trim(),
        affiliate_code: row.querySelector('[name=affiliate_code]').value.trim()
      };
    });
  }
  function show(answer) {
    body.textContent = '';
    answer.ranges.forEach(function (range) { editorRow(body, range); });
    status.textContent = '';
    status.appendChild(el('p', { class: 'ok', role: 'status', 'data-saved': String(answer.ranges.length) },
      'Saved: ' + answer.ranges.length + (answer.ranges.length === 1 ? ' range.' : ' ranges.')));
  }
  function refused(error, markEditor) {
    problems(status, error, markEditor ? 'Row' : 'Line');
    if (!markEditor || !error.rows) return;
    error.rows.forEach(function (problem) {
      var row = body.rows[problem.row - 1];
      if (!row) return;
      Array.prototype.forEach.call(row.querySelectorAll('input'), function (input) {
        if (problem.message.indexOf(input.name) >= 0) input.setAttribute('aria-invalid', 'true');
      });
    });
  }
  var save = el('button', { type: 'submit' }, 'Save co-brand table');
  var form = el('form', { class: 'card', novalidate: true, onsubmit: function (event) {
    event.preventDefault();
    Array.prototype.forEach.call(body.querySelectorAll('[aria-invalid]'), function (input) { input.removeAttribute('aria-invalid'); });
    save.disabled = true;
    C.api('PUT', '/v1/co-brand-table', { ranges: rows() }).then(show, function (error) { refused(error, true); })
      .then(function () { save.disabled = false; });
  } },
  el('h2', { id: 'co-brand-heading' }, 'Co-brand table'),
  el('p', null, 'Cards whose BIN falls in a range get its affiliate code in ', el('code', null, 'merchant_reference_info.affiliate_codes'),
    '. BINs are 6 to 8 digits (a shorter first BIN is padded with 0, a shorter last BIN with 9); codes are at most 20 ASCII letters or digits.'),
  el('table', { class: 'responsive editor', 'aria-labelledby': 'co-brand-heading' },
    el('thead', null, el('tr', null, el('th', { scope: 'col' }, 'First BIN'), el('th', { scope: 'col' }, 'Last BIN'),
      el('th', { scope: 'col' }, 'Affiliate code'), el('th', { scope: 'col' }, el('span', { class: 'visually-hidden' }, 'Actions')))),
    body),
  el('div', { class: 'actions' },
    el('button', { type: 'button', class: 'secondary', onclick: function () {
      var row = editorRow(body, {});
      row.querySelector('input').focus();
    } }, 'Add a range'),
    save),
  status);

  var file = el('input', { id: 'co-brand-file', type: 'file', accept: '.csv,text/csv' });
  var upload = el('form', { class: 'card', onsubmit: function (event) {
    event.preventDefault();
    if (!file.files.length) { problems(status, { message: 'Choose a CSV file first.' }, 'Line'); return; }
    file.files[0].text().then(function (text) {
      return C.api('PUT', '/v1/co-brand-table', text, { contentType: 'text/csv' });
    }).then(show, function (error) { refused(error, false); });
  } },
  el('h3', null, 'Upload a co-brand table'),
  el('p', null, 'A CSV file whose first line is ', el('code', null, 'bin_low,bin_high,affiliate_code'), '; it replaces the whole table.'),
  el('label', { for: 'co-brand-file' }, 'CSV file'), file,
  el('div', { class: 'actions' }, el('button', { type: 'submit' }, 'Upload co-brand CSV')));
  return [form, upload];
}

function binSection() {
  var status = el('div', { 'aria-live': 'polite' });
  var file = el('input', { id: 'bin-file', type: 'file', accept: '.csv,text/csv' });
  return el('form', { class: 'card', onsubmit: function (event) {
    event.preventDefault();
    if (!file.files.length) { problems(status, { message: 'Choose a CSV file first.' }, 'Line'); return; }
    file.files[0].text().then(function (text) {
      return C.api('PUT', '/v1/bin-table', text, { contentType: 'text/csv' });
    }).then(function (answer) {
      status.textContent = '';
      status.appendChild(el('p', { class: 'ok', role: 'status', 'data-saved': String(answer.rows) },
        'Loaded ' + answer.rows + (answer.rows === 1 ? ' row.' : ' rows.')));
    }, function (error) { problems(status, error, 'Line'); });
  } },
  el('h2', null, 'BIN table'),
  el('p', null, 'Issuer, funding, level and country by BIN prefix, for ', el('code', null, 'card_info'), '. A CSV file whose first line is ',
    el('code', null, 'bin_prefix,issuer,bank_id,funding,level,country,country_code'), ' (optionally ', el('code', null, ',issuer_zh_tw'),
    '); it replaces the whole table, or nothing when a line is bad.'),
  el('label', { for: 'bin-file' }, 'CSV file'), file,
  el('div', { class: 'actions' }, el('button', { type: 'submit' }, 'Upload BIN table')),
  status);
}

function render(container) {
  container.appendChild(el('h1', null, 'Card data'));
  return C.api('GET', '/v1/co-brand-table').then(function (table) {
    container.appendChild(el('div', null, coBrandSection(table), binSection()));
  });
}

C.registerPage({ id: 'card-data', title: 'Card data', render: render });
