/*
 * The console's Webhooks page (#/webhooks): the endpoint URL, its signing secret rotated (the new secret shown
 * once), and the events with each delivery attempt and a one-click redelivery. webhookEventCard(event), exported, is
 * also used by a payment's page for the events about it.
 */
import * as C from './console.js';
var el = C.el;
var cell = C.cell;
var TYPES = ['payment.succeeded', 'payment.failed', 'payment.captured', 'payment.refunded', 'payment.voided',
  'payment.unknown_resolved', 'payment.capture_failed', 'payment.void_failed', 'refund.failed',
  'payment.charged_back', 'session.completed'];

function attemptsTable(attempts) {
  if (!attempts.length) return el('p', { class: 'muted' }, 'No delivery attempt yet.');
  return el('table', { class: 'responsive attempts' },
    el('thead', null, el('tr', null, ['Time', 'Outcome', 'HTTP status', 'Latency', 'Error'].map(function (t) {
      return el('th', { scope: 'col' }, t);
    }))),
    el('tbody', null, attempts.map(function (attempt) {
      return el('tr', null,
        cell('Time', C.formatTime(attempt.attempted_at)),
        cell('Outcome', C.statusBadge(attempt.state)),
        cell('HTTP status', attempt.http_status === null ? '—' : String(attempt.http_status)),
        cell('Latency', attempt.latency_ms === null ? '—' : attempt.latency_ms + ' ms'),
        cell('Error', attempt.error || '—'));
    })));
}

/* One event: its type, object, delivery state; its attempts on demand; Redeliver with its own key. */
export function webhookEventCard(event) {
  var id = event.id;
  var objectID = event.data && event.data.id;
  var state = el('span', { class: 'delivery-state' }, C.statusBadge(event.delivery.state));
  var summary = el('p', { class: 'muted delivery-summary' }, deliveryText(event.delivery));
  var attemptsHolder = el('div', { id: 'attempts-' + id, hidden: true });
  var toggle = el('button', { type: 'button', class: 'secondary show-attempts', 'aria-expanded': 'false', 'aria-controls': 'attempts-' + id }, 'Show attempts');
  var redeliver = el('button', { type: 'button', class: 'redeliver' }, 'Redeliver');
  var send = C.idempotentAction(redeliver, function (key) {
    return C.api('POST', '/v1/events/' + encodeURIComponent(id) + '/redeliver', null, { idempotencyKey: key });
  });
  var message = el('p', { role: 'status', class: 'redeliver-result' });
  var card = el('article', { class: 'card event', 'data-event-id': id, 'aria-label': event.type + ' ' + id },
    el('h3', null, event.type, ' ', el('span', { class: 'mono muted' }, id)),
    el('p', null, C.formatTime(event.created_at), objectID ? [' · about ', objectID.indexOf('pay_') === 0
      ? el('a', { href: '#/payments/' + encodeURIComponent(objectID), class: 'mono' }, objectID)
      : el('span', { class: 'mono' }, objectID)] : null),
    el('p', null, 'Delivery: ', state), summary,
    el('div', { class: 'actions' }, toggle, redeliver), message, attemptsHolder);

  function loadAttempts() {
    attemptsHolder.textContent = 'Loading…';
    return C.api('GET', '/v1/events/' + encodeURIComponent(id) + '/attempts').then(function (answer) {
      attemptsHolder.textContent = '';
      attemptsHolder.appendChild(attemptsTable(answer.data));
    }, function (error) { attemptsHolder.textContent = C.errorText(error); });
  }
  toggle.addEventListener('click', function () {
    var open = toggle.getAttribute('aria-expanded') === 'true';
    toggle.setAttribute('aria-expanded', open ? 'false' : 'true');
    toggle.textContent = open ? 'Show attempts' : 'Hide attempts';
    attemptsHolder.hidden = open;
    if (!open) loadAttempts();
  });
  redeliver.addEventListener('click', function () {
    var running = send();
    if (!running) return;
    redeliver.disabled = true;
    message.textContent = '';
    running.then(function (answer) {
      redeliver.disabled = false;
      state.textContent = '';
      state.appendChild(C.statusBadge(answer.delivery.state));
      summary.textContent = deliveryText(answer.delivery);
      message.textContent = 'Queued: it is sent again now.';
      if (!attemptsHolder.hidden) loadAttempts();
    }, function (error) {
      redeliver.disabled = false;
      message.textContent = C.errorText(error);
    });
  });
  return card;
}

function deliveryText(delivery) {
  var text = delivery.attempts + (delivery.attempts === 1 ? ' attempt' : ' attempts');
  if (delivery.last_status !== null && delivery.last_status !== undefined) text += ', last answered HTTP ' + delivery.last_status;
  if (delivery.next_attempt_at) text += ', next at ' + C.formatTime(delivery.next_attempt_at);
  return text + '.';
}

