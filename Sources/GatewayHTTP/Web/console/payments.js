/*
 * The console's Payments pages: the list (#/payments?filters) with filters and cursor paging over
 * GET /v1/payments, and a payment (#/payments/<id>) with its transitions, masked card, refunds, events and
 * their deliveries, and the capture, void and refund forms. Each form carries one Idempotency-Key made when
 * the form is drawn, so a double click or a retry never does the operation twice.
 */
import * as C from './console.js';
import { webhookEventCard } from './webhooks.js';
var el = C.el;
var cell = C.cell;
var statusBadge = C.statusBadge;

var STATUSES = ['processing', 'authorized', 'capture_pending', 'captured', 'refund_pending', 'partially_refunded',
  'refunded', 'void_pending', 'voided', 'charged_back', 'failed', 'unknown'];
var FILTERS = ['status', 'from', 'to', 'order_number', 'last_four', 'currency', 'amount_min', 'amount_max'];

/* The card as the console shows it: network, the first six digits, the last four, never more. */
export function maskedCard(card) {
  if (!card) return '—';
  var digits = (card.bin_code || '') + '••••••' + (card.last_four || '');
  return digits;
}

/* A date field (YYYY-MM-DD, UTC) as the API's RFC 3339 bound: from the day's start; "to" is inclusive, so
   the bound is the next day's start (created_to is exclusive). */
function dayBound(day, inclusiveEnd) {
  var match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(day || '');
  if (!match) return null;
  if (!inclusiveEnd) return day + 'T00:00:00Z';
  var next = new Date(Date.UTC(+match[1], +match[2] - 1, +match[3] + 1));
  return next.toISOString().slice(0, 10) + 'T00:00:00Z';
}

function listQuery(filters, cursor) {
  var query = new URLSearchParams();
  query.set('limit', '20');
  if (filters.status) query.set('status', filters.status);
  if (filters.from) query.set('created_from', dayBound(filters.from, false));
  if (filters.to) query.set('created_to', dayBound(filters.to, true));
  ['order_number', 'last_four', 'currency', 'amount_min', 'amount_max'].forEach(function (name) {
    if (filters[name]) query.set(name, filters[name]);
  });
  if (cursor) query.set('cursor', cursor);
  return query.toString();
}

function field(id, label, control, hint) {
  return el('div', null, el('label', { for: id }, label), control, hint ? el('p', { class: 'muted', id: id + '-hint' }, hint) : null);
}

