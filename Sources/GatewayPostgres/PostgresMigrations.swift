/// A versioned, named schema change, applied in order in one transaction with the others pending, recorded in
/// `schema_migrations`. The versions and names are those of the SQLite store's migrations, with PostgreSQL
/// types: integer minor units (`bigint`) for money, `timestamptz` for times, `bytea` for sealed secrets and
/// `jsonb` for the documents. The invariants the domain relies on are constraints here too.
struct PostgresMigration {
    var version: Int
    var name: String
    var sql: String
}

enum PostgresMigrations {
    /// The advisory lock key that serializes migrations of instances starting together ("orchard" in ASCII).
    static let lockKey: Int64 = 0x6f72_6368_6172_64

    static let all: [PostgresMigration] = [
        PostgresMigration(
            version: 1, name: "initial_gateway_schema",
            sql: """
                CREATE TABLE settings (
                    name text PRIMARY KEY,
                    value bytea NOT NULL
                );
                CREATE TABLE merchants (
                    id text PRIMARY KEY,
                    environment text NOT NULL CHECK (environment IN ('sandbox', 'production')),
                    app_id text NOT NULL UNIQUE,
                    secret_key_id text NOT NULL UNIQUE,
                    webhook_url text,
                    webhook_secrets bytea,
                    credentials bytea,
                    identity_key bytea,
                    created_at timestamptz NOT NULL,
                    body jsonb NOT NULL
                );
                CREATE TABLE processing_keys (
                    seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
                    id text PRIMARY KEY,
                    merchant_id text NOT NULL REFERENCES merchants (id),
                    active boolean NOT NULL,
                    private_key bytea NOT NULL,
                    certificate_pem text NOT NULL,
                    created_at timestamptz NOT NULL
                );
                CREATE INDEX processing_keys_merchant ON processing_keys (merchant_id, created_at);
                CREATE TABLE bin_entries (
                    merchant_id text NOT NULL REFERENCES merchants (id),
                    prefix text NOT NULL,
                    issuer text, bank_id text, level text, country text, country_code text, funding integer,
                    PRIMARY KEY (merchant_id, prefix)
                );
                CREATE TABLE cobrand_ranges (
                    merchant_id text NOT NULL REFERENCES merchants (id),
                    low bigint NOT NULL,
                    high bigint NOT NULL CHECK (high >= low),
                    code text NOT NULL
                );
                CREATE INDEX cobrand_ranges_merchant ON cobrand_ranges (merchant_id, low);
                CREATE TABLE seen_transactions (
                    merchant_id text NOT NULL REFERENCES merchants (id),
                    environment text NOT NULL CHECK (environment IN ('sandbox', 'production')),
                    transaction_id text NOT NULL,
                    seen_at timestamptz NOT NULL,
                    PRIMARY KEY (merchant_id, environment, transaction_id)
                );
                CREATE TABLE primes (
                    hash text PRIMARY KEY,
                    merchant_id text NOT NULL REFERENCES merchants (id),
                    environment text NOT NULL CHECK (environment IN ('sandbox', 'production')),
                    amount bigint NOT NULL,
                    currency text NOT NULL,
                    deferred boolean NOT NULL,
                    card_info jsonb NOT NULL,
                    card_data bytea,
                    created_at timestamptz NOT NULL,
                    expires_at timestamptz NOT NULL,
                    claimed_at timestamptz,
                    payment_id text UNIQUE,
                    CHECK ((claimed_at IS NULL) = (payment_id IS NULL))
                );
                CREATE INDEX primes_expiry ON primes (expires_at) WHERE card_data IS NOT NULL;
                -- A prime is claimed once: its claim can never be replaced nor undone.
                CREATE FUNCTION primes_claimed_once() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                    IF OLD.payment_id IS NOT NULL AND NEW.payment_id IS DISTINCT FROM OLD.payment_id THEN
                        RAISE EXCEPTION 'prime already claimed' USING ERRCODE = 'unique_violation';
                    END IF;
                    RETURN NEW;
                END $$;
                CREATE TRIGGER primes_claimed_once BEFORE UPDATE ON primes
                    FOR EACH ROW EXECUTE FUNCTION primes_claimed_once();
                CREATE TABLE order_sessions (
                    id text PRIMARY KEY,
                    order_token text NOT NULL UNIQUE,
                    merchant_id text NOT NULL REFERENCES merchants (id),
                    environment text NOT NULL CHECK (environment IN ('sandbox', 'production')),
                    out_trade_no text NOT NULL,
                    status text NOT NULL,
                    payment_id text,
                    created_at timestamptz NOT NULL,
                    expires_at timestamptz NOT NULL,
                    body jsonb NOT NULL,
                    UNIQUE (merchant_id, environment, out_trade_no)
                );
                CREATE TABLE payments (
                    id text PRIMARY KEY,
                    merchant_id text NOT NULL REFERENCES merchants (id),
                    environment text NOT NULL CHECK (environment IN ('sandbox', 'production')),
                    status text NOT NULL,
                    amount bigint NOT NULL CHECK (amount > 0),
                    currency text NOT NULL,
                    captured_amount bigint NOT NULL CHECK (captured_amount >= 0),
                    refunded_amount bigint NOT NULL CHECK (refunded_amount >= 0 AND refunded_amount <= captured_amount),
                    order_number text,
                    out_trade_no text,
                    session_id text REFERENCES order_sessions (id),
                    pending_operation boolean NOT NULL,
                    capture_at timestamptz,
                    created_at timestamptz NOT NULL,
                    updated_at timestamptz NOT NULL,
                    body jsonb NOT NULL
                );
                CREATE INDEX payments_listing ON payments (merchant_id, environment, created_at, id);
                CREATE INDEX payments_status ON payments (status, updated_at);
                CREATE INDEX payments_capture ON payments (capture_at) WHERE capture_at IS NOT NULL;
                CREATE TABLE payment_card_data (
                    payment_id text PRIMARY KEY REFERENCES payments (id),
                    sealed bytea NOT NULL
                );
                CREATE TABLE payment_transitions (
                    seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                    payment_id text NOT NULL REFERENCES payments (id),
                    from_status text,
                    to_status text NOT NULL,
                    at timestamptz NOT NULL,
                    cause text NOT NULL
                );
                CREATE INDEX payment_transitions_payment ON payment_transitions (payment_id, seq);
                CREATE TABLE refunds (
                    seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
                    id text PRIMARY KEY,
                    payment_id text NOT NULL REFERENCES payments (id),
                    amount bigint NOT NULL CHECK (amount > 0),
                    currency text NOT NULL,
                    status text NOT NULL,
                    reason text,
                    decline_code text,
                    created_at timestamptz NOT NULL,
                    updated_at timestamptz NOT NULL
                );
                CREATE INDEX refunds_payment ON refunds (payment_id, created_at);
                CREATE INDEX refunds_pending ON refunds (status) WHERE status = 'pending';
                CREATE TABLE webhook_events (
                    seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
                    id text PRIMARY KEY,
                    merchant_id text NOT NULL REFERENCES merchants (id),
                    object_id text NOT NULL,
                    type text NOT NULL,
                    payload bytea NOT NULL,
                    created_at timestamptz NOT NULL,
                    delivery_url text,
                    state text NOT NULL CHECK (state IN ('pending', 'delivered', 'dead')),
                    attempts integer NOT NULL,
                    next_attempt_at timestamptz
                );
                CREATE INDEX webhook_events_due ON webhook_events (state, next_attempt_at);
                CREATE INDEX webhook_events_merchant ON webhook_events (merchant_id, created_at);
                CREATE INDEX webhook_events_object ON webhook_events (object_id);
                CREATE TABLE webhook_attempts (
                    seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                    event_id text NOT NULL REFERENCES webhook_events (id),
                    attempted_at timestamptz NOT NULL,
                    http_status integer,
                    error text,
                    state text NOT NULL
                );
                CREATE INDEX webhook_attempts_event ON webhook_attempts (event_id, seq);
                CREATE TABLE idempotency_keys (
                    merchant_id text NOT NULL REFERENCES merchants (id),
                    environment text NOT NULL CHECK (environment IN ('sandbox', 'production')),
                    idempotency_key text NOT NULL,
                    operation text NOT NULL,
                    fingerprint text NOT NULL,
                    recovery_point text NOT NULL,
                    locked_at timestamptz,
                    response bytea,
                    created_at timestamptz NOT NULL,
                    PRIMARY KEY (merchant_id, environment, idempotency_key)
                );
                CREATE TABLE sandbox_acquirer_authorizations (
                    seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
                    reference text PRIMARY KEY,
                    merchant_reference text NOT NULL,
                    merchant_id text NOT NULL,
                    amount bigint NOT NULL,
                    currency text NOT NULL,
                    last_four text NOT NULL,
                    status text NOT NULL,
                    decline_code text,
                    auth_code text NOT NULL,
                    captured_amount bigint NOT NULL,
                    refunded_amount bigint NOT NULL,
                    voided boolean NOT NULL,
                    created_at timestamptz NOT NULL,
                    resolves_at timestamptz
                );
                CREATE INDEX sandbox_acquirer_by_merchant_reference
                    ON sandbox_acquirer_authorizations (merchant_reference, created_at);
                CREATE TABLE sandbox_acquirer_operations (
                    id text PRIMARY KEY,
                    reference text NOT NULL,
                    kind text NOT NULL,
                    amount bigint NOT NULL,
                    succeeded boolean NOT NULL,
                    decline_code text,
                    created_at timestamptz NOT NULL
                );
                CREATE INDEX sandbox_acquirer_operations_reference ON sandbox_acquirer_operations (reference);
                """),
        PostgresMigration(
            version: 2, name: "webhook_endpoint_enabled",
            sql: """
                ALTER TABLE merchants ADD COLUMN webhook_enabled boolean NOT NULL DEFAULT true;
                """),
        PostgresMigration(
            version: 3, name: "stored_responses",
            sql: """
                CREATE TABLE stored_responses (
                    name text PRIMARY KEY,
                    created_at timestamptz NOT NULL,
                    value bytea NOT NULL
                );
                CREATE INDEX stored_responses_created ON stored_responses (created_at);
                INSERT INTO stored_responses (name, created_at, value)
                    SELECT name, now(), value FROM settings WHERE name LIKE 'response:%';
                DELETE FROM settings WHERE name LIKE 'response:%';
                """),
        // TapPay's card_info carries the issuer's name in Traditional Chinese (SQLite's migration 5; a prime's
        // card information is one jsonb document here, which carries it already).
        PostgresMigration(
            version: 4, name: "issuer_zh_tw",
            sql: """
                ALTER TABLE bin_entries ADD COLUMN issuer_zh_tw text;
                """),
        // Who changed what (SQLite's migration 6).
        PostgresMigration(
            version: 5, name: "audit_log",
            sql: """
                CREATE TABLE audit_log (
                    id text PRIMARY KEY,
                    merchant_id text NOT NULL REFERENCES merchants (id),
                    actor_kind text NOT NULL CHECK (actor_kind <> ''),
                    actor_name text NOT NULL,
                    action text NOT NULL CHECK (action <> ''),
                    target text,
                    detail jsonb NOT NULL,
                    created_at timestamptz NOT NULL
                );
                CREATE INDEX audit_log_merchant ON audit_log (merchant_id, created_at, id);
                """),
        // A rotated secret key keeps working for its overlap (SQLite's migration 7).
        PostgresMigration(
            version: 6, name: "previous_secret_key",
            sql: """
                ALTER TABLE merchants ADD COLUMN previous_secret_key_id text UNIQUE;
                """),
        // Merchant console sign-ins (SQLite's migration 8).
        PostgresMigration(
            version: 7, name: "console_sessions",
            sql: """
                CREATE TABLE console_sessions (
                    id text PRIMARY KEY,
                    token_hash text NOT NULL UNIQUE,
                    merchant_id text NOT NULL REFERENCES merchants (id),
                    created_at timestamptz NOT NULL,
                    last_seen_at timestamptz NOT NULL,
                    ended_at timestamptz
                );
                CREATE INDEX console_sessions_last_seen ON console_sessions (last_seen_at);
                """),
        // How long each webhook delivery attempt took (SQLite's migration 9).
        PostgresMigration(
            version: 8, name: "webhook_attempt_latency",
            sql: """
                ALTER TABLE webhook_attempts ADD COLUMN latency_ms integer;
                """),
        // A payment's fields move from its jsonb document (encoded and decoded on every step of a payment) into
        // columns (SQLite's migration 10); rows written before are converted in place, and the document goes.
        PostgresMigration(
            version: 9, name: "payment_columns",
            sql: """
                ALTER TABLE payments
                    ADD COLUMN details text,
                    ADD COLUMN cardholder boolean NOT NULL DEFAULT false,
                    ADD COLUMN cardholder_name text,
                    ADD COLUMN cardholder_email text,
                    ADD COLUMN cardholder_phone_number text,
                    ADD COLUMN cardholder_zip_code text,
                    ADD COLUMN cardholder_address text,
                    ADD COLUMN cardholder_national_id text,
                    ADD COLUMN metadata text,
                    ADD COLUMN card_bin_code text NOT NULL DEFAULT '',
                    ADD COLUMN card_last_four text NOT NULL DEFAULT '',
                    ADD COLUMN card_type bigint NOT NULL DEFAULT -1,
                    ADD COLUMN card_funding bigint NOT NULL DEFAULT -1,
                    ADD COLUMN card_network text,
                    ADD COLUMN card_issuer text,
                    ADD COLUMN card_bank_id text,
                    ADD COLUMN card_level text,
                    ADD COLUMN card_country text,
                    ADD COLUMN card_country_code text,
                    ADD COLUMN card_issuer_zh_tw text,
                    ADD COLUMN capture_mode text NOT NULL DEFAULT 'now',
                    ADD COLUMN capture_delay_days bigint,
                    ADD COLUMN scheduled_capture_at timestamptz,
                    ADD COLUMN auth_code text,
                    ADD COLUMN acquirer text NOT NULL DEFAULT '',
                    ADD COLUMN acquirer_reference text,
                    ADD COLUMN failure_code text,
                    ADD COLUMN authorized_at timestamptz,
                    ADD COLUMN captured_at timestamptz,
                    ADD COLUMN voided_at timestamptz,
                    ADD COLUMN authorization_sent_at timestamptz,
                    ADD COLUMN pending_kind text,
                    ADD COLUMN pending_operation_id text,
                    ADD COLUMN pending_amount bigint;
                UPDATE payments SET
                    details = body ->> 'details',
                    cardholder = jsonb_typeof(body -> 'cardholder') IS NOT DISTINCT FROM 'object',
                    cardholder_name = body #>> '{cardholder,name}',
                    cardholder_email = body #>> '{cardholder,email}',
                    cardholder_phone_number = body #>> '{cardholder,phoneNumber}',
                    cardholder_zip_code = body #>> '{cardholder,zipCode}',
                    cardholder_address = body #>> '{cardholder,address}',
                    cardholder_national_id = body #>> '{cardholder,nationalID}',
                    metadata = CASE WHEN body -> 'metadata' IS NULL OR body -> 'metadata' = '{}'::jsonb THEN NULL
                        ELSE (body -> 'metadata')::text END,
                    card_bin_code = COALESCE(body #>> '{cardInfo,binCode}', ''),
                    card_last_four = COALESCE(body #>> '{cardInfo,lastFour}', ''),
                    card_type = COALESCE((body #>> '{cardInfo,type}')::bigint, -1),
                    card_funding = COALESCE((body #>> '{cardInfo,funding}')::bigint, -1),
                    card_network = body #>> '{cardInfo,network}',
                    card_issuer = body #>> '{cardInfo,issuer}',
                    card_bank_id = body #>> '{cardInfo,bankID}',
                    card_level = body #>> '{cardInfo,level}',
                    card_country = body #>> '{cardInfo,country}',
                    card_country_code = body #>> '{cardInfo,countryCode}',
                    card_issuer_zh_tw = body #>> '{cardInfo,issuerZhTW}',
                    capture_mode = CASE WHEN body -> 'captureMode' ? 'manual' THEN 'manual'
                        WHEN body -> 'captureMode' ? 'afterDays' THEN 'after_days' ELSE 'now' END,
                    capture_delay_days = (body #>> '{captureMode,afterDays,_0}')::bigint,
                    scheduled_capture_at = to_timestamp((body #>> '{captureAt}')::double precision / 1000),
                    auth_code = body ->> 'authCode',
                    acquirer = COALESCE(body ->> 'acquirer', ''),
                    acquirer_reference = body ->> 'acquirerReference',
                    failure_code = body ->> 'failureCode',
                    authorized_at = to_timestamp((body #>> '{authorizedAt}')::double precision / 1000),
                    captured_at = to_timestamp((body #>> '{capturedAt}')::double precision / 1000),
                    voided_at = to_timestamp((body #>> '{voidedAt}')::double precision / 1000),
                    authorization_sent_at = to_timestamp((body #>> '{authorizationSentAt}')::double precision / 1000),
                    pending_kind = body #>> '{pendingOperation,kind}',
                    pending_operation_id = body #>> '{pendingOperation,operationID}',
                    pending_amount = (body #>> '{pendingOperation,amount}')::bigint;
                ALTER TABLE payments DROP COLUMN body;
                """),
        // A console session is bound to the secret key that opened it (SQLite's migration 11).
        PostgresMigration(
            version: 10, name: "console_session_key",
            sql: """
                ALTER TABLE console_sessions ADD COLUMN secret_key_id text NOT NULL DEFAULT '';
                CREATE INDEX console_sessions_merchant ON console_sessions (merchant_id, ended_at);
                """),
        // Who holds a claimed webhook event: the dispatcher renews its lease before each send and sends nothing
        // another instance has taken over since (next_attempt_at is the lease's end while it is held).
        PostgresMigration(
            version: 11, name: "webhook_lease_owner",
            sql: """
                ALTER TABLE webhook_events ADD COLUMN lease_owner text;
                """),
        // The merchant's own reference for a charge (TapPay's bank_transaction_id): one payment per value and
        // merchant, which the unique index guarantees even to two requests at once.
        PostgresMigration(
            version: 12, name: "payment_bank_transaction_id",
            sql: """
                ALTER TABLE payments ADD COLUMN bank_transaction_id text;
                CREATE UNIQUE INDEX payments_bank_transaction_id ON payments (merchant_id, bank_transaction_id)
                    WHERE bank_transaction_id IS NOT NULL;
                """),
        // The SQLite store's `processor_payment_columns`.
        PostgresMigration(
            version: 13, name: "processor_payment_columns",
            sql: """
                ALTER TABLE payments ADD COLUMN processor_code text, ADD COLUMN processor_settings_version bigint;
                ALTER TABLE refunds ADD COLUMN processor_reference text;
                CREATE INDEX payments_processor_reference ON payments (merchant_id, acquirer, acquirer_reference)
                    WHERE acquirer_reference IS NOT NULL;
                """),
        // The SQLite store's `processor_settings`.
        PostgresMigration(
            version: 14, name: "processor_settings",
            sql: """
                CREATE TABLE processor_settings (
                    merchant_id text NOT NULL REFERENCES merchants (id),
                    version bigint NOT NULL CHECK (version > 0),
                    type text NOT NULL,
                    environment text,
                    fields text NOT NULL,
                    secrets bytea,
                    created_at timestamptz NOT NULL,
                    PRIMARY KEY (merchant_id, version)
                );
                """),
        // The SQLite store's `processor_notifications`.
        PostgresMigration(
            version: 15, name: "processor_notifications",
            sql: """
                CREATE TABLE processor_notifications (
                    id text PRIMARY KEY,
                    merchant_id text NOT NULL REFERENCES merchants (id),
                    processor text NOT NULL,
                    event_key text NOT NULL,
                    event_code text NOT NULL,
                    success boolean NOT NULL,
                    payment_id text,
                    amount bigint,
                    currency text,
                    outcome text NOT NULL,
                    received_at timestamptz NOT NULL,
                    UNIQUE (merchant_id, processor, event_key)
                );
                CREATE INDEX processor_notifications_merchant ON processor_notifications (merchant_id, received_at, id);
                """),
        // TapPay's numeric app id of a merchant (SQLite's migration 17): one merchant per value.
        PostgresMigration(
            version: 16, name: "merchant_tappay_app_id",
            sql: """
                ALTER TABLE merchants ADD COLUMN tappay_app_id bigint;
                CREATE UNIQUE INDEX merchants_tappay_app_id ON merchants (tappay_app_id)
                    WHERE tappay_app_id IS NOT NULL;
                """),
    ]
}
