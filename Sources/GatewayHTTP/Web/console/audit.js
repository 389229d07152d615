/*
 * The console's Audit log page: who changed what, newest first, 20 entries a page (GET /v1/audit-log with
 * cursor paging). The hash keeps the page's cursor (#/audit?after=cur_…), so Back returns to newer entries.
 */
import * as C from './console.js';
var el = C.el;

function detailText(detail) {
  var keys = Object.keys(detail || {}).sort();
  if (!keys.length) return '—';
  return keys.map(function (key) { return key + ': ' + detail[key]; }).join(', ');
}

function render(container, route) {
  var after = route.query.get('after');
  container.appendChild(el('h1', null, 'Audit log'));
  container.appendChild(el('p', { class: 'muted' }, 'Every change to this merchant\'s configuration, keys and payments, with who made it: ' +
    'a command (cli), a console session, or a secret key (api).'));
  var path = '/v1/audit-log?limit=20' + (after ? '&starting_after=' + encodeURIComponent(after) : '');
  return C.api('GET', path).then(function (page) {
    if (!page.data.length) {
      container.appendChild(el('p', null, after ? 'No older entries.' : 'Nothing has been recorded yet.'));
    } else {
      container.appendChild(el('table', { class: 'responsive', 'data-audit': '' },
        el('caption', { class: 'visually-hidden' }, 'Audit entries, newest first'),
        el('thead', null, el('tr', null, ['When', 'Action', 'Who', 'Target', 'Detail'].map(function (h) {
          return el('th', { scope: 'col' }, h);
        }))),
        el('tbody', null, page.data.map(function (entry) {
          return el('tr', { 'data-action': entry.action, 'data-entry': entry.id },
            C.cell('When', C.formatTime(entry.created_at)),
            C.cell('Action', el('code', null, entry.action)),
            C.cell('Who', [entry.actor.kind + ' · ', el('span', { class: 'mono' }, entry.actor.name)]),
            C.cell('Target', entry.target ? el('code', null, entry.target) : '—'),
            C.cell('Detail', detailText(entry.detail)));
        }))));
    }
    var pager = el('nav', { class: 'pager', 'aria-label': 'Audit log pages' });
    if (after) pager.appendChild(el('a', { href: '#/audit' }, 'Newest entries'));
    if (after) pager.appendChild(el('button', { type: 'button', class: 'secondary', onclick: function () { window.history.back(); } },
      'Newer entries'));
    if (page.has_more && page.next_cursor) {
      pager.appendChild(el('a', { href: '#/audit?after=' + encodeURIComponent(page.next_cursor), rel: 'next' }, 'Older entries'));
    }
    container.appendChild(pager);
  });
}

C.registerPage({ id: 'audit', title: 'Audit log', render: render });
