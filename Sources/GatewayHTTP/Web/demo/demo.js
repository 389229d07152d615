// The demo store's page script (demo.html), served at /demo/demo.js: the credentials come from the
// body's data attributes the gateway fills in.
(function () {
  'use strict';
  var carts = {
    tea: {
      title: 'Tea order',
      request: {
        supportedNetworks: ['AMEX', 'JCB', 'MASTERCARD', 'VISA'],
        supportedMethods: ['apple_pay'],
        displayItems: [
          { label: 'Alishan oolong, 150 g', amount: { currency: 'TWD', value: '480.00' } },
          { label: 'Sun Moon Lake black tea', amount: { currency: 'TWD', value: '320.00' } }
        ],
        total: { label: 'Orchard Tea House', amount: { currency: 'TWD', value: '800.00' } },
        shippingOptions: [
          { id: 'standard', label: 'Home delivery (2 days)', detail: '2 days', amount: { currency: 'TWD', value: '60.00' } },
          { id: 'express', label: 'Express (same day)', detail: 'Today', amount: { currency: 'TWD', value: '150.00' } },
          { id: 'pickup', label: 'Pick up in store', detail: 'Xinyi store', amount: { currency: 'TWD', value: '0.00' } }
        ],
        options: { requestPayerEmail: true, requestPayerName: true, requestPayerPhone: true, requestShipping: true,
          shippingType: 'shipping' }
      }
    },
    taxi: {
      title: 'Taxi ride: the fare is charged at the end of the ride',
      charge: '285.00',
      request: {
        supportedNetworks: ['AMEX', 'JCB', 'MASTERCARD', 'VISA'],
        supportedMethods: ['apple_pay'],
        displayItems: [
          { label: 'Flag fall', amount: { currency: 'TWD', value: '85.00' } },
          { label: 'Per-mile fare', isAmountPending: true }
        ],
        total: { label: 'Orchard Taxi', isAmountPending: true, isShowTotalAmount: false },
        options: { requestPayerName: true, requestPayerPhone: true }
      }
    }
  };
  var name = new URLSearchParams(window.location.search).get('cart') === 'taxi' ? 'taxi' : 'tea';
  var cart = carts[name];

  function text(id, value) { document.getElementById(id).textContent = value; }
  function setStatus(status, message) {
    var node = document.getElementById('status');
    node.setAttribute('data-demo-status', status);
    node.textContent = status;
    text('message', message || '');
  }
  function rows(id, pairs) {
    var table = document.getElementById(id);
    table.textContent = '';
    pairs.forEach(function (pair) {
      var row = table.insertRow();
      row.insertCell().textContent = pair[0];
      var cell = row.insertCell();
      cell.className = 'amount';
      cell.textContent = pair[1] === undefined || pair[1] === null ? '' : String(pair[1]);
      row.setAttribute('data-demo-field', pair[0]);
    });
  }

  text('cart-title', cart.title);
  rows('items', cart.request.displayItems.map(function (item) {
    return [item.label, item.isAmountPending ? 'Amount pending' : item.amount.currency + ' ' + item.amount.value];
  }));
  if (cart.request.shippingOptions) {
    text('shipping', 'Shipping: ' + cart.request.shippingOptions.map(function (o) {
      return o.label + ' (' + o.amount.value + ')';
    }).join(', ') + ' (choose in the payment sheet)');
  }
  text('total', cart.request.total.isShowTotalAmount === false
    ? 'Amount pending' : 'TWD ' + cart.request.total.amount.value + ' + shipping');

  var page = document.body.dataset;
  Orchard.setupSDK(page.appId, page.appKey, 'sandbox', { wallet: 'sandbox' });
  Orchard.paymentRequestApi.setupApplePay({ merchantIdentifier: page.merchantIdentifier, countryCode: 'TW' });
  Orchard.paymentRequestApi.setupPaymentRequest(cart.request, function (result) {
    if (result.status !== 0) {
      setStatus('failed', 'setupPaymentRequest: ' + result.code + ' ' + result.msg);
      return;
    }
    document.getElementById('buy').disabled = false;
    setStatus('ready', 'Press the button and pay with a test card.');
  });

  document.getElementById('buy').addEventListener('click', function () {
    setStatus('paying', 'Waiting for the payment sheet...');
    Orchard.paymentRequestApi.getPrime(function (result) {
      if (result.status !== 0) {
        setStatus(result.code === 'user_cancelled' ? 'cancelled' : 'failed', result.code + ': ' + result.msg);
        return;
      }
      var expires = new Date(result.prime_expiry_millis);
      setStatus('prime', 'Prime received (valid until ' + expires.toISOString() + '); paying by prime...');
      document.getElementById('payment-section').hidden = false;
      document.getElementById('payment-section').setAttribute('data-demo-prime-expiry', String(result.prime_expiry_millis));
      var info = result.card_info;
      rows('card-info', [['bincode', info.bincode], ['lastfour', info.lastfour], ['issuer', info.issuer],
        ['issuer_zh_tw', info.issuer_zh_tw], ['bank_id', info.bank_id], ['level', info.level],
        ['country', info.country], ['countrycode', info.countrycode], ['funding', info.funding], ['type', info.type]]);
      var body = { prime: result.prime, amount: cart.charge || result.total_amount, currency: 'TWD' };
      if (cart.charge) body.deferred = true;
      fetch('/demo/api/pay', { method: 'POST', headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(body) })
        .then(function (response) { return response.json(); })
        .then(function (answer) {
          if (answer.error) {
            rows('payment', [['error', answer.error.code], ['decline_code', answer.error.decline_code],
              ['payment_id', answer.error.payment_id]]);
            setStatus('failed', 'Pay by prime: ' + answer.error.code + ' (' + (answer.error.decline_code || '') + ')');
            return;
          }
          var payment = answer.payment;
          rows('payment', [['id', payment.id], ['status', payment.status], ['amount', payment.currency + ' ' + payment.amount],
            ['auth_code', payment.auth_code], ['acquirer', payment.acquirer]]);
          var list = document.getElementById('events');
          list.textContent = '';
          answer.events.forEach(function (event) {
            var item = document.createElement('li');
            item.setAttribute('data-demo-event', event.type);
            item.textContent = event.type + ' ' + event.id + ' at ' + event.created_at;
            list.appendChild(item);
          });
          setStatus('succeeded', 'Paid: ' + payment.currency + ' ' + payment.amount + ' (' + payment.status + ').');
        }, function () { setStatus('failed', 'the demo server could not be reached'); });
    });
  });
})();
