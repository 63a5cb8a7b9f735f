// heapbench-html's tables: filter, sort and page through every case in the browser, with no
// library and no network (docs/plots.md says why: the kept table libraries Debian packages
// all need jQuery). Each table's data is a JSON block beside it: {columns: [{key, label,
// unit, kind, filter, hidden, title}], rows: [[value, ...], ...]}. Cells are set with
// textContent, never as HTML, so nothing a results file holds can become markup.
// page.html#sort=KEY (or -KEY for descending) and #KEY=VALUE (a filter) open a view.
(function () {
  'use strict';
  var PAGE = 100;
  var BYTES = [['GiB', 1073741824], ['MiB', 1048576], ['KiB', 1024]];

  function fmtBytes(v) {
    if (Number.isInteger(v) && Math.abs(v) < 10240 && (Math.abs(v) < 1024 || v % 1024)) {
      return v.toLocaleString('en-US') + ' B';
    }
    for (var i = 0; i < BYTES.length; i++) {
      if (Math.abs(v) >= BYTES[i][1]) { return +(v / BYTES[i][1]).toPrecision(3) + ' ' + BYTES[i][0]; }
    }
    return +v.toPrecision(3) + ' B';
  }

  function fmt(v, kind) {
    if (v === null || v === undefined) { return ''; }
    if (kind === 'text') { return String(v); }
    if (kind === 'bytes') { return v ? fmtBytes(v) : ''; }
    if (kind === 'mib') { return fmtBytes(v * 1048576); }
    if (kind === 'count') { return Math.round(v).toLocaleString('en-US'); }
    if (kind === 'flag') { return v >= 1 ? 'yes' : 'no'; }
    if (kind === 'ratio') { return v.toPrecision(3) + 'x'; }
    var a = Math.abs(v);
    if (a !== 0 && (a >= 1e5 || a < 1e-3)) { return v.toExponential(3).replace('e+', 'e'); }
    return String(+v.toPrecision(4));
  }

  function hashParams() {
    var out = {};
    location.hash.replace(/^#/, '').split('&').forEach(function (part) {
      var kv = part.split('=');
      if (kv[0]) { out[decodeURIComponent(kv[0])] = decodeURIComponent(kv.slice(1).join('=')); }
    });
    return out;
  }

  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { e.setAttribute(k, attrs[k]); });
    if (text !== undefined) { e.textContent = text; }
    return e;
  }

  function Table(root, data) {
    this.root = root;
    this.cols = data.columns;
    this.rows = data.rows;
    this.filters = {};
    this.sortCol = -1;
    this.sortDir = 1;
    this.page = 0;
    this.build();
  }

  Table.prototype.distinct = function (c) {
    var seen = {}, out = [];
    this.rows.forEach(function (r) {
      var v = r[c];
      if (v !== null && !Object.prototype.hasOwnProperty.call(seen, v)) { seen[v] = 1; out.push(v); }
    });
    return out.sort(function (a, b) { return typeof a === 'number' ? a - b : String(a).localeCompare(String(b)); });
  };

  Table.prototype.build = function () {
    var self = this, bar = el('div', {'class': 'controls'});
    this.cols.forEach(function (col, c) {
      if (!col.filter) { return; }
      var sel = el('select', {'data-key': col.key, 'aria-label': 'filter by ' + col.label});
      sel.appendChild(el('option', {value: ''}, col.label + ': all'));
      self.distinct(c).forEach(function (v) { sel.appendChild(el('option', {value: String(v)}, fmt(v, col.kind))); });
      sel.addEventListener('change', function () { self.setFilter(c, sel.value); });
      bar.appendChild(sel);
    });
    var search = el('input', {type: 'search', placeholder: 'search', 'aria-label': 'search the table'});
    search.addEventListener('input', function () { self.search = search.value.toLowerCase(); self.page = 0; self.draw(); });
    bar.appendChild(search);
    var chooser = el('details', {'class': 'columns'});
    chooser.appendChild(el('summary', {}, 'columns'));
    this.cols.forEach(function (col) {
      var label = el('label', {}), box = el('input', {type: 'checkbox'});
      box.checked = !col.hidden;
      box.addEventListener('change', function () { col.hidden = !box.checked; self.draw(); });
      label.appendChild(box);
      label.appendChild(document.createTextNode(' ' + col.label));
      chooser.appendChild(label);
    });
    bar.appendChild(chooser);
    this.info = el('span', {'class': 'info'});
    this.prev = el('button', {type: 'button'}, '\u2039 previous');
    this.next = el('button', {type: 'button'}, 'next \u203a');
    this.prev.addEventListener('click', function () { self.page -= 1; self.draw(); });
    this.next.addEventListener('click', function () { self.page += 1; self.draw(); });
    [this.prev, this.next, this.info].forEach(function (e) { bar.appendChild(e); });
    this.table = el('table', {'class': 'cases'});
    var wrap = el('div', {'class': 'scroll'});
    wrap.appendChild(this.table);
    this.root.appendChild(bar);
    this.root.appendChild(wrap);
    this.selects = bar.querySelectorAll('select');
  };

  Table.prototype.setFilter = function (c, value) {
    if (value === '') { delete this.filters[c]; } else { this.filters[c] = value; }
    this.page = 0;
    this.draw();
  };

  Table.prototype.applyHash = function (params) {
    var self = this;
    this.cols.forEach(function (col, c) {
      if (Object.prototype.hasOwnProperty.call(params, col.key) && col.filter) {
        self.filters[c] = params[col.key];
        self.selects.forEach(function (s) { if (s.dataset.key === col.key) { s.value = params[col.key]; } });
      }
    });
    var key = params.sort || '';
    var dir = key.charAt(0) === '-' ? -1 : 1;
    key = key.replace(/^-/, '');
    this.cols.forEach(function (col, c) { if (col.key === key) { self.sortCol = c; self.sortDir = dir; } });
  };

  Table.prototype.visible = function () {
    var self = this, keys = Object.keys(this.filters);
    var out = this.rows.filter(function (r) {
      for (var i = 0; i < keys.length; i++) {
        if (String(r[keys[i]]) !== self.filters[keys[i]]) { return false; }
      }
      if (self.search) {
        return self.cols.some(function (col, c) {
          return fmt(r[c], col.kind).toLowerCase().indexOf(self.search) >= 0;
        });
      }
      return true;
    });
    if (this.sortCol >= 0) {
      var c = this.sortCol, dir = this.sortDir;
      out.sort(function (a, b) {
        var x = a[c], y = b[c];
        if (x === null) { return y === null ? 0 : 1; }  // blanks last either way
        if (y === null) { return -1; }
        return (x > y ? 1 : x < y ? -1 : 0) * dir;
      });
    }
    return out;
  };

  Table.prototype.head = function (shown) {
    var self = this, tr = el('tr');
    shown.forEach(function (c) {
      var col = self.cols[c];
      var th = el('th', {'class': col.kind === 'text' ? 't' : '', title: col.title || col.label});
      th.appendChild(document.createTextNode(col.label));
      if (col.unit) { th.appendChild(el('span', {'class': 'unit'}, col.unit)); }
      if (c === self.sortCol) { th.setAttribute('aria-sort', self.sortDir > 0 ? 'ascending' : 'descending'); }
      th.addEventListener('click', function () {
        self.sortDir = self.sortCol === c ? -self.sortDir : 1;
        self.sortCol = c;
        self.draw();
      });
      tr.appendChild(th);
    });
    var thead = el('thead');
    thead.appendChild(tr);
    return thead;
  };

  Table.prototype.draw = function () {
    var self = this, rows = this.visible();
    var pages = Math.max(1, Math.ceil(rows.length / PAGE));
    this.page = Math.min(Math.max(this.page, 0), pages - 1);
    var shown = [];
    this.cols.forEach(function (col, c) { if (!col.hidden) { shown.push(c); } });
    var body = el('tbody');
    rows.slice(this.page * PAGE, (this.page + 1) * PAGE).forEach(function (r) {
      var tr = el('tr');
      shown.forEach(function (c) {
        var col = self.cols[c], v = r[c];
        var td = el('td', {'class': (col.kind === 'text' ? 't' : '') + (col.kind === 'flag' && v !== null && v < 1 ? ' warn' : '')},
                    fmt(v, col.kind));
        td.dataset.v = v === null ? '' : String(v);
        tr.appendChild(td);
      });
      body.appendChild(tr);
    });
    this.table.replaceChildren(this.head(shown), body);
    this.info.textContent = rows.length + ' of ' + this.rows.length + ' rows, page ' + (this.page + 1) + ' of ' + pages;
    this.prev.disabled = this.page === 0;
    this.next.disabled = this.page >= pages - 1;
  };

  var params = hashParams();
  document.querySelectorAll('div.datatable').forEach(function (root) {
    var data = JSON.parse(document.getElementById(root.dataset.source).textContent);
    var t = new Table(root, data);
    t.applyHash(params);
    t.draw();
  });
  document.body.dataset.ready = '1';
}());
