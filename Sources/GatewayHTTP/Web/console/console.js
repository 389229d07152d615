/*
 * The Orchard merchant console's core: sign-in, the session, navigation and the helpers every page uses.
 *
 * An ES module (no build step, no global); each page is a module that imports it
 * (import * as C from './console.js') and registers itself, and main.js starts the console once every page has.
 * Its exports:
 *   api(method, path, body, {idempotencyKey, contentType}) -> Promise of the parsed JSON answer (null for 204).
 *       Sends the session cookie (same origin) and, for POST/PUT/PATCH/DELETE, the X-CSRF-Token header.
 *       An API error rejects with {status, code, message, param, rows}; a network failure with status 0
 *       (rows: a refused table's bad rows, [{row, message}], or null).
 *   registerPage({id, title, render(container, route)}) adds a page; route is what follows its id in the
 *       location hash (#/payments/pay_123 -> {path: ["pay_123"], query: URLSearchParams}).
 *   formatAmount(amount, currency) -> "TWD 1,234.50" from the API's decimal string (never a float).
 *   el(tag, attrs, ...children) builds elements: text goes in as text nodes, never as HTML.
 *   statusBadge(status) -> <span class="status status-STATUS"> with the status, underscores read as spaces.
 *   cell(label, content, className) -> a <td> with data-label (the narrow layout shows it beside the value).
 *   cursorPager(idPrefix, fetchPage) -> {element, load, restart}: Newer/Older buttons (#PREFIX-newer,
 *       #PREFIX-older) over a cursor-paged list. fetchPage(cursor, pageIndex) draws a page and returns a
 *       promise of the API's answer ({next_cursor}), or of nothing when it failed (it shows the error itself).
 *
 * The secret key lives only in the sign-in field until the form is submitted; the field is cleared at once.
 * This script keeps nothing in the browser's web storage and writes no cookie: the session cookie is
 * HttpOnly, set by the gateway, and the CSRF token is kept in memory (GET /console/session gives it again
 * after a reload).
 */

var PAGE_ORDER = ['overview', 'payments', 'webhooks', 'processor', 'card-data', 'keys', 'audit'];
var pages = {};
var session = null;
var renderCount = 0;

function $(id) { return document.getElementById(id); }

/* A DOM builder: el('a', {href: '#/x', class: 'link', onclick: fn}, 'text', child, [more]). */
function el(tag, attrs) {
  var node = document.createElement(tag);
  if (attrs) {
    Object.keys(attrs).forEach(function (name) {
      var value = attrs[name];
      if (value === null || value === undefined || value === false) return;
      if (name.slice(0, 2) === 'on' && typeof value === 'function') {
        node.addEventListener(name.slice(2), value);
      } else if (name === 'class') {
        node.className = value;
      } else if (name === 'for') {
        node.htmlFor = value;
      } else if (name === 'value') {
        node.value = value;
      } else if (value === true) {
        node.setAttribute(name, '');
      } else {
        node.setAttribute(name, String(value));
      }
    });
  }
  for (var i = 2; i < arguments.length; i++) append(node, arguments[i]);
  return node;
}

function append(node, child) {
  if (child === null || child === undefined || child === false) return;
  if (Array.isArray(child)) { child.forEach(function (c) { append(node, c); }); return; }
  node.appendChild(child instanceof Node ? child : document.createTextNode(String(child)));
}

function statusBadge(status) { return el('span', { class: 'status status-' + status }, status.replace(/_/g, ' ')); }

function cell(label, content, className) { return el('td', { 'data-label': label, class: className || null }, content); }

/* Newer/Older over a list the API pages with cursors: the cursor of every page seen is kept, so Newer goes
   back without the API paging backwards. */
function cursorPager(idPrefix, fetchPage) {
  var cursors = [null];
  var page = 0;
  var newer = el('button', { type: 'button', class: 'secondary', id: idPrefix + '-newer', disabled: true }, 'Newer');
  var older = el('button', { type: 'button', class: 'secondary', id: idPrefix + '-older', disabled: true }, 'Older');
  function load() {
    var shown = page;
    return fetchPage(cursors[shown], shown).then(function (answer) {
      if (!answer) return;
      cursors[shown + 1] = answer.next_cursor;
      older.disabled = !answer.next_cursor;
      newer.disabled = shown === 0;
    });
  }
  older.addEventListener('click', function () { page += 1; load(); });
  newer.addEventListener('click', function () { page = Math.max(0, page - 1); load(); });
  return {
    element: el('div', { class: 'pager' }, newer, older),
    load: load,
    restart: function () { cursors = [null]; page = 0; return load(); }
  };
}

