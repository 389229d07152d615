/*
 * The console's Keys and Apple Pay page: payment processing keys (create a CSR and download it, upload Apple's
 * certificate, see which key is active and when each expires, retire the old key to finish a rotation), the
 * merchant identity certificate, the Apple Pay domains, and the gateway's warnings for certificates expiring
 * within 30 days (GET /v1/merchant-keys). No private key ever reaches the browser.
 */
import * as C from './console.js';
var el = C.el;

/* Offers `text` as a file download (a CSR to send to Apple). */
function download(name, text) {
  var url = URL.createObjectURL(new Blob([text], { type: 'application/pkcs10' }));
  var link = el('a', { href: url, download: name });
  document.body.appendChild(link);
  link.click();
  link.remove();
  setTimeout(function () { URL.revokeObjectURL(url); }, 1000);
}

function message(target, node) { target.textContent = ''; target.appendChild(node); }
function failure(target) { return function (error) { message(target, el('p', { class: 'error', role: 'alert' }, C.errorText(error))); }; }

function csrBox(csr) {
  var name = csr.id + '.csr';
  return el('div', { class: 'secret-once', 'data-csr': csr.id },
    el('p', null, 'CSR for ', el('code', null, csr.id), ' (', csr.type, ', ', csr.purpose, '). Send it to Apple, then upload the certificate Apple returns below.'),
    el('label', { for: 'csr-' + csr.id }, 'Certificate signing request'),
    el('textarea', { id: 'csr-' + csr.id, class: 'pem', readonly: true }, csr.csr_pem),
    el('div', { class: 'actions' }, el('button', { type: 'button', onclick: function () { download(name, csr.csr_pem); } },
      'Download ' + name)));
}

function certificateForm(key, reload) {
  var id = 'cert-' + key.id;
  var area = el('textarea', { id: id, class: 'pem', placeholder: '-----BEGIN CERTIFICATE-----' });
  var status = el('div', { 'aria-live': 'polite' });
  var form = el('form', null,
    el('label', { for: id }, 'Apple\'s certificate for ' + key.id + ' (PEM)'), area,
    el('div', { class: 'actions' }, el('button', { type: 'submit' }, 'Upload certificate')), status);
  var upload = C.idempotentAction(form, function (idempotencyKey) {
    var pem = area.value.trim();
    return key.purpose === 'identity'
      ? C.api('POST', '/v1/merchant-identity/certificate', { certificate: pem }, { idempotencyKey: idempotencyKey })
      : C.api('POST', '/v1/merchant-keys/' + encodeURIComponent(key.id) + '/certificate', { certificate_pem: pem },
        { idempotencyKey: idempotencyKey });
  });
  form.addEventListener('submit', function (event) {
    event.preventDefault();
    var running = upload();
    if (running) running.then(reload, failure(status));
  });
  return form;
}

function keyTable(keys, reload, status) {
  var activeProcessing = keys.filter(function (k) { return k.purpose === 'processing' && k.state === 'active'; }).length;
  return el('table', { class: 'responsive', 'data-keys': '' },
    el('thead', null, el('tr', null, ['Key', 'Purpose', 'Type', 'State', 'Valid until', 'Actions'].map(function (h) {
      return el('th', { scope: 'col' }, h);
    }))),
    el('tbody', null, keys.map(function (key) {
      var actions = [];
      if (key.purpose === 'processing' && key.state === 'active' && activeProcessing > 1) {
        actions.push(el('button', { type: 'button', class: 'danger', 'aria-label': 'Retire ' + key.id, onclick: function () {
          if (!window.confirm('Retire ' + key.id + '? Tokens encrypted for it will no longer be opened.')) return;
          C.api('POST', '/v1/merchant-keys/' + encodeURIComponent(key.id) + '/retire').then(reload, failure(status));
        } }, 'Retire'));
      }
      if (key.state === 'pending') actions.push(certificateForm(key, reload));
      return el('tr', { 'data-key': key.id, 'data-state': key.state },
        C.cell('Key', el('code', null, key.id)),
        C.cell('Purpose', key.purpose),
        C.cell('Type', key.type),
        C.cell('State', C.statusBadge(key.state)),
        C.cell('Valid until', C.formatTime(key.not_after)),
        C.cell('Actions', actions.length ? actions : '—'));
    })));
}

