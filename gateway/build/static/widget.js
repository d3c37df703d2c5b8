/*
 * Drop-in vacancy widget. No dependencies.
 *
 *   <div data-build-widget data-key="qb_pk_..." data-limit="6"
 *        data-city="Almaty" data-skill="go" data-vacancy-id=""></div>
 *   <script defer src="https://<platform>/api/build/public/widget.js"></script>
 *
 * Vacancy text is untrusted: every card is built with createElement and
 * textContent (never innerHTML), and only http(s) URLs become links.
 */
(function () {
  'use strict';

  var script = document.currentScript;
  var origin;
  try {
    origin = new URL(script && script.src ? script.src : '', document.baseURI).origin;
  } catch (e) {
    return;
  }
  var API = origin + '/api/build/public/v1';
  var DEFAULT_LIMIT = 6;
  var MAX_LIMIT = 200;

  function safeHref(u) {
    try {
      var parsed = new URL(String(u), origin);
      if (parsed.protocol === 'https:' || parsed.protocol === 'http:') {
        return parsed.href;
      }
    } catch (e) {}
    return null;
  }

  function str(v) {
    return v === null || v === undefined ? '' : String(v);
  }

  function formatSalary(amount, currency) {
    var n = Number(amount);
    if (!isFinite(n) || n < 0 || Math.floor(n) !== n) {
      return '';
    }
    var cents = n % 100;
    return Math.floor(n / 100) + '.' + (cents < 10 ? '0' : '') + cents + ' ' + str(currency);
  }

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) {
      node.className = className;
    }
    if (text !== undefined) {
      node.textContent = text;
    }
    return node;
  }

  function card(v) {
    var root = el('div', 'build-widget-card');
    root.style.border = '1px solid #ddd';
    root.style.borderRadius = '6px';
    root.style.padding = '10px 12px';
    root.style.margin = '8px 0';
    root.style.fontFamily = 'system-ui, sans-serif';
    root.setAttribute('data-vacancy-id', str(v.id));

    var href = safeHref(v.url);
    var title;
    if (href) {
      title = el('a', 'build-widget-title', str(v.title));
      title.href = href;
      title.target = '_blank';
      title.rel = 'noopener noreferrer';
    } else {
      title = el('span', 'build-widget-title', str(v.title));
    }
    title.style.fontWeight = '600';
    var heading = el('div');
    heading.appendChild(title);
    root.appendChild(heading);

    var meta = [str(v.city), formatSalary(v.salary, v.salaryCurrency)];
    if (v.project && v.project.name) {
      meta.push(str(v.project.name));
    }
    var metaNode = el('div', 'build-widget-meta', meta.filter(Boolean).join(' \u00b7 '));
    metaNode.style.color = '#555';
    metaNode.style.fontSize = '0.9em';
    root.appendChild(metaNode);

    if (v.skills && v.skills.length) {
      var skills = el('ul', 'build-widget-skills');
      skills.style.listStyle = 'none';
      skills.style.padding = '0';
      skills.style.margin = '4px 0 0';
      for (var i = 0; i < v.skills.length && i < 30; i++) {
        var li = el('li', 'build-widget-skill', str(v.skills[i]));
        li.style.display = 'inline-block';
        li.style.marginRight = '6px';
        li.style.fontSize = '0.85em';
        skills.appendChild(li);
      }
      root.appendChild(skills);
    }

    var desc = str(v.description);
    if (desc.length > 240) {
      desc = desc.slice(0, 240) + '\u2026';
    }
    if (desc) {
      root.appendChild(el('p', 'build-widget-description', desc));
    }
    return root;
  }

  function message(container, state, text) {
    container.setAttribute('data-build-state', state);
    container.appendChild(el('p', 'build-widget-message', text));
  }

  function render(container) {
    if (container.getAttribute('data-build-state')) {
      return;
    }
    container.setAttribute('data-build-state', 'loading');
    var key = str(container.getAttribute('data-key'));
    var id = str(container.getAttribute('data-vacancy-id')).trim();
    var limit = parseInt(container.getAttribute('data-limit'), 10);
    if (!(limit >= 1)) {
      limit = DEFAULT_LIMIT;
    }
    limit = Math.min(limit, MAX_LIMIT);
    var url;
    if (id) {
      url = API + '/vacancies/' + encodeURIComponent(id);
    } else {
      var q = new URLSearchParams();
      q.set('limit', String(limit));
      var city = str(container.getAttribute('data-city')).trim();
      var skill = str(container.getAttribute('data-skill')).trim();
      if (city) {
        q.set('city', city);
      }
      if (skill) {
        q.set('skill', skill);
      }
      url = API + '/vacancies?' + q.toString();
    }
    fetch(url, { headers: { 'X-Build-Key': key }, credentials: 'omit', mode: 'cors' })
      .then(function (res) {
        if (!res.ok) {
          throw new Error('HTTP ' + res.status);
        }
        return res.json();
      })
      .then(function (body) {
        if (!body || body.success !== true || !body.data) {
          throw new Error('unexpected answer');
        }
        var items = id ? [body.data] : body.data.items || [];
        while (container.firstChild) {
          container.removeChild(container.firstChild);
        }
        if (!items.length) {
          message(container, 'empty', 'No open vacancies right now.');
          return;
        }
        var list = el('div', 'build-widget-list');
        for (var i = 0; i < items.length && i < limit; i++) {
          list.appendChild(card(items[i]));
        }
        container.appendChild(list);
        container.setAttribute('data-build-state', 'ready');
      })
      .catch(function () {
        while (container.firstChild) {
          container.removeChild(container.firstChild);
        }
        message(container, 'error', 'Vacancies are unavailable right now.');
      });
  }

  function start() {
    var nodes = document.querySelectorAll('div[data-build-widget]');
    for (var i = 0; i < nodes.length; i++) {
      render(nodes[i]);
    }
  }

  if (document.readyState === 'loading') {
    document.addEventListener('DOMContentLoaded', start);
  } else {
    start();
  }
})();