function renderEndpoint(section) {
  section.textContent = '';
  section.appendChild(el('h2', { id: 'endpoint-title' }, 'Endpoint'));
  var holder = el('div', null, el('p', { class: 'muted' }, 'Loading…'));
  section.appendChild(holder);
  return C.api('GET', '/v1/webhook-endpoint').then(function (endpoint) {
    holder.textContent = '';
    holder.appendChild(el('dl', { class: 'facts' },
      el('dt', null, 'URL'), el('dd', { class: 'mono', id: 'endpoint-url' }, endpoint.url || 'Not set'),
      el('dt', null, 'Deliveries'), el('dd', { id: 'endpoint-enabled' }, endpoint.url ? (endpoint.enabled ? 'On' : 'Held') : '—'),
      el('dt', null, 'Signing secret'), el('dd', { class: 'mono', id: 'endpoint-secret-hint' }, endpoint.secret_hint || '—')));
    var url = el('input', { id: 'endpoint-url-input', name: 'url', type: 'url', maxlength: '2048', required: true, value: endpoint.url || '',
      placeholder: 'https://shop.example/orchard/webhooks', autocomplete: 'off' });
    var enabled = el('input', { id: 'endpoint-enabled-input', name: 'enabled', type: 'checkbox', checked: endpoint.url ? endpoint.enabled : true });
    var result = el('div', { id: 'endpoint-result', role: 'status' });
    var save = el('button', { type: 'submit', id: 'endpoint-save' }, 'Save endpoint');
    var rotate = el('button', { type: 'button', class: 'secondary', id: 'endpoint-rotate', disabled: !endpoint.url }, 'Rotate secret');
    var form = el('form', { class: 'card', id: 'endpoint-form', novalidate: true },
      el('label', { for: 'endpoint-url-input' }, 'Endpoint URL'), url,
      el('p', { class: 'muted' }, 'https; plain http only to 127.0.0.1 in the sandbox. Saving makes a new signing secret.'),
      el('label', { for: 'endpoint-enabled-input', class: 'inline' }, enabled, ' Deliver events to it'),
      el('div', { class: 'actions' }, save, rotate), result);
    holder.appendChild(form);

    var busy = false;
    function put(targetURL) {
      if (busy) return;
      busy = true;
      save.disabled = true;
      rotate.disabled = true;
      result.textContent = '';
      C.api('PUT', '/v1/webhook-endpoint', { url: targetURL, enabled: enabled.checked }).then(function (answer) {
        busy = false;
        showSecretOnce(section, answer);
      }, function (error) {
        busy = false;
        save.disabled = false;
        rotate.disabled = !endpoint.url;
        result.appendChild(el('p', { class: 'error', role: 'alert' }, C.errorText(error)));
      });
    }
    form.addEventListener('submit', function (event) { event.preventDefault(); put(url.value.trim()); });
    rotate.addEventListener('click', function () { put(endpoint.url); });
  });
}

/* The new secret, once: it is in this box until "I have copied it", then only its hint remains. */
function showSecretOnce(section, answer) {
  section.textContent = '';
  var done = el('button', { type: 'button', id: 'secret-done' }, 'I have copied it');
  var box = el('div', { class: 'secret-once', id: 'new-secret', role: 'alert' },
    el('h2', { id: 'endpoint-title' }, 'New signing secret'),
    el('p', null, 'Endpoint ', el('span', { class: 'mono' }, answer.url), '. Copy the secret now: it is shown only this once. The previous secret keeps signing for 24 hours.'),
    el('code', { id: 'new-secret-value' }, answer.secret),
    el('div', { class: 'actions' }, done));
  section.appendChild(box);
  answer = null;
  done.focus();
  done.addEventListener('click', function () {
    renderEndpoint(section).then(function () { var heading = section.querySelector('h2'); if (heading) { heading.setAttribute('tabindex', '-1'); heading.focus(); } });
  });
}

function renderEvents(section) {
  section.appendChild(el('h2', null, 'Events'));
  var type = el('select', { id: 'events-type', name: 'type' }, el('option', { value: '' }, 'Any type'),
    TYPES.map(function (t) { return el('option', { value: t }, t); }));
  var filter = el('form', { class: 'card', role: 'search', 'aria-label': 'Filter events' },
    el('label', { for: 'events-type' }, 'Type'), type,
    el('div', { class: 'actions' }, el('button', { type: 'submit' }, 'Show')));
  var list = el('div', { id: 'events-list' });
  var message = el('p', { role: 'status', class: 'muted' });
  var pager = C.cursorPager('events', load);
  section.appendChild(filter);
  section.appendChild(message);
  section.appendChild(list);
  section.appendChild(pager.element);
  function load(cursor, page) {
    message.textContent = 'Loading…';
    list.textContent = '';
    var query = new URLSearchParams({ limit: '20' });
    if (type.value) query.set('type', type.value);
    if (cursor) query.set('cursor', cursor);
    return C.api('GET', '/v1/events?' + query.toString()).then(function (answer) {
      answer.data.forEach(function (event) { list.appendChild(webhookEventCard(event)); });
      message.textContent = answer.data.length ? 'Page ' + (page + 1) + ', newest first.' : 'No events.';
      return answer;
    }, function (error) { message.textContent = C.errorText(error); });
  }
  filter.addEventListener('submit', function (event) { event.preventDefault(); pager.restart(); });
  return pager.load();
}

C.registerPage({
  id: 'webhooks', title: 'Webhooks',
  render: function (container) {
    container.appendChild(el('h1', null, 'Webhooks'));
    var endpoint = el('section', { id: 'endpoint', 'aria-labelledby': 'endpoint-title' });
    var events = el('section', { id: 'events' });
    container.appendChild(endpoint);
    container.appendChild(events);
    return Promise.all([renderEndpoint(endpoint), renderEvents(events)]);
  }
});
