/*
 * orchard.js: Apple Pay on the web with an Orchard gateway (docs/web.md).
 *
 * One plain script, no build step and no dependencies; it defines window.Orchard with TapPay's
 * TPDirect.paymentRequestApi surface. getPrime takes one of three paths: ApplePaySession (Safari),
 * the W3C PaymentRequest API with Apple Pay, or the sandbox wallet (an in-page sheet, sandbox only).
 * Amounts are decimal strings, added as integer minor units. Nothing here logs a token, PAN or cryptogram.
 */
(function (window, document) {
  'use strict';
  if (window.Orchard && window.Orchard.version) return;

  var VERSION = '1.0.0';
  var APPLE_PAY_METHOD = 'https://apple.com/apple-pay';

  // The numeric status of each failure code; 0 is success. docs/web.md lists them all.
  var STATUS = {
    success: 0,
    sdk_not_setup: 1,
    payment_request_not_setup: 2,
    invalid_argument: 3,
    not_supported: 4,
    payment_request_invalid: 5,
    user_cancelled: 6,
    merchant_validation_failed: 7,
    network_error: 8,
    gateway_error: 9,
    payment_in_progress: 10,
    wallet_error: 11
  };
  var DEFERRED_RULES = { '88013': 88013, '88014': 88014, '88015': 88015, '88016': 88016 };

  var scriptOrigin = (function () {
    try {
      return new URL(document.currentScript.src, window.location.href).origin;
    } catch (e) {
      return window.location.origin;
    }
  })();

  var state = {
    appId: null,
    appKey: null,
    serverType: null,
    gatewayURL: scriptOrigin,
    wallet: null,
    hookTimeoutMillis: 20000,
    merchantIdentifier: null,
    countryCode: 'TW',
    paymentRequest: null,
    hooks: {},
    validated: null,
    path: null,
    canPay: false,
    busy: false
  };

  // MARK: results

  function failure(code, message, extra) {
    var status = DEFERRED_RULES[code] || STATUS[code] || STATUS.gateway_error;
    var result = { status: status, code: code, msg: message || code };
    for (var key in extra || {}) result[key] = extra[key];
    return result;
  }

  /** Calls `callback` with the result when given; always returns a Promise of it. */
  function settle(callback, promise) {
    return promise.then(function (result) {
      if (typeof callback === 'function') callback(result);
      return result;
    });
  }

  // MARK: money (decimal strings, integer minor units)

  function toMinor(value, exponent) {
    var text = String(value);
    var match = /^(-?)(\d+)(?:\.(\d+))?$/.exec(text);
    if (!match) throw new Error('not a decimal amount: ' + text);
    var fraction = match[3] || '';
    if (fraction.length > exponent) throw new Error('too many decimals: ' + text);
    while (fraction.length < exponent) fraction += '0';
    var minor = Number(match[2] + fraction);
    if (!Number.isSafeInteger(minor)) throw new Error('amount out of range: ' + text);
    return match[1] === '-' ? -minor : minor;
  }

  function fromMinor(minor, exponent) {
    var negative = minor < 0;
    var digits = String(Math.abs(minor));
    while (digits.length <= exponent) digits = '0' + digits;
    var whole = exponent > 0 ? digits.slice(0, digits.length - exponent) : digits;
    var text = exponent > 0 ? whole + '.' + digits.slice(digits.length - exponent) : whole;
    return (negative ? '-' : '') + text;
  }

  // MARK: gateway calls

  function call(method, path, body) {
    var headers = { 'X-Orchard-App-Id': state.appId, 'X-Orchard-App-Key': state.appKey };
    var init = { method: method, headers: headers, credentials: 'omit', mode: 'cors' };
    if (body !== undefined) {
      headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    return window.fetch(state.gatewayURL + path, init).then(
      function (response) {
        return response.text().then(function (text) {
          var json = null;
          try { json = text ? JSON.parse(text) : null; } catch (e) { json = null; }
          return { status: response.status, json: json, requestId: response.headers.get('Request-Id') || '' };
        });
      },
      function () {
        return { status: 0, json: null, requestId: '' };
      });
  }

  function gatewayFailure(answer) {
    if (answer.status === 0) return failure('network_error', 'the gateway could not be reached');
    var error = (answer.json && answer.json.error) || {};
    return failure(error.code || 'gateway_error', error.message || 'the gateway answered ' + answer.status,
      { requestId: answer.requestId });
  }

  // MARK: the cart the sheet shows

  /** Items, chosen shipping option and total of the current sheet, in minor units. */
  function Cart(validated, paymentRequest) {
    this.exponent = validated.currency_exponent;
    this.currency = validated.total ? validated.total.currency : paymentRequest.total.amount.currency;
    this.label = paymentRequest.total.label;
    this.deferred = !!paymentRequest.total.isAmountPending;
    this.pending = paymentRequest.total.isShowTotalAmount === false;
    this.amountForApple = validated.amount_for_apple;
    this.setItems(paymentRequest.displayItems || []);
    this.setShippingOptions(paymentRequest.shippingOptions || []);
  }

  Cart.prototype.setItems = function (items) {
    var exponent = this.exponent;
    this.items = items.map(function (item) {
      var pending = !!item.isAmountPending;
      var value = item.amount && item.amount.value !== undefined && item.amount.value !== null
        ? item.amount.value : '0';
      return { label: item.label, pending: pending, minor: pending ? 0 : toMinor(value, exponent) };
    });
  };

  Cart.prototype.setShippingOptions = function (options) {
    var exponent = this.exponent;
    var previous = this.shipping && this.shipping.id;
    this.shippingOptions = options.map(function (option) {
      return {
        id: String(option.id), label: option.label, detail: option.detail || '',
        minor: toMinor(option.amount && option.amount.value !== undefined ? option.amount.value : '0', exponent)
      };
    });
    this.shipping = this.shippingOptions.filter(function (o) { return o.id === previous; })[0] ||
      this.shippingOptions[0] || null;
  };

  Cart.prototype.choose = function (id) {
    var chosen = this.shippingOptions.filter(function (o) { return o.id === String(id); })[0];
    if (chosen) this.shipping = chosen;
    return !!chosen;
  };

  /** The shown items plus the chosen shipping amount. */
  Cart.prototype.totalMinor = function () {
    var sum = 0;
    this.items.forEach(function (item) { if (!item.pending) sum += item.minor; });
    if (this.shipping) sum += this.shipping.minor;
    return sum;
  };

  Cart.prototype.totalValue = function () { return fromMinor(this.totalMinor(), this.exponent); };

  /** The amount put in the token: the total, or what Apple is handed for a pending one. */
  Cart.prototype.tokenValue = function () {
    if (this.pending && this.totalMinor() <= 0) return this.amountForApple || fromMinor(1, this.exponent);
    return this.totalValue();
  };

  Cart.prototype.money = function (minor) { return { currency: this.currency, value: fromMinor(minor, this.exponent) }; };

  /** The request in TapPay's shape as it stands now (shipping as a display item): sent with the token. */
  Cart.prototype.tapPayRequest = function () {
    var self = this;
    var base = state.paymentRequest;
    var items = this.items.map(function (item) {
      return item.pending
        ? { label: item.label, amount: { currency: self.currency }, isAmountPending: true }
        : { label: item.label, amount: self.money(item.minor) };
    });
    if (this.shipping && this.shipping.minor !== 0) {
      items.push({ label: this.shipping.label, amount: this.money(this.shipping.minor) });
    }
    var total = { label: this.label, isAmountPending: this.deferred, isShowTotalAmount: !this.pending };
    total.amount = this.pending ? { currency: this.currency } : this.money(this.totalMinor());
    return {
      supportedNetworks: base.supportedNetworks, supportedMethods: base.supportedMethods,
      displayItems: items, total: total, options: base.options || {}
    };
  };

  /** Apple Pay JS line items and total for this cart. */
  Cart.prototype.appleLineItems = function () {
    var self = this;
    var items = this.items.map(function (item) {
      return item.pending
        ? { label: item.label, amount: '0', type: 'pending' }
        : { label: item.label, amount: fromMinor(item.minor, self.exponent), type: 'final' };
    });
    if (this.shipping && this.shipping.minor !== 0) {
      items.push({ label: this.shipping.label, amount: fromMinor(this.shipping.minor, this.exponent), type: 'final' });
    }
    return items;
  };

  Cart.prototype.appleTotal = function () {
    return this.pending
      ? { label: this.label, amount: this.tokenValue(), type: 'pending' }
      : { label: this.label, amount: this.totalValue(), type: 'final' };
  };

  Cart.prototype.appleShippingMethods = function () {
    var self = this;
    return this.shippingOptions.map(function (o) {
      return { identifier: o.id, label: o.label, detail: o.detail, amount: fromMinor(o.minor, self.exponent) };
    });
  };

  // MARK: merchant hooks (setupPaymentRequest's third argument)

  /**
   * Runs hook `name` with `argument`; resolves with its update ({displayItems, shippingOptions, errors}) or,
   * when it is missing, throws, or is later than the sheet's time budget, with null (the fallback update).
   */
  function runHook(name, argument) {
    var hook = state.hooks && state.hooks[name];
    if (typeof hook !== 'function') return Promise.resolve(null);
    return new Promise(function (resolve) {
      var timer = window.setTimeout(function () { resolve(null); }, state.hookTimeoutMillis);
      Promise.resolve().then(function () { return hook(argument); }).then(
        function (update) { window.clearTimeout(timer); resolve(update || null); },
        function () { window.clearTimeout(timer); resolve(null); });
    });
  }

  function applyUpdate(cart, update) {
    if (!update) return [];
    if (Array.isArray(update.displayItems)) cart.setItems(update.displayItems);
    if (Array.isArray(update.shippingOptions)) cart.setShippingOptions(update.shippingOptions);
    return Array.isArray(update.errors) ? update.errors : [];
  }

  // MARK: the prime result (TapPay's fields)

  function contact(source) {
    source = source || {};
    return {
      country: source.countryCode || source.country || '',
      addressLine: source.addressLines || source.addressLine || [],
      region: source.administrativeArea || source.region || '',
      city: source.locality || source.city || '',
      dependentLocality: source.subLocality || source.dependentLocality || '',
      postalCode: source.postalCode || '',
      sortingCode: source.sortingCode || '',
      languageCode: source.languageCode || '',
      organization: source.organization || '',
      recipient: source.recipient ||
        [source.givenName, source.familyName].filter(function (p) { return p; }).join(' '),
      phone: source.phoneNumber || source.phone || ''
    };
  }

  function primeResult(answer, cart, payer, shippingAddress, billingAddress) {
    var body = answer.json;
    var info = body.card_info || {};
    return {
      prime: body.prime,
      total_amount: body.total_amount,
      status: 0,
      code: '',
      msg: 'Success',
      client_ip: (state.validated && state.validated.client_ip) || '',
      payer: { name: payer.name || '', phone: payer.phone || '', email: payer.email || '' },
      shippingAddress: contact(shippingAddress),
      shippingOption: cart.shipping ? cart.shipping.id : '',
      billingAddress: contact(billingAddress),
      methodName: 'apple_pay',
      requestId: answer.requestId,
      card: { lastfour: info.last_four, funding: info.funding, type: info.type },
      card_info: {
        bincode: info.bin_code, lastfour: info.last_four, issuer: info.issuer, issuer_zh_tw: info.issuer_zh_tw || '',
        bank_id: info.bank_id, funding: info.funding, type: info.type, level: info.level, country: info.country,
        countrycode: info.country_code
      },
      merchant_reference_info: body.merchant_reference_info || { affiliate_codes: [] },
      prime_expiry_millis: body.prime_expiry_millis
    };
  }

  /** POST /v1/tokens with the token and the request as it stands: the prime, or the failure. */
  function tokenize(token, cart, payer, shippingAddress, billingAddress) {
    return call('POST', '/v1/tokens', { token: token, payment_request: cart.tapPayRequest() }).then(function (answer) {
      if (answer.status === 200 && answer.json && answer.json.prime) {
        return primeResult(answer, cart, payer, shippingAddress, billingAddress);
      }
      return gatewayFailure(answer);
    });
  }

  // MARK: path 1, ApplePaySession (Safari)

  function sessionVersion() {
    for (var version = 14; version > 1; version--) {
      try { if (window.ApplePaySession.supportsVersion(version)) return version; } catch (e) { /* older Safari */ }
    }
    return 1;
  }

  function getPrimeWithSession(cart, finish) {
    var Session = window.ApplePaySession;
    var request = JSON.parse(JSON.stringify(state.validated.apple_pay_request));
    request.lineItems = cart.appleLineItems();
    request.total = cart.appleTotal();
    if (cart.shippingOptions.length) request.shippingMethods = cart.appleShippingMethods();
    var session = new Session(sessionVersion(), request);
    var tokenizing = false;
    var done = false;

    function end(result) {
      if (done) return;
      done = true;
      finish(result);
    }

    function recomputed(errors) {
      return { newTotal: cart.appleTotal(), newLineItems: cart.appleLineItems(), errors: errors };
    }

    session.onvalidatemerchant = function (event) {
      call('POST', '/v1/apple-pay/merchant-sessions', {
        validation_url: event.validationURL, domain: window.location.hostname,
        display_name: state.paymentRequest.total.label
      }).then(function (answer) {
        if (answer.status === 200 && answer.json) {
          session.completeMerchantValidation(answer.json);
          return;
        }
        try { session.abort(); } catch (e) { /* already gone */ }
        var refused = gatewayFailure(answer);
        end(failure('merchant_validation_failed', refused.msg, { reason: refused.code, requestId: answer.requestId }));
      });
    };

    session.onshippingmethodselected = function (event) {
      var method = event.shippingMethod || {};
      cart.choose(method.identifier);
      runHook('shippingOptionChange', { id: method.identifier, label: method.label }).then(function (update) {
        var errors = applyUpdate(cart, update);
        var answer = recomputed(errors);
        if (update && Array.isArray(update.shippingOptions)) answer.newShippingMethods = cart.appleShippingMethods();
        session.completeShippingMethodSelection(answer);
      });
    };

    session.onshippingcontactselected = function (event) {
      runHook('shippingAddressChange', contact(event.shippingContact)).then(function (update) {
        var errors = applyUpdate(cart, update);
        var answer = recomputed(errors);
        answer.newShippingMethods = cart.appleShippingMethods();
        session.completeShippingContactSelection(answer);
      });
    };

    session.onpaymentmethodselected = function (event) {
      runHook('paymentMethodChange', event.paymentMethod || {}).then(function (update) {
        applyUpdate(cart, update);
        session.completePaymentMethodSelection({ newTotal: cart.appleTotal(), newLineItems: cart.appleLineItems() });
      });
    };

    session.onpaymentauthorized = function (event) {
      var payment = event.payment || {};
      var shippingContact = payment.shippingContact || {};
      var payer = {
        name: [shippingContact.givenName, shippingContact.familyName].filter(function (p) { return p; }).join(' '),
        phone: shippingContact.phoneNumber || '', email: shippingContact.emailAddress || ''
      };
      tokenizing = true;
      tokenize(payment.token, cart, payer, shippingContact, payment.billingContact).then(function (result) {
        tokenizing = false;
        // completePayment(STATUS_SUCCESS) only once the prime is back.
        session.completePayment(result.status === 0 ? Session.STATUS_SUCCESS : Session.STATUS_FAILURE);
        end(result);
      });
    };

    session.oncancel = function () {
      // A cancel while the token is being tokenized is not the outcome: the tokenize call's own is.
      if (tokenizing) return;
      end(failure('user_cancelled', 'the buyer closed the payment sheet'));
    };

    session.begin();
  }

  // MARK: path 2, W3C PaymentRequest

  function w3cDetails(cart) {
    var details = {
      total: { label: cart.label, amount: { currency: cart.currency, value: cart.tokenValue() } },
      displayItems: cart.appleLineItems().map(function (item) {
        return { label: item.label, amount: { currency: cart.currency, value: item.amount }, pending: item.type === 'pending' };
      })
    };
    if (cart.shippingOptions.length) {
      details.shippingOptions = cart.shippingOptions.map(function (o) {
        return { id: o.id, label: o.label, amount: cart.money(o.minor), selected: !!cart.shipping && o.id === cart.shipping.id };
      });
    }
    return details;
  }

  function w3cRequest(cart) {
    var form = state.validated.w3c_request;
    return new window.PaymentRequest(form.methodData, w3cDetails(cart), form.options || {});
  }

  function getPrimeWithPaymentRequest(cart, finish) {
    var request;
    try { request = w3cRequest(cart); } catch (e) {
      finish(failure('not_supported', 'this browser refused the payment request'));
      return;
    }
    request.addEventListener('merchantvalidation', function (event) {
      event.complete(call('POST', '/v1/apple-pay/merchant-sessions', {
        validation_url: event.validationURL, domain: window.location.hostname,
        display_name: state.paymentRequest.total.label
      }).then(function (answer) {
        if (answer.status === 200 && answer.json) return answer.json;
        throw new Error('merchant validation refused');
      }));
    });
    request.addEventListener('shippingoptionchange', function (event) {
      cart.choose(request.shippingOption);
      event.updateWith(runHook('shippingOptionChange', { id: request.shippingOption }).then(function (update) {
        var errors = applyUpdate(cart, update);
        var details = w3cDetails(cart);
        if (errors.length) details.error = errors.map(function (e) { return e.message || e.code; }).join(' ');
        return details;
      }));
    });
    var tokenizing = false;
    request.show().then(function (response) {
      tokenizing = true;
      var payer = { name: response.payerName || '', phone: response.payerPhone || '', email: response.payerEmail || '' };
      var details = response.details || {};
      return tokenize(details.token || details, cart, payer, response.shippingAddress, details.billingContact)
        .then(function (result) {
          tokenizing = false;
          return response.complete(result.status === 0 ? 'success' : 'fail').then(function () { finish(result); });
        });
    }, function (error) {
      if (tokenizing) return;
      finish(error && error.name === 'AbortError'
        ? failure('user_cancelled', 'the buyer closed the payment sheet')
        : failure('not_supported', 'the payment sheet could not be shown'));
    });
  }

  // MARK: path 3, the sandbox wallet (an in-page sheet)

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

  function formatAmount(cart, minor) { return cart.currency + ' ' + fromMinor(minor, cart.exponent); }

  function requiredFields() {
    var options = state.paymentRequest.options || {};
    var fields = [];
    if (options.requestPayerName) fields.push('name');
    if (options.requestPayerEmail) fields.push('email');
    if (options.requestPayerPhone) fields.push('phone');
    if (options.requestShipping) fields.push('address');
    return fields;
  }

  function getPrimeWithSandboxWallet(cart, finish) {
    var old = document.querySelector('dialog[data-orchard-sheet]');
    if (old) old.parentNode.removeChild(old);
    var sheet = element('dialog', { 'data-orchard-sheet': '', 'aria-label': 'Sandbox wallet' });
    sheet.style.cssText = 'font:15px -apple-system,system-ui,sans-serif;border:0;border-radius:14px;padding:20px;' +
      'width:min(380px,92vw);box-shadow:0 12px 40px rgba(0,0,0,.35);color:#111';
    sheet.appendChild(element('h2', { style: 'margin:0 0 4px;font-size:18px' }, 'Sandbox wallet'));
    sheet.appendChild(element('p', { style: 'margin:0 0 12px;color:#666;font-size:12px' },
      'Test cards only: no real payment.'));

    var lines = element('div');
    sheet.appendChild(lines);
    var shippingBox = element('fieldset', { style: 'border:0;padding:0;margin:10px 0' });
    var totalRow = element('div', { style: 'display:flex;justify-content:space-between;font-weight:600;' +
      'border-top:1px solid #ddd;margin-top:8px;padding-top:8px' });
    var totalLabel = element('span', {}, cart.label);
    var total = element('span', { 'data-orchard-total': '' });
    totalRow.appendChild(totalLabel);
    totalRow.appendChild(total);

    function row(label, value, attributes) {
      var line = element('div', attributes || {});
      line.style.cssText = 'display:flex;justify-content:space-between;margin:3px 0';
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
      shippingBox.appendChild(element('legend', { style: 'font-weight:600;margin-bottom:4px' }, 'Shipping'));
      cart.shippingOptions.forEach(function (option) {
        var label = element('label', { style: 'display:block;margin:3px 0' });
        var input = element('input', { type: 'radio', name: 'orchard-shipping', value: option.id,
          'data-orchard-shipping-option': option.id });
        input.checked = cart.shipping && cart.shipping.id === option.id;
        input.addEventListener('change', function () {
          cart.choose(option.id);
          render();
          runHook('shippingOptionChange', { id: option.id, label: option.label }).then(function (update) {
            showErrors(applyUpdate(cart, update));
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
      var label = element('label', { style: 'display:block;margin:8px 0 0;font-size:13px;color:#444' },
        name.charAt(0).toUpperCase() + name.slice(1));
      var input = element('input', { 'data-orchard-field': name, type: name === 'email' ? 'email' : 'text',
        style: 'display:block;width:100%;box-sizing:border-box;padding:6px;margin-top:2px' });
      input.value = TEST_DATA[name];
      label.appendChild(input);
      sheet.appendChild(label);
      fields[name] = input;
    });

    var cardLabel = element('label', { style: 'display:block;margin:12px 0 0;font-size:13px;color:#444' }, 'Card');
    var cards = element('select', { 'data-orchard-card': '', style: 'display:block;width:100%;padding:6px;margin-top:2px' });
    (state.cards || []).forEach(function (card) {
      cards.appendChild(element('option', { value: card.card }, card.label + ' ···· ' + card.last_four));
    });
    cardLabel.appendChild(cards);
    sheet.appendChild(cardLabel);

    var errorBox = element('p', { 'data-orchard-error': '', role: 'alert', style: 'color:#b00020;min-height:1em;font-size:13px' });
    sheet.appendChild(errorBox);
    function showErrors(errors) {
      errorBox.textContent = (errors || []).map(function (e) { return e.message || e.code || String(e); }).join(' ');
    }

    var buttons = element('div', { style: 'display:flex;gap:8px;justify-content:flex-end' });
    var cancel = element('button', { type: 'button', 'data-orchard-action': 'cancel',
      style: 'padding:8px 14px;border-radius:8px;border:1px solid #ccc;background:#fff' }, 'Cancel');
    var pay = element('button', { type: 'button', 'data-orchard-action': 'pay',
      style: 'padding:8px 18px;border-radius:8px;border:0;background:#000;color:#fff;font-weight:600' }, 'Pay');
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
      end(failure('user_cancelled', 'the buyer closed the payment sheet'));
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
        ? { addressLine: [fields.address.value], country: state.countryCode, recipient: payer.name, phone: payer.phone }
        : {};
      call('POST', '/v1/sandbox/wallet/tokens', { amount: cart.tokenValue(), currency: cart.currency, card: cards.value })
        .then(function (answer) {
          if (answer.status !== 200 || !answer.json || !answer.json.token) {
            var refused = gatewayFailure(answer);
            return failure('wallet_error', refused.msg, { reason: refused.code });
          }
          // From here on, the same path as ApplePaySession's onpaymentauthorized.
          return tokenize(answer.json.token, cart, payer, address, address);
        })
        .then(function (result) {
          tokenizing = false;
          end(result);
        });
    });
  }

  // MARK: which path

  function hasSession() {
    try {
      return !!window.ApplePaySession && window.ApplePaySession.canMakePayments() === true;
    } catch (e) {
      return false;
    }
  }

  function sandboxWalletAllowed() { return state.serverType === 'sandbox'; }

  /** Resolves with the path getPrime will take and whether a card can pay, checking W3C Apple Pay support. */
  function discoverPath(validated) {
    if (state.wallet === 'sandbox' && sandboxWalletAllowed()) return Promise.resolve({ path: 'sandbox_wallet', canPay: true });
    if (hasSession()) {
      var Session = window.ApplePaySession;
      var check = typeof Session.canMakePaymentsWithActiveCard === 'function' && state.merchantIdentifier
        ? Promise.resolve(Session.canMakePaymentsWithActiveCard(state.merchantIdentifier)).catch(function () { return false; })
        : Promise.resolve(true);
      return check.then(function (canPay) { return { path: 'apple_pay_session', canPay: !!canPay }; });
    }
    var fallback = sandboxWalletAllowed() ? { path: 'sandbox_wallet', canPay: true } : { path: null, canPay: false };
    if (typeof window.PaymentRequest !== 'function' || !validated || !validated.w3c_request) return Promise.resolve(fallback);
    return new Promise(function (resolve) {
      try {
        var probe = new window.PaymentRequest(validated.w3c_request.methodData.filter(function (m) {
          return m.supportedMethods === APPLE_PAY_METHOD;
        }), { total: { label: 'probe', amount: { currency: validated.total ? validated.total.currency : 'TWD', value: '1' } } });
        probe.canMakePayment().then(function (can) {
          resolve(can ? { path: 'payment_request', canPay: true } : fallback);
        }, function () { resolve(fallback); });
      } catch (e) {
        resolve(fallback);
      }
    });
  }

  // MARK: the public surface (TapPay's names)

  var paymentRequestApi = {
    /** Whether this browser can take a payment path (ApplePaySession, PaymentRequest, or the sandbox wallet). */
    checkAvailability: function () {
      if (!state.appId) return false;
      if (state.wallet === 'sandbox' && sandboxWalletAllowed()) return true;
      return hasSession() || typeof window.PaymentRequest === 'function' || sandboxWalletAllowed();
    },

    /** `{merchantIdentifier, countryCode}`; countryCode defaults to 'TW'. */
    setupApplePay: function (config) {
      config = config || {};
      state.merchantIdentifier = config.merchantIdentifier || null;
      state.countryCode = config.countryCode || 'TW';
    },

    /**
     * Validates TapPay's paymentRequest with the gateway (the rules of `orchard request validate`) and reports
     * `{browserSupportPaymentRequest, canMakePaymentWithActiveCard, status, errors}`; `hooks` may hold
     * shippingOptionChange, shippingAddressChange and paymentMethodChange.
     */
    setupPaymentRequest: function (paymentRequest, callback, hooks) {
      var work;
      state.validated = null;
      state.path = null;
      if (!state.appId) {
        work = Promise.resolve(failure('sdk_not_setup', 'call Orchard.setupSDK first'));
      } else if (!paymentRequest || typeof paymentRequest !== 'object' || !paymentRequest.total) {
        work = Promise.resolve(failure('invalid_argument', 'paymentRequest must be an object with a total'));
      } else {
        state.paymentRequest = paymentRequest;
        state.hooks = hooks || {};
        var body = { payment_request: paymentRequest, format: 'tappay-web', country_code: state.countryCode };
        if (state.merchantIdentifier) body.merchant_identifier = state.merchantIdentifier;
        work = call('POST', '/v1/payment-requests/validate', body).then(function (answer) {
          if (answer.status !== 200 || !answer.json) return gatewayFailure(answer);
          var report = answer.json;
          if (!report.valid) {
            var first = report.errors[0] || { code: 'payment_request_invalid', message: 'invalid' };
            return failure(DEFERRED_RULES[first.code] ? first.code : 'payment_request_invalid', first.message,
              { errors: report.errors, code: first.code });
          }
          return discoverPath(report).then(function (found) {
            var cards = found.path === 'sandbox_wallet'
              ? call('GET', '/v1/sandbox/wallet/cards').then(function (a) { return a.status === 200 ? a.json.data : null; })
              : Promise.resolve([]);
            return cards.then(function (list) {
              if (list === null) return failure('not_supported', 'this gateway has no sandbox wallet');
              state.cards = list;
              state.validated = report;
              state.path = found.path;
              state.canPay = found.canPay;
              return { status: 0, code: '', msg: 'Success', errors: [] };
            });
          });
        });
      }
      return settle(callback, work.then(function (result) {
        result.browserSupportPaymentRequest = !!state.path || paymentRequestApi.checkAvailability();
        result.canMakePaymentWithActiveCard = !!state.path && state.canPay;
        if (!result.errors) result.errors = [];
        if (result.status === 0 && !state.path) {
          var unsupported = failure('not_supported', 'no Apple Pay in this browser');
          unsupported.browserSupportPaymentRequest = false;
          unsupported.canMakePaymentWithActiveCard = false;
          unsupported.errors = [];
          return unsupported;
        }
        return result;
      }));
    },

    /** Shows the sheet (call it from the click handler) and resolves with TapPay's getPrime result. */
    getPrime: function (callback) {
      var promise = new Promise(function (resolve) {
        if (!state.appId) return resolve(failure('sdk_not_setup', 'call Orchard.setupSDK first'));
        if (!state.validated || !state.path) {
          return resolve(failure('payment_request_not_setup', 'call setupPaymentRequest and wait for its callback'));
        }
        if (state.busy) return resolve(failure('payment_in_progress', 'a payment sheet is already open'));
        var cart = new Cart(state.validated, state.paymentRequest);
        state.busy = true;
        var finish = function (result) { state.busy = false; resolve(result); };
        try {
          if (state.path === 'apple_pay_session') getPrimeWithSession(cart, finish);
          else if (state.path === 'payment_request') getPrimeWithPaymentRequest(cart, finish);
          else getPrimeWithSandboxWallet(cart, finish);
        } catch (e) {
          finish(failure('not_supported', 'the payment sheet could not be shown'));
        }
      });
      return settle(callback, promise);
    }
  };

  window.Orchard = {
    version: VERSION,
    /** `serverType` is 'sandbox' or 'production'; options: {gatewayURL, wallet: 'sandbox', hookTimeoutMillis}. */
    setupSDK: function (appId, appKey, serverType, options) {
      options = options || {};
      if (serverType !== 'sandbox' && serverType !== 'production') {
        throw new TypeError("Orchard.setupSDK: serverType is 'sandbox' or 'production'");
      }
      state.appId = String(appId);
      state.appKey = String(appKey);
      state.serverType = serverType;
      state.gatewayURL = String(options.gatewayURL || scriptOrigin).replace(/\/+$/, '');
      state.wallet = options.wallet || null;
      if (options.hookTimeoutMillis > 0) state.hookTimeoutMillis = options.hookTimeoutMillis;
    },
    paymentRequestApi: paymentRequestApi,
    /** The numeric status of each failure code. */
    statusCodes: STATUS
  };
})(window, document);
