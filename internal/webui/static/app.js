// Holdfast's web view: live updates and actions without reloading the page. The pages work
// without this script (forms post and links navigate); it only makes them live. No build step:
// this file is served as written, embedded in the holdfast binary.
'use strict';

(function () {
  const live = document.getElementById('live');
  const notice = document.getElementById('notice');
  let fetching = false;
  let again = false;
  let timer = 0;

  // focusKey names the focused control so that it can be focused again once the data region
  // was replaced: its id, or its data-key.
  function focusKey() {
    const el = document.activeElement;
    if (!el || el === document.body) return null;
    if (el.id) return '#' + CSS.escape(el.id);
    if (el.dataset && el.dataset.key) return '[data-key="' + CSS.escape(el.dataset.key) + '"]';
    return null;
  }

  // refresh fetches the data region of the current view and puts it in place of the old one.
  async function refresh() {
    if (fetching) { again = true; return; }
    fetching = true;
    try {
      const url = new URL(window.location.href);
      url.searchParams.set('partial', '1');
      const res = await fetch(url, { headers: { Accept: 'text/html' }, cache: 'no-store' });
      const old = document.getElementById('data');
      if (!res.ok || !old) return;
      const tpl = document.createElement('template');
      tpl.innerHTML = (await res.text()).trim();
      const next = tpl.content.getElementById('data');
      if (!next) return;
      const key = focusKey();
      const hadFocus = key && old.contains(document.activeElement);
      old.replaceWith(next);
      if (hadFocus) {
        const again = next.querySelector(key);
        if (again) again.focus();
      }
      document.body.dataset.updated = String(Date.now());
    } catch (e) {
      live.textContent = 'Live updates interrupted; retrying';
    } finally {
      fetching = false;
      if (again) { again = false; schedule(); }
    }
  }

  // schedule coalesces a burst of changes into one fetch.
  function schedule() {
    clearTimeout(timer);
    timer = setTimeout(refresh, 50);
  }

  function connect() {
    if (!window.EventSource) return;
    const events = new EventSource('/events');
    events.addEventListener('open', function () {
      live.textContent = 'Live';
      document.body.dataset.live = 'on';
    });
    events.addEventListener('changed', schedule);
    events.addEventListener('error', function () {
      live.textContent = 'Live updates interrupted; reconnecting';
      document.body.dataset.live = 'off';
    });
  }

  // Actions are posted with fetch; the answer (the hub's refusal included) is announced in the
  // notice region and the view is fetched again.
  document.addEventListener('submit', async function (ev) {
    const form = ev.target;
    if (!(form instanceof HTMLFormElement) || !form.classList.contains('action')) return;
    ev.preventDefault();
    const button = form.querySelector('button');
    if (button) button.disabled = true;
    try {
      const res = await fetch(form.action, {
        method: 'POST',
        headers: { Accept: 'application/json' },
        body: new URLSearchParams(new FormData(form)),
      });
      let answer;
      try { answer = await res.json(); } catch (e) { answer = { ok: false, message: 'The server answered ' + res.status }; }
      notice.className = answer.ok ? 'ok' : 'error';
      notice.setAttribute('role', answer.ok ? 'status' : 'alert');
      notice.textContent = answer.message;
    } catch (e) {
      notice.className = 'error';
      notice.textContent = 'The request did not reach the server: ' + e;
    } finally {
      if (button) button.disabled = false;
      schedule();
    }
  });

  connect();
})();
