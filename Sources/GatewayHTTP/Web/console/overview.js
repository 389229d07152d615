/*
 * The console's Overview page: payment count, volume per currency, approval rate and decline codes per hour
 * (last 24 h) and per day (last 30 days), drawn as inline SVG from GET /v1/reports/overview.
 *
 * Amounts stay decimal strings: a bar's height comes from the amount's minor units as a BigInt, never from a
 * float of the amount. Each bar carries data-start and data-value, and each chart a table of its figures.
 */
import * as C from './console.js';
var el = C.el;
var SVG = 'http://www.w3.org/2000/svg';
var WIDTH = 720, HEIGHT = 180, LEFT = 8, BOTTOM = 22;

function svg(tag, attrs, children) {
  var node = document.createElementNS(SVG, tag);
  Object.keys(attrs || {}).forEach(function (name) { node.setAttribute(name, String(attrs[name])); });
  (children || []).forEach(function (child) {
    node.appendChild(typeof child === 'string' ? document.createTextNode(child) : child);
  });
  return node;
}

/* "1234.50" -> 123450n: the minor units of a response amount (it has exactly the currency's decimals). */
function minorUnits(amount) { return BigInt(String(amount).replace('.', '')); }

/* The share (0 to 1) `part` is of `whole`, both BigInt, to a thousandth: for drawing only. */
function share(part, whole) { return whole > 0n ? Number((part * 1000n) / whole) / 1000 : 0; }

function label(start, interval) {
  var match = /^(\d{4})-(\d{2})-(\d{2})T(\d{2})/.exec(start);
  if (!match) return start;
  return interval === 'hour' ? match[4] + ':00' : match[2] + '-' + match[3];
}

/* A bar chart: one bar per bucket; values are [{start, text, share}] (share 0 to 1 of the tallest). */
function barChart(id, title, values, interval) {
  var titleID = id + '-title';
  var count = values.length;
  var step = (WIDTH - LEFT) / count;
  var bars = values.map(function (value, index) {
    var height = Math.round(value.share * (HEIGHT - BOTTOM - 4));
    var x = LEFT + index * step;
    var bar = svg('rect', {
      x: x.toFixed(1), y: HEIGHT - BOTTOM - height, width: Math.max(1, step - 2).toFixed(1), height: height,
      class: 'bar', 'data-start': value.start, 'data-value': value.text
    }, [svg('title', {}, [label(value.start, interval) + ': ' + value.text])]);
    return bar;
  });
  var ticks = [];
  var every = interval === 'hour' ? 6 : 7;
  values.forEach(function (value, index) {
    if (index % every === 0 || index === count - 1) {
      var anchor = index === 0 ? 'start' : index === count - 1 ? 'end' : 'middle';
      var at = index === 0 ? LEFT : index === count - 1 ? WIDTH : LEFT + index * step + step / 2;
      ticks.push(svg('text', { x: at.toFixed(1), y: HEIGHT - 6, 'text-anchor': anchor, class: 'tick' },
        [label(value.start, interval)]));
    }
  });
  var chart = svg('svg', {
    viewBox: '0 0 ' + WIDTH + ' ' + HEIGHT, role: 'img', 'aria-labelledby': titleID, class: 'chart',
    'data-chart': id
  }, [svg('title', { id: titleID }, [title]),
    svg('line', { x1: LEFT, y1: HEIGHT - BOTTOM, x2: WIDTH, y2: HEIGHT - BOTTOM, class: 'axis' })].concat(bars, ticks));
  return chart;
}

/* The figures behind a chart as a table, for keyboard and screen-reader users. */
function figuresTable(caption, interval, values) {
  return el('details', { class: 'chart-data' }, el('summary', null, 'Figures: ' + caption),
    el('table', { class: 'responsive' },
      el('thead', null, el('tr', null, el('th', { scope: 'col' }, interval === 'hour' ? 'Hour (UTC)' : 'Day (UTC)'),
        el('th', { scope: 'col', class: 'amount' }, caption))),
      el('tbody', null, values.map(function (value) {
        return el('tr', null, C.cell('Time', C.formatTime(value.start)),
          C.cell(caption, value.text, 'amount'));
      }))));
}

function chartSection(id, title, interval, values) {
  return el('section', { class: 'card', 'aria-labelledby': id + '-heading' },
    el('h2', { id: id + '-heading' }, title), barChart(id, title, values, interval), figuresTable(title, interval, values));
}

function countValues(series) {
  var most = series.buckets.reduce(function (max, bucket) { return Math.max(max, bucket.count); }, 0);
  return series.buckets.map(function (bucket) {
    return { start: bucket.start, text: String(bucket.count), share: most ? bucket.count / most : 0 };
  });
}

function rateValues(series) {
  return series.buckets.map(function (bucket) {
    var rate = bucket.approval_rate;
    return { start: bucket.start, text: rate === null ? '—' : rate + ' %', share: rate === null ? 0 : Number(rate) / 100 };
  });
}

function volumeValues(series, currency) {
  var volumes = series.buckets.map(function (bucket) {
    var entry = bucket.currencies.filter(function (c) { return c.currency === currency; })[0];
    return entry ? entry.volume : null;
  });
  var most = volumes.reduce(function (max, volume) {
    if (volume === null) return max;
    var minor = minorUnits(volume);
    return minor > max ? minor : max;
  }, 0n);
  return series.buckets.map(function (bucket, index) {
    var volume = volumes[index];
    return {
      start: bucket.start, text: volume === null ? C.formatAmount('0', currency) : C.formatAmount(volume, currency),
      share: volume === null ? 0 : share(minorUnits(volume), most)
    };
  });
}