function domainsForm(domains) {
  var area = el('textarea', { id: 'apple-pay-domains', rows: 4 }, domains.join('\n'));
  var status = el('div', { 'aria-live': 'polite' });
  return el('form', { class: 'card', onsubmit: function (event) {
    event.preventDefault();
    var list = area.value.split(/\s+/).filter(Boolean);
    C.api('PUT', '/v1/apple-pay/domains', { domains: list }).then(function (answer) {
      area.value = answer.domains.join('\n');
      message(status, el('p', { class: 'ok', role: 'status' }, 'Saved ' + answer.domains.length + ' domains.'));
    }, failure(status));
  } },
  el('h2', null, 'Apple Pay domains'),
  el('p', null, 'Host names whose pages may use Apple Pay on the Web, one a line. Register each with Apple too.'),
  el('label', { for: 'apple-pay-domains' }, 'Domains'), area,
  el('div', { class: 'actions' }, el('button', { type: 'submit' }, 'Save domains')), status);
}

function render(container) {
  container.appendChild(el('h1', null, 'Keys and Apple Pay'));
  var body = el('div');
  container.appendChild(body);
  function reload(fresh) {
    return Promise.all([C.api('GET', '/v1/merchant-keys'), C.api('GET', '/v1/apple-pay/domains')]).then(function (answers) {
      draw(answers[0], answers[1].domains, fresh);
    });
  }
  function draw(list, domains, fresh) {
    body.textContent = '';
    var status = el('div', { 'aria-live': 'polite' });
    if (list.warnings.length) {
      body.appendChild(el('div', { role: 'alert', 'data-warnings': '' }, list.warnings.map(function (warning) {
        return el('p', { class: 'warning', 'data-warning': warning.key_id },
          (warning.expired ? 'Expired: ' : 'Expiring soon: ') + warning.message + ' (' + C.formatTime(warning.not_after) + ').');
      })));
    }
    var processing = list.data.filter(function (k) { return k.purpose === 'processing'; });
    var identity = list.data.filter(function (k) { return k.purpose === 'identity'; });
    var type = el('select', { id: 'csr-type' }, el('option', { value: 'ec' }, 'EC P-256 (recommended)'), el('option', { value: 'rsa' }, 'RSA 2048'));
    var csrForm = el('form', null, el('label', { for: 'csr-type' }, 'Key type'), type,
      el('div', { class: 'actions' }, el('button', { type: 'submit' }, 'Create a processing key CSR')));
    var createCSR = C.idempotentAction(csrForm, function (key) {
      return C.api('POST', '/v1/merchant-keys/csr', { type: type.value, purpose: 'processing' }, { idempotencyKey: key });
    });
    csrForm.addEventListener('submit', function (event) {
      event.preventDefault();
      var running = createCSR();
      if (running) running.then(function (csr) { return reload(csr); }, failure(status));
    });
    var identityStatus = el('div', { 'aria-live': 'polite' });
    var identityButton = el('button', { type: 'button' }, 'Create an identity CSR');
    var createIdentityCSR = C.idempotentAction(identityButton, function (key) {
      return C.api('POST', '/v1/merchant-identity/csr', null, { idempotencyKey: key });
    });
    identityButton.addEventListener('click', function () {
      var running = createIdentityCSR();
      if (running) running.then(function (csr) { return reload(csr); }, failure(identityStatus));
    });
    body.appendChild(el('section', { class: 'card', 'aria-labelledby': 'processing-heading' },
      el('h2', { id: 'processing-heading' }, 'Payment processing keys'),
      el('p', null, 'To rotate: create a CSR, upload Apple\'s certificate for it (both keys are then active), switch Apple\'s merchant to the new certificate, then retire the old key.'),
      keyTable(processing, function () { return reload(); }, status),
      csrForm,
      fresh && fresh.purpose === 'processing' ? csrBox(fresh) : null, status));
    body.appendChild(el('section', { class: 'card', 'aria-labelledby': 'identity-heading' },
      el('h2', { id: 'identity-heading' }, 'Merchant identity (Apple Pay on the Web)'),
      identity.length ? keyTable(identity, function () { return reload(); }, identityStatus)
        : el('p', { class: 'muted' }, 'No merchant identity yet.'),
      el('div', { class: 'actions' }, identityButton),
      fresh && fresh.purpose === 'identity' ? csrBox(fresh) : null, identityStatus));
    body.appendChild(domainsForm(domains));
    var box = body.querySelector('[data-csr] button');
    if (box) box.focus();
  }
  return reload();
}

C.registerPage({ id: 'keys', title: 'Keys and Apple Pay', render: render });
