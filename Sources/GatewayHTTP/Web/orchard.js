/*
 * orchard.js: Apple Pay on the web with an Orchard gateway (docs/web.md).
 *
 * One plain script, no build step and no dependencies; it defines window.Orchard with TapPay's
 * TPDirect.paymentRequestApi surface, and window.TPDirect as the same object unless the page has one. getPrime takes one of three paths: ApplePaySession (Safari),
 * the W3C PaymentRequest API with Apple Pay, or the sandbox wallet (an in-page sheet, sandbox only).
 * Amounts are decimal strings, added as integer minor units. Nothing here logs a token, PAN or cryptogram.
 * What this file adds to the page carries no inline style attribute (a strict CSP's style-src holds): the Apple
 * Pay button's CSS goes in a constructed stylesheet. The sandbox wallet's sheet is its own file,
 * orchard-sandbox-wallet.js, which this one loads from the gateway with its integrity only in the sandbox.
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
    wallet_error: 11,
    timeout: 12
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
    // Under Safari's 30 s limit for a sheet's step, so the sheet gets a failure rather than expiring.
    requestTimeoutMillis: 25000,
    merchantIdentifier: null,
    countryCode: 'TW',
    paymentRequest: null,
    // setupPaymentRequest's outcome while it is at the gateway.
    setup: null,
    hooks: {},
    validated: null,
    path: null,
    canPay: false,
    // applePayCapabilities' paymentCredentialStatus, once asked.
    credentialStatus: null,
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

  /** A gateway call; an answer later than `requestTimeoutMillis` is abandoned (`timedOut`). */
  function call(method, path, body) {
    var headers = { 'X-Orchard-App-Id': state.appId, 'X-Orchard-App-Key': state.appKey };
    var init = { method: method, headers: headers, credentials: 'omit', mode: 'cors' };
    if (body !== undefined) {
      headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    var timedOut = false;
    var controller = typeof window.AbortController === 'function' ? new window.AbortController() : null;
    if (controller) init.signal = controller.signal;
    var lost = { status: 0, json: null, requestId: '' };
    var request = window.fetch(state.gatewayURL + path, init).then(
      function (response) {
        return response.text().then(function (text) {
          var json = null;
          try { json = text ? JSON.parse(text) : null; } catch (e) { json = null; }
          return { status: response.status, json: json, requestId: response.headers.get('Request-Id') || '' };
        });
      },
      function () {
        return lost;
      });
    var timer;
    var deadline = new Promise(function (resolve) {
      timer = window.setTimeout(function () {
        timedOut = true;
        if (controller) controller.abort();
        resolve(lost);
      }, state.requestTimeoutMillis);
    });
    return Promise.race([request, deadline]).then(function (answer) {
      window.clearTimeout(timer);
      if (timedOut) return { status: 0, json: null, requestId: '', timedOut: true };
      return answer;
    });
  }

  function gatewayFailure(answer) {
    if (answer.timedOut) {
      return failure('timeout', 'the gateway did not answer within ' + state.requestTimeoutMillis + ' ms');
    }
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
    this.couponCode = paymentRequest.couponCode || '';
    // The errors of the merchant's last answer to each kind of selection: a selection they stand against
    // cannot be paid until another answer clears them.
    this.refusals = {};
    this.setItems(paymentRequest.displayItems || []);
    this.setShippingOptions(paymentRequest.shippingOptions || []);
  }

  /** The errors the merchant still stands by, in the order of the selections. */
  Cart.prototype.outstanding = function () {
    var refusals = this.refusals;
    return ['shippingOption', 'shippingAddress', 'paymentMethod', 'couponCode'].reduce(function (all, kind) {
      return all.concat(refusals[kind] || []);
    }, []);
  };

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

  /** Applies a hook's update to the cart and keeps its errors as the refusal of `kind`; returns the errors. */
  function applyUpdate(cart, update, kind) {
    var errors = update && Array.isArray(update.errors) ? update.errors : [];
    if (kind) cart.refusals[kind] = errors;
    if (!update) return errors;
    if (Array.isArray(update.displayItems)) cart.setItems(update.displayItems);
    if (Array.isArray(update.shippingOptions)) cart.setShippingOptions(update.shippingOptions);
    return errors;
  }

  /**
   * A hook's errors ({code, contactField, message}) for Apple Pay JS: ApplePayError objects where Safari has
   * the class (it refuses plain objects), an unknown code as 'unknown'; plain objects elsewhere.
   */
  function sheetErrors(errors) {
    var ApplePayErrorClass = window.ApplePayError;
    return (errors || []).map(function (error) {
      if (typeof ApplePayErrorClass !== 'function') {
        return { code: error.code || 'unknown', contactField: error.contactField, message: error.message || '' };
      }
      if (error instanceof ApplePayErrorClass) return error;
      try {
        return new ApplePayErrorClass(error.code || 'unknown', error.contactField, error.message || '');
      } catch (e) {
        return new ApplePayErrorClass('unknown', undefined, error.message || error.code || '');
      }
    });
  }

  // Apple Pay's contact fields as the W3C AddressErrors members that mark them.
  var ADDRESS_ERROR_FIELDS = {
    addressLines: 'addressLine', postalAddress: 'addressLine', locality: 'city', subLocality: 'dependentLocality',
    postalCode: 'postalCode', administrativeArea: 'region', country: 'country', countryCode: 'country',
    name: 'recipient', phoneNumber: 'phone'
  };

  /** A hook's errors as a W3C details update: `error` (all messages) and `shippingAddressErrors` by field. */
  function w3cErrors(errors, details) {
    details = details || {};
    if (!errors || !errors.length) return details;
    details.error = errors.map(function (e) { return e.message || e.code; }).join(' ');
    var byField = {};
    errors.forEach(function (e) {
      var field = ADDRESS_ERROR_FIELDS[e.contactField];
      if (field) byField[field] = e.message || e.code;
    });
    if (Object.keys(byField).length) details.shippingAddressErrors = byField;
    return details;
  }

  /** The paymentAuthorized hook's answer: `{errors, orderDetails}` (no errors when it has none or fails). */
  function authorizationCheck(cart, payer, shippingAddress, billingAddress) {
    var outstanding = cart.outstanding();
    if (outstanding.length) return Promise.resolve({ errors: outstanding });
    return runHook('paymentAuthorized', {
      payer: payer, shippingAddress: contact(shippingAddress), billingAddress: contact(billingAddress),
      shippingOption: cart.shipping ? cart.shipping.id : ''
    }).then(function (update) {
      return {
        errors: update && Array.isArray(update.errors) ? update.errors : [],
        orderDetails: update && update.orderDetails ? update.orderDetails : null
      };
    });
  }

  /** Merchant validation: Apple's merchant session for `validationURL`, as the page's merchant identifier. */
  function validateMerchant(validationURL) {
    var body = {
      validation_url: validationURL, domain: window.location.hostname, display_name: state.paymentRequest.total.label
    };
    if (state.merchantIdentifier) body.merchant_identifier = state.merchantIdentifier;
    return call('POST', '/v1/apple-pay/merchant-sessions', body).then(function (answer) {
      if (answer.status === 200 && answer.json) return { session: answer.json };
      var refused = gatewayFailure(answer);
      return {
        refusal: failure('merchant_validation_failed', refused.msg, { reason: refused.code, requestId: answer.requestId })
      };
    });
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
    if (couponsEnabled()) {
      request.supportsCouponCode = true;
      if (cart.couponCode) request.couponCode = cart.couponCode;
    }
    var version = sessionVersion();
    var session = new Session(version, request);
    var tokenizing = false;
    var done = false;

    function end(result) {
      if (done) return;
      done = true;
      finish(result);
    }

    function recomputed(errors) {
      return { newTotal: cart.appleTotal(), newLineItems: cart.appleLineItems(), errors: sheetErrors(errors) };
    }

    /** completePayment with a status, field errors and order details (as a plain status before version 3). */
    function completePayment(status, errors, orderDetails) {
      if (version < 3) return session.completePayment(status);
      var result = { status: status, errors: sheetErrors(errors) };
      if (orderDetails) result.orderDetails = orderDetails;
      session.completePayment(result);
    }

    session.onvalidatemerchant = function (event) {
      validateMerchant(event.validationURL).then(function (validated) {
        if (validated.session) {
          session.completeMerchantValidation(validated.session);
          return;
        }
        try { session.abort(); } catch (e) { /* already gone */ }
        end(validated.refusal);
      });
    };

    session.onshippingmethodselected = function (event) {
      var method = event.shippingMethod || {};
      cart.choose(method.identifier);
      runHook('shippingOptionChange', { id: method.identifier, label: method.label }).then(function (update) {
        var answer = recomputed(applyUpdate(cart, update, 'shippingOption'));
        if (update && Array.isArray(update.shippingOptions)) answer.newShippingMethods = cart.appleShippingMethods();
        session.completeShippingMethodSelection(answer);
      });
    };

    session.onshippingcontactselected = function (event) {
      runHook('shippingAddressChange', contact(event.shippingContact)).then(function (update) {
        var answer = recomputed(applyUpdate(cart, update, 'shippingAddress'));
        answer.newShippingMethods = cart.appleShippingMethods();
        session.completeShippingContactSelection(answer);
      });
    };

    session.onpaymentmethodselected = function (event) {
      runHook('paymentMethodChange', event.paymentMethod || {}).then(function (update) {
        session.completePaymentMethodSelection(recomputed(applyUpdate(cart, update, 'paymentMethod')));
      });
    };

    session.oncouponcodechanged = function (event) {
      cart.couponCode = event.couponCode || '';
      runHook('couponCodeChange', { couponCode: cart.couponCode }).then(function (update) {
        var answer = recomputed(applyUpdate(cart, update, 'couponCode'));
        answer.newShippingMethods = cart.appleShippingMethods();
        session.completeCouponCodeChange(answer);
      });
    };

    session.onpaymentauthorized = function (event) {
      var payment = event.payment || {};
      var shippingContact = payment.shippingContact || {};
      var payer = {
        name: [shippingContact.givenName, shippingContact.familyName].filter(function (p) { return p; }).join(' '),
        phone: shippingContact.phoneNumber || '', email: shippingContact.emailAddress || ''
      };
      authorizationCheck(cart, payer, shippingContact, payment.billingContact).then(function (check) {
        // Errors keep the sheet open: the buyer fixes the fields (or the selection) and authorizes again.
        if (check.errors.length) return completePayment(Session.STATUS_FAILURE, check.errors);
        tokenizing = true;
        return tokenize(payment.token, cart, payer, shippingContact, payment.billingContact).then(function (result) {
          tokenizing = false;
          // completePayment(STATUS_SUCCESS) only once the prime is back.
          if (result.status === 0) completePayment(Session.STATUS_SUCCESS, [], check.orderDetails);
          else completePayment(Session.STATUS_FAILURE, []);
          end(result);
        });
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
    // Merchant validation's refusal, kept for the result (the browser then rejects show() with its own error).
    var refusal = null;
    request.addEventListener('merchantvalidation', function (event) {
      event.complete(validateMerchant(event.validationURL).then(function (validated) {
        if (validated.session) return validated.session;
        refusal = validated.refusal;
        throw new Error('merchant validation refused');
      }));
    });

    /** The details after a hook's update of `kind`, with its errors. */
    function updated(update, kind) {
      return w3cErrors(applyUpdate(cart, update, kind), w3cDetails(cart));
    }

    request.addEventListener('shippingoptionchange', function (event) {
      cart.choose(request.shippingOption);
      event.updateWith(runHook('shippingOptionChange', { id: request.shippingOption }).then(function (update) {
        return updated(update, 'shippingOption');
      }));
    });
    request.addEventListener('shippingaddresschange', function (event) {
      event.updateWith(runHook('shippingAddressChange', contact(request.shippingAddress)).then(function (update) {
        return updated(update, 'shippingAddress');
      }));
    });
    request.addEventListener('paymentmethodchange', function (event) {
      event.updateWith(runHook('paymentMethodChange', event.methodDetails || {}).then(function (update) {
        return updated(update, 'paymentMethod');
      }));
    });
    var tokenizing = false;

    /** The buyer paid: the merchant's check (errors keep the sheet open through retry), then the prime. */
    function handle(response) {
      var payer = { name: response.payerName || '', phone: response.payerPhone || '', email: response.payerEmail || '' };
      var details = response.details || {};
      return authorizationCheck(cart, payer, response.shippingAddress, details.billingContact).then(function (check) {
        if (check.errors.length && typeof response.retry === 'function') {
          return response.retry(w3cErrors(check.errors)).then(function () { return handle(response); });
        }
        tokenizing = true;
        return tokenize(details.token || details, cart, payer, response.shippingAddress, details.billingContact)
          .then(function (result) {
            tokenizing = false;
            return response.complete(result.status === 0 ? 'success' : 'fail').then(function () { finish(result); });
          });
      });
    }

    request.show().then(handle, function (error) {
      if (tokenizing) return;
      if (refusal) return finish(refusal);
      finish(error && error.name === 'AbortError'
        ? failure('user_cancelled', 'the buyer closed the payment sheet')
        : failure('not_supported', 'the payment sheet could not be shown'));
    });
  }

  // MARK: path 3, the sandbox wallet (its own file, orchard-sandbox-wallet.js, loaded only in the sandbox)

  // The wallet file's content-hashed path and integrity, filled in by the gateway that serves this file.
  var SANDBOX_WALLET = { src: '{{ORCHARD_SANDBOX_WALLET_SRC}}', integrity: '{{ORCHARD_SANDBOX_WALLET_INTEGRITY}}' };
  var sandboxWallet = null;

  /** A Promise of the sandbox wallet's open(cart, finish), loading its file from the gateway once. */
  function loadSandboxWallet() {
    if (sandboxWallet) return sandboxWallet;
    sandboxWallet = new Promise(function (resolve, reject) {
      var script = document.createElement('script');
      script.src = state.gatewayURL + SANDBOX_WALLET.src;
      script.integrity = SANDBOX_WALLET.integrity;
      script.crossOrigin = 'anonymous';
      script.onload = function () {
        var wallet = window.OrchardSandboxWallet;
        if (wallet && typeof wallet.attach === 'function') resolve(wallet.attach(walletCore));
        else reject(new Error('the sandbox wallet did not load'));
      };
      script.onerror = function () { reject(new Error('the sandbox wallet did not load')); };
      (document.head || document.documentElement).appendChild(script);
    });
    // A failed load is tried again by the next getPrime.
    sandboxWallet.catch(function () { sandboxWallet = null; });
    return sandboxWallet;
  }

  function getPrimeWithSandboxWallet(cart, finish) {
    loadSandboxWallet().then(function (open) { open(cart, finish); }, function () {
      finish(failure('not_supported', 'the sandbox wallet could not be loaded from the gateway'));
    });
  }

  // MARK: which path

  /** Whether ApplePaySession can pay on this device (false once applePayCapabilities said it cannot). */
  function hasSession() {
    if (state.credentialStatus === 'applePayUnsupported') return false;
    try {
      return !!window.ApplePaySession && window.ApplePaySession.canMakePayments() === true;
    } catch (e) {
      return false;
    }
  }

  function sandboxWalletAllowed() { return state.serverType === 'sandbox'; }

  function couponsEnabled() {
    return !!(state.paymentRequest && state.paymentRequest.supportsCouponCode) ||
      typeof (state.hooks && state.hooks.couponCodeChange) === 'function';
  }

  /** The merchant identifier of the page (setupApplePay), or the one the gateway put in the W3C form. */
  function merchantIdentifier(validated) {
    if (state.merchantIdentifier) return state.merchantIdentifier;
    var data = validated && validated.w3c_request && validated.w3c_request.methodData &&
      validated.w3c_request.methodData[0] && validated.w3c_request.methodData[0].data;
    return (data && data.merchantIdentifier) || null;
  }

  /**
   * The ApplePaySession path, or null: applePayCapabilities (Apple's recommended check) where Safari has it,
   * canMakePayments and canMakePaymentsWithActiveCard otherwise.
   */
  function sessionPath(validated) {
    var Session = window.ApplePaySession;
    var identifier = merchantIdentifier(validated);
    function legacy() {
      if (!hasSession()) return Promise.resolve(null);
      var check = typeof Session.canMakePaymentsWithActiveCard === 'function' && identifier
        ? Promise.resolve(Session.canMakePaymentsWithActiveCard(identifier)).catch(function () { return false; })
        : Promise.resolve(true);
      return check.then(function (canPay) { return { path: 'apple_pay_session', canPay: !!canPay }; });
    }
    if (typeof Session.applePayCapabilities !== 'function' || !identifier) return legacy();
    return Promise.resolve().then(function () { return Session.applePayCapabilities(identifier); }).then(
      function (answer) {
        var status = answer && answer.paymentCredentialStatus;
        state.credentialStatus = status || null;
        if (status === 'applePayUnsupported') return null;
        if (!status) return legacy();
        // Available: a card is ready; unknown: Apple says to offer Apple Pay too; unavailable: offer set-up.
        var canPay = status === 'paymentCredentialsAvailable' || status === 'paymentCredentialStatusUnknown';
        return { path: 'apple_pay_session', canPay: canPay };
      },
      legacy);
  }

  /** Resolves with the path getPrime will take and whether a card can pay, checking W3C Apple Pay support. */
  function discoverPath(validated) {
    if (state.wallet === 'sandbox' && sandboxWalletAllowed()) return Promise.resolve({ path: 'sandbox_wallet', canPay: true });
    var session = window.ApplePaySession ? sessionPath(validated) : Promise.resolve(null);
    return session.then(function (found) { return found || otherPath(validated); });
  }

  /** The W3C PaymentRequest path, else the sandbox wallet in the sandbox, else none. */
  function otherPath(validated) {
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

  // MARK: the button

  var BUTTON_TOKEN = /^[a-z][a-z-]{0,31}$/;
  var buttonSheet = null;

  /**
   * Adds `rules` to the SDK's constructed stylesheet (document.adoptedStyleSheets: no style element or attribute,
   * so a strict CSP's style-src holds); false where the browser has no constructed stylesheets (the page's own
   * CSS then styles the classes, docs/web.md).
   */
  function adoptRules(rules) {
    if (!buttonSheet) {
      if (typeof window.CSSStyleSheet !== 'function' || !('adoptedStyleSheets' in document)) return false;
      try {
        buttonSheet = new window.CSSStyleSheet();
        document.adoptedStyleSheets = document.adoptedStyleSheets.concat([buttonSheet]);
      } catch (e) {
        buttonSheet = null;
        return false;
      }
    }
    var present = Array.prototype.map.call(buttonSheet.cssRules, function (rule) { return rule.selectorText; });
    rules.forEach(function (rule) {
      var selector = rule.slice(0, rule.indexOf('{')).trim();
      if (present.indexOf(selector) < 0) buttonSheet.insertRule(rule, buttonSheet.cssRules.length);
    });
    return true;
  }

  // What the sandbox wallet's sheet works with: the same state, calls, hooks and tokenize step as the other paths.
  var walletCore = {
    state: state, call: call, runHook: runHook, applyUpdate: applyUpdate, authorizationCheck: authorizationCheck,
    gatewayFailure: gatewayFailure, tokenize: tokenize, failure: failure, fromMinor: fromMinor,
    couponsEnabled: couponsEnabled, adoptRules: adoptRules
  };

  function buttonToken(value, fallback, name) {
    if (value === undefined || value === null || value === '') return fallback;
    var text = String(value);
    if (!BUTTON_TOKEN.test(text)) throw new TypeError('Orchard.renderButton: ' + name + " is a name such as '" + fallback + "'");
    return text;
  }

  /**
   * Renders the Apple Pay button into `element` (its content is replaced) and returns it: Apple's
   * <apple-pay-button> where Apple's script defined it, a button with the -apple-pay-button CSS where Safari has
   * ApplePaySession, the sandbox wallet's own button in the sandbox, nothing (null) elsewhere. `options`:
   * {type: 'buy' | 'check-out' | 'book' | …, style: 'black' | 'white' | 'white-outline', locale: 'zh-TW' …}.
   */
  function renderButton(element, options) {
    if (!element || element.nodeType !== 1) throw new TypeError('Orchard.renderButton: element must be a DOM element');
    options = options || {};
    var type = buttonToken(options.type, 'buy', 'type');
    var style = buttonToken(options.style, 'black', 'style');
    var locale = options.locale ? String(options.locale) : '';
    var button;
    var forcedSandbox = state.wallet === 'sandbox' && sandboxWalletAllowed();
    if (!forcedSandbox && window.customElements && window.customElements.get('apple-pay-button')) {
      button = document.createElement('apple-pay-button');
      button.setAttribute('buttonstyle', style);
      button.setAttribute('type', type);
      if (locale) button.setAttribute('locale', locale);
      button.setAttribute('data-orchard-button', 'apple-pay-button');
    } else if (!forcedSandbox && hasSession()) {
      button = element.ownerDocument.createElement('button');
      button.setAttribute('type', 'button');
      button.setAttribute('data-orchard-button', 'apple-pay-css');
      button.setAttribute('aria-label', 'Apple Pay');
      button.className = 'orchard-apple-pay-button orchard-apple-pay-type-' + type + ' orchard-apple-pay-style-' + style;
      if (locale) button.setAttribute('lang', locale);
      adoptRules([
        '.orchard-apple-pay-button { display: inline-block; -webkit-appearance: -apple-pay-button; ' +
          'min-width: 140px; min-height: 30px; border: 0; padding: 0; cursor: pointer; }',
        '.orchard-apple-pay-type-' + type + ' { -apple-pay-button-type: ' + type + '; }',
        '.orchard-apple-pay-style-' + style + ' { -apple-pay-button-style: ' + style + '; }'
      ]);
    } else if (sandboxWalletAllowed()) {
      button = element.ownerDocument.createElement('button');
      button.setAttribute('type', 'button');
      button.setAttribute('data-orchard-button', 'sandbox');
      button.className = 'orchard-sandbox-button orchard-sandbox-button-' + style;
      if (locale) button.setAttribute('lang', locale);
      button.textContent = 'Pay with the sandbox wallet';
      adoptRules([
        '.orchard-sandbox-button { min-width: 140px; min-height: 36px; padding: 0 16px; border-radius: 8px; ' +
          'font: 600 15px -apple-system, system-ui, sans-serif; cursor: pointer; background: #000; color: #fff; ' +
          'border: 1px solid #000; }',
        '.orchard-sandbox-button-white, .orchard-sandbox-button-white-outline { background: #fff; color: #000; }',
        '.orchard-sandbox-button-white { border-color: #fff; }'
      ]);
    } else {
      return null;
    }
    element.textContent = '';
    element.appendChild(button);
    return button;
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
              var result = { status: 0, code: '', msg: 'Success', errors: [] };
              if (state.credentialStatus) result.paymentCredentialStatus = state.credentialStatus;
              result.canSetupApplePay = found.path === 'apple_pay_session' && !found.canPay &&
                typeof window.ApplePaySession.openPaymentSetup === 'function';
              return result;
            });
          });
        });
      }
      var setup = settle(callback, work.then(function (result) {
        result.browserSupportPaymentRequest = !!state.path || paymentRequestApi.checkAvailability();
        result.canMakePaymentWithActiveCard = !!state.path && state.canPay;
        if (result.canSetupApplePay === undefined) result.canSetupApplePay = false;
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
      // Until it settles, a getPrime waits for it (a page may call both in a row, as TapPay's examples read).
      state.setup = setup;
      setup.then(function () { if (state.setup === setup) state.setup = null; });
      return setup;
    },

    /**
     * Opens Apple Pay's set-up for the merchant (ApplePaySession.openPaymentSetup): the action of a "Set up Apple
     * Pay" button when setupPaymentRequest said canSetupApplePay. Resolves with `{status: 0, opened}`.
     */
    openPaymentSetup: function (callback) {
      var Session = window.ApplePaySession;
      var identifier = merchantIdentifier(state.validated);
      var work;
      if (!state.appId) {
        work = Promise.resolve(failure('sdk_not_setup', 'call Orchard.setupSDK first'));
      } else if (!Session || typeof Session.openPaymentSetup !== 'function' || !identifier) {
        work = Promise.resolve(failure('not_supported', "this browser cannot open Apple Pay's set-up"));
      } else {
        work = Promise.resolve().then(function () { return Session.openPaymentSetup(identifier); }).then(
          function (opened) { return { status: 0, code: '', msg: 'Success', opened: !!opened }; },
          function () { return failure('not_supported', "Apple Pay's set-up could not be opened"); });
      }
      return settle(callback, work);
    },

    /**
     * Shows the sheet (call it from the click handler) and resolves with TapPay's getPrime result. Called while
     * setupPaymentRequest is still at the gateway, it waits for its outcome first (and answers its refusal).
     */
    getPrime: function (callback) {
      if (state.setup) {
        return settle(callback, state.setup.then(function (outcome) {
          if (outcome.status === 0) return paymentRequestApi.getPrime();
          // The set-up's refusal is the prime's: its status, code and message.
          return { status: outcome.status, code: outcome.code, msg: outcome.msg };
        }));
      }
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
    /**
     * `appId` is the app id (`app_…`) or TapPay's numeric app id (a positive integer, or its digits, set with
     * PUT /v1/compat/tappay); `serverType` is 'sandbox' or 'production'; options: {gatewayURL, wallet: 'sandbox',
     * hookTimeoutMillis, requestTimeoutMillis}.
     */
    setupSDK: function (appId, appKey, serverType, options) {
      options = options || {};
      if (typeof appId === 'number' && !(Number.isSafeInteger(appId) && appId > 0)) {
        throw new TypeError('Orchard.setupSDK: a numeric appID is a positive integer');
      }
      if (serverType !== 'sandbox' && serverType !== 'production') {
        throw new TypeError("Orchard.setupSDK: serverType is 'sandbox' or 'production'");
      }
      state.appId = String(appId);
      state.appKey = String(appKey);
      state.serverType = serverType;
      state.gatewayURL = String(options.gatewayURL || scriptOrigin).replace(/\/+$/, '');
      state.wallet = options.wallet || null;
      // The sandbox wallet's file comes ahead of the buyer's tap; production never loads it.
      if (serverType === 'sandbox') loadSandboxWallet().catch(function () {});
      if (options.hookTimeoutMillis > 0) state.hookTimeoutMillis = options.hookTimeoutMillis;
      if (options.requestTimeoutMillis > 0) state.requestTimeoutMillis = options.requestTimeoutMillis;
    },
    paymentRequestApi: paymentRequestApi,
    renderButton: renderButton,
    /** The numeric status of each failure code. */
    statusCodes: STATUS
  };
  // TapPay's global: a page written for TapPay's Web SDK runs as it is. A TPDirect the page already has stays.
  if (!window.TPDirect) window.TPDirect = window.Orchard;
})(window, document);