function summary(series) {
  var totals = series.totals;
  return el('dl', { class: 'facts', 'data-summary': series.interval },
    el('dt', null, 'Payments'), el('dd', { 'data-figure': 'count' }, String(totals.count)),
    el('dt', null, 'Approved'), el('dd', { 'data-figure': 'approved' }, String(totals.approved)),
    el('dt', null, 'Declined'), el('dd', { 'data-figure': 'declined' }, String(totals.declined)),
    el('dt', null, 'Waiting for the processor'), el('dd', { 'data-figure': 'pending' }, String(totals.pending)),
    el('dt', null, 'Approval rate'), el('dd', { 'data-figure': 'approval_rate' },
      totals.approval_rate === null ? '—' : totals.approval_rate + ' %'),
    el('dt', null, 'Volume (approved)'), el('dd', { 'data-figure': 'volume' },
      totals.currencies.length ? el('ul', { class: 'plain' }, totals.currencies.map(function (entry) {
        return el('li', { 'data-currency': entry.currency }, C.formatAmount(entry.volume, entry.currency) +
          ' (' + entry.approved + ' approved of ' + entry.count + ' payments)');
      })) : 'none'));
}

function declineSection(series) {
  var codes = series.decline_codes;
  var most = codes.reduce(function (max, code) { return Math.max(max, code.count); }, 0);
  var body;
  if (!codes.length) {
    body = el('p', { class: 'muted' }, 'No declined payments in this period.');
  } else {
    var rowHeight = 26;
    var chart = svg('svg', {
      viewBox: '0 0 ' + WIDTH + ' ' + (codes.length * rowHeight + 4), role: 'img', 'aria-labelledby': 'declines-title',
      class: 'chart', 'data-chart': 'declines'
    }, [svg('title', { id: 'declines-title' }, ['Decline codes'])].concat(codes.map(function (code, index) {
      var width = Math.max(2, Math.round((code.count / most) * (WIDTH - 260)));
      return svg('g', {}, [
        svg('text', { x: 0, y: index * rowHeight + 18, class: 'tick' }, [code.code]),
        svg('rect', { x: 220, y: index * rowHeight + 4, width: width, height: rowHeight - 8, class: 'bar decline',
          'data-code': code.code, 'data-value': String(code.count) }, [svg('title', {}, [code.code + ': ' + code.count])]),
        svg('text', { x: 226 + width, y: index * rowHeight + 18, class: 'tick' }, [String(code.count)])
      ]);
    })));
    body = [chart, el('table', { class: 'responsive' },
      el('thead', null, el('tr', null, el('th', { scope: 'col' }, 'Decline code'), el('th', { scope: 'col', class: 'amount' }, 'Payments'))),
      el('tbody', null, codes.map(function (code) {
        return el('tr', null, C.cell('Decline code', el('code', null, code.code)),
          C.cell('Payments', String(code.count), 'amount'));
      })))];
  }
  return el('section', { class: 'card', 'aria-labelledby': 'declines-heading' },
    el('h2', { id: 'declines-heading' }, 'Decline codes'), body);
}

function draw(holder, report, interval) {
  var series = interval === 'hour' ? report.hourly : report.daily;
  var per = interval === 'hour' ? 'per hour' : 'per day';
  holder.textContent = '';
  holder.appendChild(el('p', { class: 'muted' }, 'From ' + C.formatTime(series.from) + ' to ' + C.formatTime(series.to) +
    '; computed ' + C.formatTime(report.generated_at) + '.'));
  holder.appendChild(el('section', { class: 'card', 'aria-label': 'Totals' }, summary(series)));
  holder.appendChild(chartSection('count-' + interval, 'Payments ' + per, interval, countValues(series)));
  series.totals.currencies.forEach(function (entry) {
    holder.appendChild(chartSection('volume-' + interval + '-' + entry.currency, 'Volume in ' + entry.currency + ' ' + per,
      interval, volumeValues(series, entry.currency)));
  });
  holder.appendChild(chartSection('rate-' + interval, 'Approval rate ' + per, interval, rateValues(series)));
  holder.appendChild(declineSection(series));
}

function render(container, route) {
  var interval = route.query.get('by') === 'day' ? 'day' : 'hour';
  var holder = el('div', { id: 'overview-figures', 'aria-live': 'polite' }, el('p', { class: 'muted' }, 'Loading…'));
  function choice(value, text) {
    return el('a', { href: '#/overview?by=' + value, class: 'toggle', 'aria-current': value === interval ? 'true' : null }, text);
  }
  container.appendChild(el('h1', null, 'Overview'));
  container.appendChild(el('nav', { class: 'actions', 'aria-label': 'Period' },
    choice('hour', 'Last 24 hours, by hour'), choice('day', 'Last 30 days, by day')));
  container.appendChild(holder);
  return C.api('GET', '/v1/reports/overview').then(function (report) { draw(holder, report, interval); });
}

C.registerPage({ id: 'overview', title: 'Overview', render: render });