/* "1234.5" TWD -> "TWD 1,234.5": digits grouped as written, on the string (amounts are never floats). */
function formatAmount(amount, currency) {
  var text = String(amount === null || amount === undefined ? '' : amount);
  var match = /^(-?)(\d+)(\.\d+)?$/.exec(text);
  if (!match) return (currency ? currency + ' ' : '') + text;
  var whole = match[2].replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return (currency ? currency + ' ' : '') + match[1] + whole + (match[3] || '');
}

/* "2026-11-30T03:14:31Z" -> "2026-11-30 03:14:31 UTC" (the API's times are UTC). */
function formatTime(value) {
  if (!value) return '—';
  var match = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2})/.exec(value);
  return match ? match[1] + ' ' + match[2] + ' UTC' : String(value);
}

/* A fresh Idempotency-Key: 24 random bytes in hex. */
function newIdempotencyKey() {
  var bytes = new Uint8Array(24);
  window.crypto.getRandomValues(bytes);
  return 'console_' + Array.prototype.map.call(bytes, function (b) { return ('0' + b.toString(16)).slice(-2); }).join('');
}

/* One action's Idempotency-Key, kept on `holder` (its data-idempotency-key) until the API answers. A second
   press while the request runs does nothing (the returned function gives null); an error the API answered is
   final, so the next try gets a new key; a request that got no answer keeps its key, so a retry cannot do it
   twice. After a success the key is renewed too, unless `keepAfterSuccess` (a form the page draws again).
   `request(key)` makes the API call and returns its promise. */
function idempotentAction(holder, request, keepAfterSuccess) {
  var key;
  var busy = false;
  function renew() { key = newIdempotencyKey(); holder.setAttribute('data-idempotency-key', key); }
  renew();
  return function () {
    if (busy) return null;
    busy = true;
    return request(key).then(function (answer) {
      busy = false;
      if (!keepAfterSuccess) renew();
      return answer;
    }, function (error) {
      busy = false;
      if (error.status !== 0) renew();
      throw error;
    });
  };
}

function errorText(error) {
  if (!error) return 'Something went wrong.';
  if (error.status === 0) return 'The gateway could not be reached: ' + error.message;
  return (error.code ? error.code + ': ' : '') + (error.message || 'the request failed') +
    (error.status ? ' (HTTP ' + error.status + ')' : '');
}

function api(method, path, body, options) {
  options = options || {};
  method = method.toUpperCase();
  var headers = { 'Accept': 'application/json' };
  var payload;
  if (body !== undefined && body !== null) {
    if (typeof body === 'string' && options.contentType) {
      headers['Content-Type'] = options.contentType;
      payload = body;
    } else {
      headers['Content-Type'] = 'application/json';
      payload = JSON.stringify(body);
    }
  }
  if (['POST', 'PUT', 'PATCH', 'DELETE'].indexOf(method) >= 0 && session) {
    headers['X-CSRF-Token'] = session.csrf_token;
  }
  if (options.idempotencyKey) headers['Idempotency-Key'] = options.idempotencyKey;
  return fetch(path, { method: method, headers: headers, body: payload, credentials: 'same-origin', cache: 'no-store' })
    .then(function (response) {
      return response.text().then(function (text) {
        var parsed = null;
        if (text) { try { parsed = JSON.parse(text); } catch (e) { parsed = null; } }
        if (response.ok) return parsed;
        var detail = parsed && parsed.error ? parsed.error : {};
        var error = {
          status: response.status, code: detail.code || 'http_' + response.status,
          message: detail.message || response.statusText, param: detail.param || null,
          rows: Array.isArray(detail.rows) ? detail.rows : null,
          replayed: response.headers.get('Idempotent-Replayed') === 'true'
        };
        if (response.status === 401 && path.indexOf('/console/session') !== 0) signedOut('Your session ended; sign in again.');
        throw error;
      });
    }, function (failure) {
      throw { status: 0, code: 'network_error', message: String(failure && failure.message || failure), param: null };
    });
}

function registerPage(page) {
  if (!page || !page.id || typeof page.render !== 'function') throw new Error('a page needs an id and render()');
  pages[page.id] = page;
  if (session) { buildNav(); route(); }
}

function pageIDs() {
  var ids = PAGE_ORDER.filter(function (id) { return pages[id]; });
  Object.keys(pages).forEach(function (id) { if (ids.indexOf(id) < 0) ids.push(id); });
  return ids;
}

