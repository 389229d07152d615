/*
 * The console's Processor page (#/processor): the processor settings in force (the type, the environment, the
 * fields that are not secret and each secret's last four characters, never a secret), a form that sets new ones
 * (PUT /v1/processor), and a connection test (POST /v1/processor/test) that moves no money, or says it cannot.
 *
 * A secret typed in the form is sent once and the field is cleared at once; the page keeps no secret.
 */
import * as C from './console.js';
var el = C.el;

/* Each type's fields, in order: name, label, whether it is secret, whether it is required, a hint. */
var TYPES = {
  sandbox: { label: 'Sandbox acquirer', environments: [], fields: [] },
  adyen: {
    label: 'Adyen', environments: ['test', 'live'],
    fields: [
      ['merchant_account', 'Merchant account', false, true, 'As in the Customer Area.'],
      ['api_key', 'API key', true, true, 'Developers, API credentials.'],
      ['hmac_key', 'HMAC key (hex)', true, true, 'The standard notification webhook\u2019s HMAC key.'],
      ['live_url_prefix', 'Live URL prefix', false, false, 'Live only: Developers, API URLs.'],
      ['notification_username', 'Notification user name', false, false, 'Optional: Basic auth on notifications.'],
      ['notification_password', 'Notification password', true, false, 'With the user name.']
    ]
  },
  checkout_com: {
    label: 'Checkout.com', environments: ['sandbox', 'production'],
    fields: [
      ['secret_key', 'Secret key (sk_\u2026)', true, true, ''],
      ['processing_channel_id', 'Processing channel (pc_\u2026)', false, true, ''],
      ['webhook_secret', 'Webhook signature key', true, true, 'The workflow webhook\u2019s signature key.']
    ]
  }
};

function current(settings) {
  var facts = [
    el('dt', null, 'Processor'), el('dd', { id: 'processor-type' },
      settings.type ? (TYPES[settings.type] ? TYPES[settings.type].label : settings.type) : 'None'),
    el('dt', null, 'Environment'), el('dd', { id: 'processor-environment' }, settings.environment || '—'),
    el('dt', null, 'Version'), el('dd', { id: 'processor-version' },
      settings.configured ? String(settings.version) : 'default (nothing stored)'),
    el('dt', null, 'Updated'), el('dd', null, C.formatTime(settings.updated_at))
  ];
  Object.keys(settings.fields || {}).sort().forEach(function (name) {
    facts.push(el('dt', null, name), el('dd', { class: 'mono', 'data-field': name }, settings.fields[name]));
  });
  Object.keys(settings.secret_hints || {}).sort().forEach(function (name) {
    facts.push(el('dt', null, name), el('dd', { class: 'mono', 'data-secret-hint': name }, settings.secret_hints[name]));
  });
  return el('section', { class: 'card', id: 'processor-current', 'aria-labelledby': 'processor-current-title' },
    el('h2', { id: 'processor-current-title' }, 'In force'),
    settings.type ? null : el('p', { class: 'error', id: 'processor-missing' },
      'No processor: payments are refused (processor_not_configured) until one is set.'),
    el('dl', { class: 'facts' }, facts));
}

function testSection() {
  var button = el('button', { type: 'button', id: 'processor-test' }, 'Test connection');
  var result = el('p', { id: 'processor-test-result', role: 'status' });
  button.addEventListener('click', function () {
    button.disabled = true;
    result.textContent = 'Testing…';
    result.removeAttribute('data-outcome');
    C.api('POST', '/v1/processor/test').then(function (answer) {
      button.disabled = false;
      var label = { ok: 'Connected', failed: 'Failed', cannot_test: 'Cannot test' }[answer.outcome] || answer.outcome;
      result.setAttribute('data-outcome', answer.outcome);
      result.textContent = label + ': ' + answer.message + (answer.http_status ? ' (HTTP ' + answer.http_status + ')' : '');
    }, function (error) {
      button.disabled = false;
      result.setAttribute('data-outcome', 'error');
      result.textContent = C.errorText(error);
    });
  });
  return el('section', { class: 'card', 'aria-labelledby': 'processor-test-title' },
    el('h2', { id: 'processor-test-title' }, 'Connection'),
    el('p', { class: 'muted' }, 'Calls the processor with the settings in force, with a call that moves no money.'),
    el('div', { class: 'actions' }, button), result);
}

