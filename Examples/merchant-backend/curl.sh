#!/usr/bin/env bash
# The merchant backend's calls to an Orchard gateway with curl, step by step (what backend.py does in Python).
# Needs a running gateway and the merchant's keys:
#   ORCHARD_GATEWAY=http://127.0.0.1:8080 ORCHARD_SECRET_KEY=sk_… ORCHARD_APP_ID=app_… ORCHARD_APP_KEY=ak_… ./curl.sh
# In the sandbox it stands in for the app too, taking a token from the sandbox wallet; a real app or page gets
# the token from Apple Pay and turns it into the prime. Exits non-zero when a step fails.
set -euo pipefail
GATEWAY=${ORCHARD_GATEWAY:-http://127.0.0.1:8080}
: "${ORCHARD_SECRET_KEY:?the merchant secret key}" "${ORCHARD_APP_ID:?the app id}" "${ORCHARD_APP_KEY:?the app key}"
SERVER=(-H "Authorization: Bearer $ORCHARD_SECRET_KEY" -H 'Content-Type: application/json')
CLIENT=(-H "X-Orchard-App-Id: $ORCHARD_APP_ID" -H "X-Orchard-App-Key: $ORCHARD_APP_KEY" -H 'Content-Type: application/json')
field() { python3 -c 'import json, sys; print(json.load(sys.stdin)[sys.argv[1]])' "$1"; }
ORDER="curl-$(date +%s)-$$"

# 1. (The app's side, sandbox only) a token for TWD 480.00, then the prime.
TOKEN=$(curl -sf "$GATEWAY/v1/sandbox/wallet/tokens" "${CLIENT[@]}" -d '{"amount": "480.00", "currency": "TWD"}' |
  python3 -c 'import json, sys; print(json.dumps(json.load(sys.stdin)["token"]))')
PRIME=$(curl -sf "$GATEWAY/v1/tokens" "${CLIENT[@]}" -d "{\"token\": $TOKEN}" | field prime)

# 2. The backend pays the prime (the amount must be the token's), with the order as the idempotency key.
PAYMENT=$(curl -sf "$GATEWAY/v1/payments" "${SERVER[@]}" -H "Idempotency-Key: order-$ORDER" \
  -d "{\"prime\": \"$PRIME\", \"amount\": \"480.00\", \"currency\": \"TWD\", \"order_number\": \"$ORDER\"}")
echo "paid: $(echo "$PAYMENT" | field id) $(echo "$PAYMENT" | field status)"

# 3. A partial refund.
curl -sf "$GATEWAY/v1/payments/$(echo "$PAYMENT" | field id)/refunds" "${SERVER[@]}" -d '{"amount": "80.00"}' >/dev/null
echo "refunded: 80.00"

# 4. The session flow: the backend fixes the amount in an order session; the app pays it with its token.
SESSION=$(curl -sf "$GATEWAY/v1/sessions" "${SERVER[@]}" \
  -d "{\"out_trade_no\": \"$ORDER-s\", \"amount\": \"250.00\", \"currency\": \"TWD\", \"country\": \"TW\", \"subject\": \"Tea\", \"user_id\": \"u-1\"}")
echo "session: $(echo "$SESSION" | field order_token)"
