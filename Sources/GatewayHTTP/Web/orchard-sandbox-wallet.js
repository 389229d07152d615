/*
 * orchard-sandbox-wallet.js: the sandbox wallet of orchard.js (docs/web.md), an in-page sheet that pays with
 * the sandbox's test cards. orchard.js loads this file itself, from its own gateway and with its integrity, only
 * once setupSDK named the sandbox; a page never loads it, and production never does.
 *
 * It defines window.OrchardSandboxWallet = {version, attach(core)}. attach takes orchard.js's internals (the
 * payment state, the gateway call, the hooks and the tokenize step, shared with the other paths) and answers
 * open(cart, finish) over them, which shows the sheet and calls finish once with getPrime's result.
 * Its styles go in orchard.js's constructed stylesheet: no inline style attribute, so a strict CSP's style-src
 * holds. Nothing here logs a token, PAN or cryptogram.
 */
(function (window, document) {
  'use strict';
  if (window.OrchardSandboxWallet) return;

  var RULES = [
    '.orchard-sheet { font: 15px -apple-system, system-ui, sans-serif; border: 0; border-radius: 14px; ' +
      'padding: 20px; width: min(380px, 92vw); box-shadow: 0 12px 40px rgba(0, 0, 0, .35); color: #111; }',
    '.orchard-sheet-title { margin: 0 0 4px; font-size: 18px; }',
    '.orchard-sheet-note { margin: 0 0 12px; color: #666; font-size: 12px; }',
    '.orchard-sheet-row { display: flex; justify-content: space-between; margin: 3px 0; }',
    '.orchard-sheet-total { font-weight: 600; border-top: 1px solid #ddd; margin-top: 8px; padding-top: 8px; }',
    '.orchard-sheet-shipping { border: 0; padding: 0; margin: 10px 0; }',
    '.orchard-sheet-shipping legend { font-weight: 600; margin-bottom: 4px; }',
    '.orchard-sheet-option { display: block; margin: 3px 0; }',
    '.orchard-sheet-label { display: block; margin: 8px 0 0; font-size: 13px; color: #444; }',
    '.orchard-sheet-label input, .orchard-sheet-label select { display: block; width: 100%; ' +
      'box-sizing: border-box; padding: 6px; margin-top: 2px; }',
    '.orchard-sheet-error { color: #b00020; min-height: 1em; font-size: 13px; }',
    '.orchard-sheet-buttons { display: flex; gap: 8px; justify-content: flex-end; }',
    '.orchard-sheet-buttons button { padding: 8px 14px; border-radius: 8px; border: 1px solid #ccc; background: #fff; }',
    '.orchard-sheet-buttons [data-orchard-action="pay"] { padding: 8px 18px; border: 0; background: #000; ' +
      'color: #fff; font-weight: 600; }'
  ];

  /** The sheet over orchard.js's internals `core`: open(cart, finish). */
  function attach(core) {
    var TEST_DATA = {
      name: 'Orchard Tester', email: 'tester@example.com', phone: '0912345678',
      address: 'No. 7, Section 5, Xinyi Road, Taipei 110'
    };

    function element(tag, attributes, text) {
      var node = document.createElement(tag);
      for (var name in attributes || {}) node.setAttribute(name, attributes[name]);
      if (text !== undefined) node.textContent = text;
      return node;
    }

    function formatAmount(cart, minor) { return cart.currency + ' ' + core.fromMinor(minor, cart.exponent); }

    function requiredFields() {
      var options = core.state.paymentRequest.options || {};
      var fields = [];
      if (options.requestPayerName) fields.push('name');
      if (options.requestPayerEmail) fields.push('email');
      if (options.requestPayerPhone) fields.push('phone');
      if (options.requestShipping) fields.push('address');
      return fields;
    }

    function open(cart, finish) {
      core.adoptRules(RULES);
      var old = document.querySelector('dialog[data-orchard-sheet]');
      if (old) old.parentNode.removeChild(old);
      var sheet = element('dialog', { 'data-orchard-sheet': '', 'aria-label': 'Sandbox wallet', class: 'orchard-sheet' });
      sheet.appendChild(element('h2', { class: 'orchard-sheet-title' }, 'Sandbox wallet'));
      sheet.appendChild(element('p', { class: 'orchard-sheet-note' },
        'Test cards only: no real payment.'));

      var lines = element('div');
      sheet.appendChild(lines);
      var shippingBox = element('fieldset', { class: 'orchard-sheet-shipping' });
      var totalRow = element('div', { class: 'orchard-sheet-row orchard-sheet-total' });
      var totalLabel = element('span', {}, cart.label);
      var total = element('span', { 'data-orchard-total': '' });
      totalRow.appendChild(totalLabel);
      totalRow.appendChild(total);

      function row(label, value, attributes) {
        var line = element('div', attributes || {});
        line.className = 'orchard-sheet-row';
        line.appendChild(element('span', {}, label));
        line.appendChild(element('span', {}, value));
        return line;
      }

      function render() {
        lines.textContent = '';
        cart.items.forEach(function (item) {
          lines.appendChild(row(item.label, item.pending ? 'Amount pending' : formatAmount(cart, item.minor),
            { 'data-orchard-line': '' }));
        });
        total.textContent = cart.pending ? 'Amount pending' : formatAmount(cart, cart.totalMinor());
      }

      function renderShipping() {
        shippingBox.textContent = '';
        if (!cart.shippingOptions.length) return;
        shippingBox.appendChild(element('legend', {}, 'Shipping'));
        cart.shippingOptions.forEach(function (option) {
          var label = element('label', { class: 'orchard-sheet-option' });
          var input = element('input', { type: 'radio', name: 'orchard-shipping', value: option.id,
            'data-orchard-shipping-option': option.id });
          input.checked = cart.shipping && cart.shipping.id === option.id;
          input.addEventListener('change', function () {
            cart.choose(option.id);
            render();
            core.runHook('shippingOptionChange', { id: option.id, label: option.label }).then(function (update) {
              showErrors(core.applyUpdate(cart, update, 'shippingOption'));
              if (update && Array.isArray(update.shippingOptions)) renderShipping();
              render();
            });
          });
          label.appendChild(input);
          label.appendChild(document.createTextNode(' ' + option.label + ' (' + formatAmount(cart, option.minor) + ')'));
          shippingBox.appendChild(label);
        });
      }

      sheet.appendChild(shippingBox);
      sheet.appendChild(totalRow);

      var fields = {};
      requiredFields().forEach(function (name) {
        var label = element('label', { class: 'orchard-sheet-label' },
          name.charAt(0).toUpperCase() + name.slice(1));
        var input = element('input', { 'data-orchard-field': name,
          type: name === 'email' ? 'email' : 'text' });
        input.value = TEST_DATA[name];
        label.appendChild(input);
        sheet.appendChild(label);
        fields[name] = input;
      });

      var cardLabel = element('label', { class: 'orchard-sheet-label' }, 'Card');
      var cards = element('select', { 'data-orchard-card': '' });
      (core.state.cards || []).forEach(function (card) {
        cards.appendChild(element('option', { value: card.card }, card.label + ' ···· ' + card.last_four));
      });
      cardLabel.appendChild(cards);
      sheet.appendChild(cardLabel);

      var errorBox = element('p', { 'data-orchard-error': '', role: 'alert', class: 'orchard-sheet-error' });
      function showErrors(errors) {
        errorBox.textContent = (errors || []).map(function (e) { return e.message || e.code || String(e); }).join(' ');
      }

      // The coupon field, when the page takes coupon codes (its couponCodeChange hook).
      if (core.couponsEnabled()) {
        var couponLabel = element('label', { class: 'orchard-sheet-label' }, 'Coupon code');
        var coupon = element('input', { 'data-orchard-coupon': '', type: 'text', autocomplete: 'off' });
        coupon.value = cart.couponCode;
        var applyCoupon = element('button', { type: 'button', 'data-orchard-action': 'coupon' }, 'Apply');
        applyCoupon.addEventListener('click', function () {
          cart.couponCode = coupon.value;
          core.runHook('couponCodeChange', { couponCode: cart.couponCode }).then(function (update) {
            showErrors(core.applyUpdate(cart, update, 'couponCode'));
            if (update && Array.isArray(update.shippingOptions)) renderShipping();
            render();
          });
        });
        couponLabel.appendChild(coupon);
        sheet.appendChild(couponLabel);
        sheet.appendChild(applyCoupon);
      }
      sheet.appendChild(errorBox);

      var buttons = element('div', { class: 'orchard-sheet-buttons' });
      var cancel = element('button', { type: 'button', 'data-orchard-action': 'cancel' }, 'Cancel');
      var pay = element('button', { type: 'button', 'data-orchard-action': 'pay' }, 'Pay');
      buttons.appendChild(cancel);
      buttons.appendChild(pay);
      sheet.appendChild(buttons);

      renderShipping();
      render();
      document.body.appendChild(sheet);
      if (typeof sheet.showModal === 'function') sheet.showModal(); else sheet.setAttribute('open', '');

      var tokenizing = false;
      var done = false;
      function end(result) {
        if (done) return;
        done = true;
        if (typeof sheet.close === 'function' && sheet.open) sheet.close();
        sheet.parentNode && sheet.parentNode.removeChild(sheet);
        finish(result);
      }

      function userCancelled() {
        // A cancel while the token is being made or tokenized is not the outcome: the call's own is.
        if (tokenizing) return;
        end(core.failure('user_cancelled', 'the buyer closed the payment sheet'));
      }
      cancel.addEventListener('click', userCancelled);
      sheet.addEventListener('cancel', function (event) { event.preventDefault(); userCancelled(); });

      pay.addEventListener('click', function () {
        if (tokenizing) return;
        tokenizing = true;
        pay.disabled = true;
        showErrors([]);
        var payer = {
          name: fields.name ? fields.name.value : '', email: fields.email ? fields.email.value : '',
          phone: fields.phone ? fields.phone.value : ''
        };
        var address = fields.address
          ? { addressLine: [fields.address.value], country: core.state.countryCode, recipient: payer.name, phone: payer.phone }
          : {};
        core.authorizationCheck(cart, payer, address, address).then(function (check) {
          // The merchant's errors keep the sheet open, as Apple's sheet does.
          if (check.errors.length) {
            showErrors(check.errors);
            tokenizing = false;
            pay.disabled = false;
            return null;
          }
          return core.call('POST', '/v1/sandbox/wallet/tokens', {
            amount: cart.tokenValue(), currency: cart.currency, card: cards.value
          });
        })
          .then(function (answer) {
            if (answer === null) return null;
            if (answer.status !== 200 || !answer.json || !answer.json.token) {
              var refused = core.gatewayFailure(answer);
              return core.failure('wallet_error', refused.msg, { reason: refused.code });
            }
            // From here on, the same path as ApplePaySession's onpaymentauthorized.
            return core.tokenize(answer.json.token, cart, payer, address, address);
          })
          .then(function (result) {
            if (result === null) return;
            tokenizing = false;
            end(result);
          });
      });
    }

    return open;
  }

  window.OrchardSandboxWallet = {
    version: '1.0.0',
    attach: attach
  };
})(window, document);