function form(settings, redraw) {
  var type = el('select', { id: 'processor-type-input', name: 'type' }, Object.keys(TYPES).map(function (name) {
    return el('option', { value: name, selected: name === (settings.type || 'adyen') }, TYPES[name].label);
  }));
  var fields = el('div', { id: 'processor-fields' });
  var result = el('p', { id: 'processor-result', role: 'status' });
  var save = el('button', { type: 'submit', id: 'processor-save' }, 'Save settings');

  function drawFields() {
    fields.textContent = '';
    var spec = TYPES[type.value];
    if (spec.environments.length) {
      fields.appendChild(el('label', { for: 'processor-environment-input' }, 'Environment'));
      fields.appendChild(el('select', { id: 'processor-environment-input', name: 'environment' },
        spec.environments.map(function (name) {
          return el('option', { value: name, selected: type.value === settings.type && name === settings.environment }, name);
        })));
    }
    spec.fields.forEach(function (field) {
      var id = 'processor-' + field[0].replace(/_/g, '-');
      var known = type.value === settings.type && settings.fields ? settings.fields[field[0]] : null;
      fields.appendChild(el('label', { for: id }, field[1] + (field[3] ? '' : ' (optional)')));
      fields.appendChild(el('input', {
        id: id, name: field[0], type: field[2] ? 'password' : 'text', autocomplete: 'off', spellcheck: 'false',
        maxlength: '1024', value: known || '',
        placeholder: field[2] && settings.secret_hints && settings.secret_hints[field[0]] && type.value === settings.type
          ? 'kept: ' + settings.secret_hints[field[0]] + ' (type it again to save)' : ''
      }));
      if (field[4]) fields.appendChild(el('p', { class: 'muted' }, field[4]));
    });
    if (type.value === 'sandbox') fields.appendChild(el('p', { class: 'muted' }, 'The built-in sandbox acquirer: no money moves. Sandbox merchants only.'));
  }
  type.addEventListener('change', drawFields);
  drawFields();

  var node = el('form', { class: 'card', id: 'processor-form', novalidate: true, autocomplete: 'off' },
    el('h2', null, 'Set the processor'),
    el('p', { class: 'muted' }, 'Secrets are sent once, sealed by the gateway, and shown again only by their last four characters. ' +
      'Payments made before keep the settings they were authorized under.'),
    el('label', { for: 'processor-type-input' }, 'Processor'), type, fields,
    el('div', { class: 'actions' }, save), result);
  node.addEventListener('submit', function (event) {
    event.preventDefault();
    var body = { type: type.value };
    Array.prototype.forEach.call(node.querySelectorAll('#processor-fields input, #processor-fields select'), function (input) {
      var value = input.value.trim();
      if (value) body[input.name] = value;
      if (input.type === 'password') input.value = '';
    });
    save.disabled = true;
    result.textContent = 'Saving…';
    C.api('PUT', '/v1/processor', body).then(function (answer) {
      save.disabled = false;
      body = null;
      redraw('Saved: version ' + answer.version + '.');
    }, function (error) {
      save.disabled = false;
      body = null;
      result.textContent = C.errorText(error);
    });
  });
  return node;
}

function render(container) {
  function redraw(message) {
    container.textContent = '';
    container.appendChild(el('h1', null, 'Processor'));
    var status = el('p', { id: 'processor-saved', role: 'status' }, message || '');
    container.appendChild(status);
    var holder = el('div', null, el('p', { class: 'muted' }, 'Loading…'));
    container.appendChild(holder);
    return C.api('GET', '/v1/processor').then(function (settings) {
      holder.textContent = '';
      holder.appendChild(current(settings));
      holder.appendChild(testSection());
      holder.appendChild(form(settings, redraw));
    });
  }
  return redraw('');
}

C.registerPage({ id: 'processor', title: 'Processor', render: render });