function parseHash() {
  var hash = window.location.hash.replace(/^#\/?/, '');
  var queryAt = hash.indexOf('?');
  var query = new URLSearchParams(queryAt >= 0 ? hash.slice(queryAt + 1) : '');
  var path = (queryAt >= 0 ? hash.slice(0, queryAt) : hash).split('/').filter(Boolean).map(decodeURIComponent);
  return { id: path[0], path: path.slice(1), query: query };
}

function buildNav() {
  var nav = $('console-nav');
  nav.textContent = '';
  var current = parseHash().id || pageIDs()[0];
  var list = el('ul', null, pageIDs().map(function (id) {
    return el('li', null, el('a', { href: '#/' + id, 'aria-current': id === current ? 'page' : null }, pages[id].title));
  }));
  nav.appendChild(list);
}

function route() {
  if (!session) return;
  var ids = pageIDs();
  var parsed = parseHash();
  if (!parsed.id || !pages[parsed.id]) {
    if (ids.length) { window.location.replace('#/' + ids[0]); }
    return;
  }
  buildNav();
  var container = $('console-page');
  container.textContent = '';
  container.hidden = false;
  var count = ++renderCount;
  document.title = pages[parsed.id].title + ' · Orchard console';
  try {
    var result = pages[parsed.id].render(container, { path: parsed.path, query: parsed.query });
    if (result && typeof result.then === 'function') {
      result.then(null, function (error) {
        if (count === renderCount) container.appendChild(el('p', { class: 'error', role: 'alert' }, errorText(error)));
      });
    }
  } catch (error) {
    container.appendChild(el('p', { class: 'error', role: 'alert' }, errorText(error)));
  }
}

/* Moves the focus to the page's heading once it is drawn (keyboard and screen-reader users land on it). */
function focusHeading(container) {
  var heading = container.querySelector('h1');
  if (heading) { heading.setAttribute('tabindex', '-1'); heading.focus(); }
}

function signedIn(answer) {
  session = { merchant_id: answer.merchant_id, csrf_token: answer.csrf_token, expires_at: answer.expires_at };
  $('sign-in').hidden = true;
  $('console-nav').hidden = false;
  $('sign-out').hidden = false;
  $('sign-out-everywhere').hidden = false;
  var merchant = $('console-merchant');
  merchant.textContent = answer.merchant_id;
  merchant.hidden = false;
  buildNav();
  route();
}

function signedOut(message) {
  session = null;
  $('console-page').hidden = true;
  $('console-page').textContent = '';
  $('console-nav').hidden = true;
  $('console-merchant').hidden = true;
  $('sign-out').hidden = true;
  $('sign-out-everywhere').hidden = true;
  $('sign-in').hidden = false;
  $('sign-in-error').textContent = message || '';
  $('secret-key').focus();
}

function submitSignIn(event) {
  event.preventDefault();
  var field = $('secret-key');
  var key = field.value.trim();
  field.value = '';
  if (!key) { $('sign-in-error').textContent = 'Enter the secret key.'; field.focus(); return; }
  var button = $('sign-in-button');
  button.disabled = true;
  $('sign-in-error').textContent = '';
  api('POST', '/console/session', { secret_key: key }).then(function (answer) {
    button.disabled = false;
    signedIn(answer);
    var container = $('console-page');
    focusHeading(container);
  }, function (error) {
    button.disabled = false;
    $('sign-in-error').textContent = error.code === 'invalid_credentials'
      ? 'That secret key is not valid.' : errorText(error);
    field.focus();
  });
  key = null;
}

function signOut() {
  api('DELETE', '/console/session').then(function () { signedOut('You are signed out.'); },
    function (error) { signedOut(error.status === 401 ? 'You are signed out.' : errorText(error)); });
}

/* "Sign out everywhere": every session of the merchant ends, in every browser, this one included. */
function signOutEverywhere() {
  api('DELETE', '/console/sessions').then(function (answer) {
    var count = answer && typeof answer.ended_sessions === 'number' ? answer.ended_sessions : 0;
    signedOut('You are signed out everywhere (' + count + (count === 1 ? ' session' : ' sessions') + ' ended).');
  }, function (error) { signedOut(error.status === 401 ? 'You are signed out.' : errorText(error)); });
}

function start() {
  $('sign-in-form').addEventListener('submit', submitSignIn);
  $('sign-out').addEventListener('click', signOut);
  $('sign-out-everywhere').addEventListener('click', signOutEverywhere);
  window.addEventListener('hashchange', function () {
    route();
    focusHeading($('console-page'));
  });
  api('GET', '/console/session').then(signedIn, function () { signedOut(''); });
}

/** The signed-in session's merchant and expiry, or null. */
function currentSession() {
  return session ? { merchant_id: session.merchant_id, expires_at: session.expires_at } : null;
}

/** Starts the console once every page has registered: main.js calls it after importing them. */
function startWhenReady() {
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
}

export {
  api, registerPage, formatAmount, formatTime, el, statusBadge, cell, cursorPager, errorText, newIdempotencyKey,
  idempotentAction, focusHeading, currentSession as session, startWhenReady as run
};