function renderList(container, route) {
  var filters = {};
  FILTERS.forEach(function (name) { filters[name] = route.query.get(name) || ''; });
  var heading = el('h1', null, 'Payments');
  var statusSelect = el('select', { id: 'filter-status', name: 'status' },
    el('option', { value: '' }, 'Any status'),
    STATUSES.map(function (status) { return el('option', { value: status, selected: filters.status === status }, status.replace(/_/g, ' ')); }));
  var form = el('form', { class: 'card filters', id: 'payment-filters', role: 'search', 'aria-label': 'Filter payments' },
    field('filter-status', 'Status', statusSelect),
    field('filter-from', 'Created from (UTC)', el('input', { id: 'filter-from', name: 'from', type: 'date', value: filters.from })),
    field('filter-to', 'Created to (UTC, inclusive)', el('input', { id: 'filter-to', name: 'to', type: 'date', value: filters.to })),
    field('filter-order-number', 'Order number', el('input', { id: 'filter-order-number', name: 'order_number', maxlength: '64', value: filters.order_number })),
    field('filter-last-four', 'Card last four', el('input', { id: 'filter-last-four', name: 'last_four', inputmode: 'numeric', pattern: '[0-9]{4}', maxlength: '4', value: filters.last_four })),
    field('filter-currency', 'Currency', el('input', { id: 'filter-currency', name: 'currency', maxlength: '3', autocapitalize: 'characters', value: filters.currency, 'aria-describedby': 'filter-currency-hint' }), 'Needed with an amount range.'),
    field('filter-amount-min', 'Amount from', el('input', { id: 'filter-amount-min', name: 'amount_min', inputmode: 'decimal', value: filters.amount_min })),
    field('filter-amount-max', 'Amount to', el('input', { id: 'filter-amount-max', name: 'amount_max', inputmode: 'decimal', value: filters.amount_max })),
    el('div', { class: 'actions' },
      el('button', { type: 'submit', id: 'apply-filters' }, 'Apply filters'),
      el('button', { type: 'button', class: 'secondary', id: 'clear-filters', onclick: function () { window.location.hash = '#/payments'; } }, 'Clear')));
  var message = el('p', { role: 'status', id: 'payments-status', class: 'muted' });
  var table = el('table', { class: 'responsive', id: 'payments-table' },
    el('caption', { class: 'muted' }, 'Newest first'),
    el('thead', null, el('tr', null, ['Created', 'Payment', 'Order number', 'Amount', 'Status', 'Card'].map(function (title) {
      return el('th', { scope: 'col', class: title === 'Amount' ? 'amount' : null }, title);
    }))));
  var body = el('tbody');
  table.appendChild(body);
  var pager = C.cursorPager('payments', load);
  container.appendChild(heading);
  container.appendChild(form);
  container.appendChild(message);
  container.appendChild(table);
  container.appendChild(pager.element);

  form.addEventListener('submit', function (event) {
    event.preventDefault();
    var query = new URLSearchParams();
    FILTERS.forEach(function (name) {
      var value = form.elements[name].value.trim();
      if (name === 'currency') value = value.toUpperCase();
      if (value) query.set(name, value);
    });
    var hash = '#/payments' + (query.toString() ? '?' + query.toString() : '');
    if (window.location.hash === hash) pager.restart(); else window.location.hash = hash;
  });

  function load(cursor, page) {
    message.textContent = 'Loading…';
    body.textContent = '';
    return C.api('GET', '/v1/payments?' + listQuery(filters, cursor)).then(function (answer) {
      answer.data.forEach(function (payment) {
        body.appendChild(el('tr', { 'data-payment-id': payment.id },
          cell('Created', C.formatTime(payment.created_at)),
          cell('Payment', el('a', { href: '#/payments/' + encodeURIComponent(payment.id), class: 'mono' }, payment.id)),
          cell('Order number', payment.order_number || '—'),
          cell('Amount', C.formatAmount(payment.amount, payment.currency), 'amount'),
          cell('Status', statusBadge(payment.status)),
          cell('Card', el('span', { class: 'mono' }, maskedCard(payment.card_info)))));
      });
      message.textContent = answer.data.length ? 'Page ' + (page + 1) + ': ' + answer.data.length + ' payments.' : 'No payments match.';
      return answer;
    }, function (error) {
      message.textContent = '';
      message.appendChild(el('span', { class: 'error' }, C.errorText(error)));
    });
  }
  return pager.load();
}

/* One operation's form: its Idempotency-Key is made now and kept until the API answers; then the page is
   drawn again (new forms, new keys). An error the API answered is shown, and the next try gets a new key,
   since the answer was final; a request that got no answer keeps its key, so a retry cannot do it twice. */
function operationForm(options) {
  var result = el('p', { role: 'alert', class: 'error', id: options.id + '-result' });
  var form = el('form', { class: 'card', id: options.id, 'aria-labelledby': options.id + '-title' },
    el('h2', { id: options.id + '-title' }, options.title),
    options.fields || null,
    el('div', { class: 'actions' }, el('button', { type: 'submit', id: options.id + '-submit', class: options.danger ? 'danger' : null }, options.button)),
    result);
  var submit = C.idempotentAction(form, function (key) {
    return C.api('POST', options.path, options.body(form), { idempotencyKey: key });
  }, true);
  form.addEventListener('submit', function (event) {
    event.preventDefault();
    var button = form.querySelector('button[type=submit]');
    var running = submit();
    if (!running) return;
    button.disabled = true;
    result.textContent = '';
    running.then(function (answer) {
      options.done(answer);
    }, function (error) {
      button.disabled = false;
      result.textContent = C.errorText(error);
    });
  });
  return form;
}

function amountField(id, label, hint) {
  return el('div', null,
    el('label', { for: id }, label),
    el('input', { id: id, name: 'amount', inputmode: 'decimal', autocomplete: 'off', 'aria-describedby': id + '-hint' }),
    el('p', { class: 'muted', id: id + '-hint' }, hint));
}

function decimalOrNull(text) {
  var value = (text || '').trim();
  return value ? value : null;
}

function renderPayment(container, id) {
  var heading = el('h1', null, 'Payment ', el('span', { class: 'mono' }, id));
  container.appendChild(el('p', null, el('a', { href: '#/payments' }, '← All payments')));
  container.appendChild(heading);
  var holder = el('div', { id: 'payment-detail' }, el('p', { class: 'muted', role: 'status' }, 'Loading…'));
  container.appendChild(holder);
  var path = '/v1/payments/' + encodeURIComponent(id);
  function redraw() {
    return C.api('GET', path).then(function (payment) { draw(payment); });
  }
  function draw(payment) {
    holder.textContent = '';
    var card = payment.card_info || {};
    holder.appendChild(el('section', { class: 'card', 'aria-labelledby': 'summary-title' },
      el('h2', { id: 'summary-title' }, 'Summary'),
      el('dl', { class: 'facts' },
        el('dt', null, 'Status'), el('dd', { id: 'payment-status' }, statusBadge(payment.status)),
        el('dt', null, 'Amount'), el('dd', { id: 'payment-amount' }, C.formatAmount(payment.amount, payment.currency)),
        el('dt', null, 'Captured'), el('dd', { id: 'payment-captured' }, C.formatAmount(payment.captured_amount, payment.currency)),
        el('dt', null, 'Refunded'), el('dd', { id: 'payment-refunded' }, C.formatAmount(payment.refunded_amount, payment.currency)),
        el('dt', null, 'Order number'), el('dd', null, payment.order_number || '—'),
        el('dt', null, 'Capture'), el('dd', null, payment.capture_mode + (payment.capture_at ? ' at ' + C.formatTime(payment.capture_at) : '')),
        el('dt', null, 'Card'), el('dd', { class: 'mono', id: 'payment-card' }, maskedCard(card)),
        el('dt', null, 'Card details'), el('dd', null, [card.issuer, card.level, card.country_code].filter(Boolean).join(' · ') || '—'),
        el('dt', null, 'Authorization code'), el('dd', null, payment.auth_code || '—'),
        el('dt', null, 'Processor'), el('dd', { id: 'payment-processor' }, payment.processor || payment.acquirer,
          payment.processor_reference ? [' · ', el('span', { class: 'mono' }, payment.processor_reference)] : null),
        el('dt', null, 'Decline code'), el('dd', null, (payment.decline_code || '—') +
          (payment.processor_code ? ' (processor: ' + payment.processor_code + ')' : '')),
        el('dt', null, 'Created'), el('dd', null, C.formatTime(payment.created_at)),
        el('dt', null, 'Updated'), el('dd', null, C.formatTime(payment.updated_at)))));

    holder.appendChild(el('h2', null, 'State transitions'));
    holder.appendChild(el('table', { class: 'responsive', id: 'payment-transitions' },
      el('thead', null, el('tr', null, ['Time', 'From', 'To', 'Cause'].map(function (t) { return el('th', { scope: 'col' }, t); }))),
      el('tbody', null, payment.transitions.map(function (transition) {
        return el('tr', null, cell('Time', C.formatTime(transition.at)), cell('From', transition.from ? statusBadge(transition.from) : '—'),
          cell('To', statusBadge(transition.to)), cell('Cause', transition.cause.replace(/_/g, ' ')));
      }))));

    holder.appendChild(el('h2', null, 'Refunds'));
    holder.appendChild(payment.refunds.length ? el('table', { class: 'responsive', id: 'payment-refunds' },
      el('thead', null, el('tr', null, ['Time', 'Refund', 'Amount', 'Status', 'Reason'].map(function (t) { return el('th', { scope: 'col', class: t === 'Amount' ? 'amount' : null }, t); }))),
      el('tbody', null, payment.refunds.map(function (refund) {
        return el('tr', { 'data-refund-id': refund.id }, cell('Time', C.formatTime(refund.created_at)), cell('Refund', el('span', { class: 'mono' }, refund.id)),
          cell('Amount', C.formatAmount(refund.amount, refund.currency), 'amount'), cell('Status', statusBadge(refund.status)), cell('Reason', refund.reason || '—'));
      }))) : el('p', { class: 'muted', id: 'payment-refunds' }, 'No refunds.'));

    var actions = el('div', { id: 'payment-actions' });
    holder.appendChild(el('h2', null, 'Actions'));
    holder.appendChild(actions);
    if (payment.status === 'authorized') {
      actions.appendChild(operationForm({
        id: 'capture-form', title: 'Capture', button: 'Capture', path: path + '/capture',
        fields: amountField('capture-amount', 'Amount to capture (' + payment.currency + ')', 'Leave empty to capture ' + C.formatAmount(payment.amount, payment.currency) + '.'),
        body: function (form) { var amount = decimalOrNull(form.elements.amount.value); return amount ? { amount: amount } : {}; },
        done: function () { redraw(); }
      }));
      actions.appendChild(operationForm({
        id: 'void-form', title: 'Void', button: 'Void the authorization', danger: true, path: path + '/void',
        fields: el('p', { class: 'muted' }, 'Releases the authorization; nothing is charged.'),
        body: function () { return {}; }, done: function () { redraw(); }
      }));
    }
    if (payment.status === 'captured' || payment.status === 'partially_refunded' || payment.status === 'refund_pending') {
      actions.appendChild(operationForm({
        id: 'refund-form', title: 'Refund', button: 'Refund', danger: true, path: path + '/refunds',
        fields: [amountField('refund-amount', 'Amount to refund (' + payment.currency + ')', 'Leave empty to refund what remains; captured ' +
          C.formatAmount(payment.captured_amount, payment.currency) + ', refunded ' + C.formatAmount(payment.refunded_amount, payment.currency) + '.'),
        el('label', { for: 'refund-reason' }, 'Reason (optional)'),
        el('input', { id: 'refund-reason', name: 'reason', maxlength: '200', autocomplete: 'off' })],
        body: function (form) {
          var body = {};
          var amount = decimalOrNull(form.elements.amount.value);
          if (amount) body.amount = amount;
          var reason = form.elements.reason.value.trim();
          if (reason) body.reason = reason;
          return body;
        },
        done: function () { redraw(); }
      }));
    }
    if (!actions.childNodes.length) actions.appendChild(el('p', { class: 'muted' }, 'No operation applies to a ' + payment.status.replace(/_/g, ' ') + ' payment.'));

    holder.appendChild(el('h2', null, 'Events and deliveries'));
    var events = el('div', { id: 'payment-events' }, el('p', { class: 'muted' }, 'Loading…'));
    holder.appendChild(events);
    C.api('GET', '/v1/events?limit=100&object_id=' + encodeURIComponent(payment.id)).then(function (answer) {
      events.textContent = '';
      if (!answer.data.length) { events.appendChild(el('p', { class: 'muted' }, 'No events.')); return; }
      answer.data.forEach(function (event) { events.appendChild(webhookEventCard(event)); });
    }, function (error) { events.textContent = C.errorText(error); });
  }
  return redraw();
}

C.registerPage({
  id: 'payments', title: 'Payments',
  render: function (container, route) {
    if (route.path.length) return renderPayment(container, route.path[0]);
    return renderList(container, route);
  }
});
