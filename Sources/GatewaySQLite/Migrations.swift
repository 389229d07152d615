/// A versioned, named schema change. Applied in order, each in its own transaction, recorded in
/// `schema_migrations`. The SQL sticks to what PostgreSQL also accepts where it can (BIGINT, TEXT, explicit
/// constraints); amounts are integer minor units and times Unix milliseconds (UTC).
struct Migration: Sendable {
    var version: Int
    var name: String
    var sql: String
    /// Row conversions SQL alone cannot express, run after `sql` in the same transaction.
    var convert: (@Sendable (SQLiteConnection) throws -> Void)? = nil

    /// Applies the schema change (inside the migration transaction).
    func apply(_ connection: SQLiteConnection) throws {
        try connection.execute(sql)
        try convert?(connection)
    }
}

enum Migrations {
    static let all: [Migration] = [
        Migration(
            version: 1, name: "initial_gateway_schema",
            sql: """
                CREATE TABLE settings (
                    name TEXT PRIMARY KEY,
                    value BLOB NOT NULL
                );
                CREATE TABLE merchants (
                    id TEXT PRIMARY KEY,
                    environment TEXT NOT NULL CHECK (environment IN ('sandbox', 'production')),
                    app_id TEXT NOT NULL UNIQUE,
                    secret_key_id TEXT NOT NULL UNIQUE,
                    webhook_url TEXT,
                    created_at BIGINT NOT NULL,
                    body TEXT NOT NULL
                );
                CREATE TABLE processing_keys (
                    id TEXT PRIMARY KEY,
                    merchant_id TEXT NOT NULL REFERENCES merchants (id),
                    active INTEGER NOT NULL,
                    private_key BLOB NOT NULL,
                    certificate_pem TEXT NOT NULL,
                    created_at BIGINT NOT NULL
                );
                CREATE INDEX processing_keys_merchant ON processing_keys (merchant_id, created_at);
                CREATE TABLE bin_entries (
                    merchant_id TEXT NOT NULL REFERENCES merchants (id),
                    prefix TEXT NOT NULL,
                    issuer TEXT, bank_id TEXT, level TEXT, country TEXT, country_code TEXT, funding INTEGER,
                    PRIMARY KEY (merchant_id, prefix)
                );
                CREATE TABLE cobrand_ranges (
                    merchant_id TEXT NOT NULL REFERENCES merchants (id),
                    low BIGINT NOT NULL,
                    high BIGINT NOT NULL,
                    code TEXT NOT NULL
                );
                CREATE INDEX cobrand_ranges_merchant ON cobrand_ranges (merchant_id, low);
                CREATE TABLE seen_transactions (
                    merchant_id TEXT NOT NULL REFERENCES merchants (id),
                    environment TEXT NOT NULL,
                    transaction_id TEXT NOT NULL,
                    seen_at BIGINT NOT NULL,
                    PRIMARY KEY (merchant_id, environment, transaction_id)
                );
                CREATE TABLE primes (
                    hash TEXT PRIMARY KEY,
                    merchant_id TEXT NOT NULL REFERENCES merchants (id),
                    environment TEXT NOT NULL,
                    amount BIGINT NOT NULL,
                    currency TEXT NOT NULL,
                    deferred INTEGER NOT NULL,
                    card_info TEXT NOT NULL,
                    card_data BLOB,
                    created_at BIGINT NOT NULL,
                    expires_at BIGINT NOT NULL,
                    claimed_at BIGINT,
                    payment_id TEXT
                );
                CREATE INDEX primes_expiry ON primes (expires_at) WHERE card_data IS NOT NULL;
                CREATE TABLE order_sessions (
                    id TEXT PRIMARY KEY,
                    order_token TEXT NOT NULL UNIQUE,
                    merchant_id TEXT NOT NULL REFERENCES merchants (id),
                    environment TEXT NOT NULL,
                    out_trade_no TEXT NOT NULL,
                    status TEXT NOT NULL,
                    payment_id TEXT,
                    created_at BIGINT NOT NULL,
                    expires_at BIGINT NOT NULL,
                    body TEXT NOT NULL,
                    UNIQUE (merchant_id, environment, out_trade_no)
                );
                CREATE TABLE payments (
                    id TEXT PRIMARY KEY,
                    merchant_id TEXT NOT NULL REFERENCES merchants (id),
                    environment TEXT NOT NULL,
                    status TEXT NOT NULL,
                    amount BIGINT NOT NULL CHECK (amount > 0),
                    currency TEXT NOT NULL,
                    captured_amount BIGINT NOT NULL,
                    refunded_amount BIGINT NOT NULL CHECK (refunded_amount <= captured_amount),
                    order_number TEXT,
                    out_trade_no TEXT,
                    session_id TEXT REFERENCES order_sessions (id),
                    pending_operation INTEGER NOT NULL,
                    capture_at BIGINT,
                    created_at BIGINT NOT NULL,
                    updated_at BIGINT NOT NULL,
                    body TEXT NOT NULL
                );
                CREATE INDEX payments_listing ON payments (merchant_id, environment, created_at, id);
                CREATE INDEX payments_status ON payments (status, updated_at);
                CREATE INDEX payments_capture ON payments (capture_at) WHERE capture_at IS NOT NULL;
                CREATE TABLE payment_card_data (
                    payment_id TEXT PRIMARY KEY REFERENCES payments (id),
                    sealed BLOB NOT NULL
                );
                CREATE TABLE payment_transitions (
                    seq INTEGER PRIMARY KEY,
                    payment_id TEXT NOT NULL REFERENCES payments (id),
                    from_status TEXT,
                    to_status TEXT NOT NULL,
                    at BIGINT NOT NULL,
                    cause TEXT NOT NULL
                );
                CREATE INDEX payment_transitions_payment ON payment_transitions (payment_id, seq);
                CREATE TABLE refunds (
                    id TEXT PRIMARY KEY,
                    payment_id TEXT NOT NULL REFERENCES payments (id),
                    amount BIGINT NOT NULL CHECK (amount > 0),
                    currency TEXT NOT NULL,
                    status TEXT NOT NULL,
                    reason TEXT,
                    decline_code TEXT,
                    created_at BIGINT NOT NULL,
                    updated_at BIGINT NOT NULL
                );
                CREATE INDEX refunds_payment ON refunds (payment_id, created_at);
                CREATE INDEX refunds_pending ON refunds (status) WHERE status = 'pending';
                CREATE TABLE webhook_events (
                    id TEXT PRIMARY KEY,
                    merchant_id TEXT NOT NULL REFERENCES merchants (id),
                    object_id TEXT NOT NULL,
                    type TEXT NOT NULL,
                    payload BLOB NOT NULL,
                    created_at BIGINT NOT NULL,
                    delivery_url TEXT,
                    state TEXT NOT NULL,
                    attempts INTEGER NOT NULL,
                    next_attempt_at BIGINT
                );
                CREATE INDEX webhook_events_due ON webhook_events (state, next_attempt_at);
                CREATE INDEX webhook_events_merchant ON webhook_events (merchant_id, created_at);
                CREATE INDEX webhook_events_object ON webhook_events (object_id);
                CREATE TABLE webhook_attempts (
                    seq INTEGER PRIMARY KEY,
                    event_id TEXT NOT NULL REFERENCES webhook_events (id),
                    attempted_at BIGINT NOT NULL,
                    http_status INTEGER,
                    error TEXT,
                    state TEXT NOT NULL
                );
                CREATE INDEX webhook_attempts_event ON webhook_attempts (event_id, seq);
                CREATE TABLE idempotency_keys (
                    merchant_id TEXT NOT NULL REFERENCES merchants (id),
                    environment TEXT NOT NULL,
                    idempotency_key TEXT NOT NULL,
                    operation TEXT NOT NULL,
                    fingerprint TEXT NOT NULL,
                    recovery_point TEXT NOT NULL,
                    locked_at BIGINT,
                    response BLOB,
                    created_at BIGINT NOT NULL,
                    PRIMARY KEY (merchant_id, environment, idempotency_key)
                );
                CREATE TABLE sandbox_acquirer_authorizations (
                    reference TEXT PRIMARY KEY,
                    merchant_reference TEXT NOT NULL,
                    merchant_id TEXT NOT NULL,
                    amount BIGINT NOT NULL,
                    currency TEXT NOT NULL,
                    last_four TEXT NOT NULL,
                    status TEXT NOT NULL,
                    decline_code TEXT,
                    auth_code TEXT NOT NULL,
                    captured_amount BIGINT NOT NULL,
                    refunded_amount BIGINT NOT NULL,
                    voided INTEGER NOT NULL,
                    created_at BIGINT NOT NULL,
                    resolves_at BIGINT
                );
                CREATE INDEX sandbox_acquirer_by_merchant_reference
                    ON sandbox_acquirer_authorizations (merchant_reference, created_at);
                CREATE TABLE sandbox_acquirer_operations (
                    id TEXT PRIMARY KEY,
                    reference TEXT NOT NULL,
                    kind TEXT NOT NULL,
                    amount BIGINT NOT NULL,
                    succeeded INTEGER NOT NULL,
                    decline_code TEXT,
                    created_at BIGINT NOT NULL
                );
                CREATE INDEX sandbox_acquirer_operations_reference ON sandbox_acquirer_operations (reference);
                """),
        Migration(
            version: 2, name: "webhook_endpoint_enabled",
            sql: """
                ALTER TABLE merchants ADD COLUMN webhook_enabled INTEGER NOT NULL DEFAULT 1;
                """),
        // Idempotent HTTP answers move out of `settings` into a table with their creation time, so the
        // maintenance pass can purge them after the retention period (those moved count from now).
        Migration(
            version: 3, name: "stored_responses",
            sql: """
                CREATE TABLE stored_responses (
                    name TEXT PRIMARY KEY,
                    created_at BIGINT NOT NULL,
                    value BLOB NOT NULL
                );
                CREATE INDEX stored_responses_created ON stored_responses (created_at);
                INSERT INTO stored_responses (name, created_at, value)
                    SELECT name, CAST(strftime('%s', 'now') AS INTEGER) * 1000, value FROM settings
                    WHERE name LIKE 'response:%';
                DELETE FROM settings WHERE name LIKE 'response:%';
                """),
        // A prime's card information moves from a JSON text (decoded on every payment) into columns; rows
        // written before are converted in place from their JSON.
        Migration(
            version: 4, name: "prime_card_columns",
            sql: """
                ALTER TABLE primes ADD COLUMN card_bin_code TEXT NOT NULL DEFAULT '';
                ALTER TABLE primes ADD COLUMN card_last_four TEXT NOT NULL DEFAULT '';
                ALTER TABLE primes ADD COLUMN card_type INTEGER NOT NULL DEFAULT -1;
                ALTER TABLE primes ADD COLUMN card_funding INTEGER NOT NULL DEFAULT -1;
                ALTER TABLE primes ADD COLUMN card_network TEXT;
                ALTER TABLE primes ADD COLUMN card_issuer TEXT;
                ALTER TABLE primes ADD COLUMN card_bank_id TEXT;
                ALTER TABLE primes ADD COLUMN card_level TEXT;
                ALTER TABLE primes ADD COLUMN card_country TEXT;
                ALTER TABLE primes ADD COLUMN card_country_code TEXT;
                UPDATE primes SET
                    card_bin_code = COALESCE(json_extract(card_info, '$.binCode'), ''),
                    card_last_four = COALESCE(json_extract(card_info, '$.lastFour'), ''),
                    card_type = COALESCE(json_extract(card_info, '$.type'), -1),
                    card_funding = COALESCE(json_extract(card_info, '$.funding'), -1),
                    card_network = json_extract(card_info, '$.network'),
                    card_issuer = json_extract(card_info, '$.issuer'),
                    card_bank_id = json_extract(card_info, '$.bankID'),
                    card_level = json_extract(card_info, '$.level'),
                    card_country = json_extract(card_info, '$.country'),
                    card_country_code = json_extract(card_info, '$.countryCode');
                ALTER TABLE primes DROP COLUMN card_info;
                """),
        // TapPay's card_info carries the issuer's name in Traditional Chinese: a BIN table column, kept with a
        // prime's card information.
        Migration(
            version: 5, name: "issuer_zh_tw",
            sql: """
                ALTER TABLE bin_entries ADD COLUMN issuer_zh_tw TEXT;
                ALTER TABLE primes ADD COLUMN card_issuer_zh_tw TEXT;
                """),
        // Who changed what: each change to a merchant's configuration, keys or payments, written in the
        // transaction of the change (detail: a JSON object of non-secret strings).
        Migration(
            version: 6, name: "audit_log",
            sql: """
                CREATE TABLE audit_log (
                    id TEXT PRIMARY KEY,
                    merchant_id TEXT NOT NULL REFERENCES merchants (id),
                    actor_kind TEXT NOT NULL,
                    actor_name TEXT NOT NULL,
                    action TEXT NOT NULL,
                    target TEXT,
                    detail TEXT NOT NULL,
                    created_at BIGINT NOT NULL
                );
                CREATE INDEX audit_log_merchant ON audit_log (merchant_id, created_at, id);
                """),
        // A rotated secret key keeps working for its overlap: the merchant is found by its previous key id too.
        Migration(
            version: 7, name: "previous_secret_key",
            sql: """
                ALTER TABLE merchants ADD COLUMN previous_secret_key_id TEXT;
                CREATE UNIQUE INDEX merchants_previous_secret_key ON merchants (previous_secret_key_id);
                """),
        // Merchant console sign-ins: the cookie's token only as its hash, so any instance can serve them.
        Migration(
            version: 8, name: "console_sessions",
            sql: """
                CREATE TABLE console_sessions (
                    id TEXT PRIMARY KEY,
                    token_hash TEXT NOT NULL UNIQUE,
                    merchant_id TEXT NOT NULL REFERENCES merchants (id),
                    created_at BIGINT NOT NULL,
                    last_seen_at BIGINT NOT NULL,
                    ended_at BIGINT
                );
                CREATE INDEX console_sessions_last_seen ON console_sessions (last_seen_at);
                """),
        // How long each webhook delivery attempt took (the console's Webhooks page shows it).
        Migration(
            version: 9, name: "webhook_attempt_latency",
            sql: """
                ALTER TABLE webhook_attempts ADD COLUMN latency_ms INTEGER;
                """),
        // A payment's fields move from a JSON text (encoded and decoded on every step of a payment) into
        // columns; rows written before are converted in place from their JSON (times there are Unix
        // milliseconds, the capture mode an object keyed by its case), and the JSON column goes.
        Migration(
            version: 10, name: "payment_columns",
            sql: """
                ALTER TABLE payments ADD COLUMN details TEXT;
                ALTER TABLE payments ADD COLUMN cardholder INTEGER NOT NULL DEFAULT 0;
                ALTER TABLE payments ADD COLUMN cardholder_name TEXT;
                ALTER TABLE payments ADD COLUMN cardholder_email TEXT;
                ALTER TABLE payments ADD COLUMN cardholder_phone_number TEXT;
                ALTER TABLE payments ADD COLUMN cardholder_zip_code TEXT;
                ALTER TABLE payments ADD COLUMN cardholder_address TEXT;
                ALTER TABLE payments ADD COLUMN cardholder_national_id TEXT;
                ALTER TABLE payments ADD COLUMN metadata TEXT;
                ALTER TABLE payments ADD COLUMN card_bin_code TEXT NOT NULL DEFAULT '';
                ALTER TABLE payments ADD COLUMN card_last_four TEXT NOT NULL DEFAULT '';
                ALTER TABLE payments ADD COLUMN card_type INTEGER NOT NULL DEFAULT -1;
                ALTER TABLE payments ADD COLUMN card_funding INTEGER NOT NULL DEFAULT -1;
                ALTER TABLE payments ADD COLUMN card_network TEXT;
                ALTER TABLE payments ADD COLUMN card_issuer TEXT;
                ALTER TABLE payments ADD COLUMN card_bank_id TEXT;
                ALTER TABLE payments ADD COLUMN card_level TEXT;
                ALTER TABLE payments ADD COLUMN card_country TEXT;
                ALTER TABLE payments ADD COLUMN card_country_code TEXT;
                ALTER TABLE payments ADD COLUMN card_issuer_zh_tw TEXT;
                ALTER TABLE payments ADD COLUMN capture_mode TEXT NOT NULL DEFAULT 'now';
                ALTER TABLE payments ADD COLUMN capture_delay_days INTEGER;
                ALTER TABLE payments ADD COLUMN scheduled_capture_at BIGINT;
                ALTER TABLE payments ADD COLUMN auth_code TEXT;
                ALTER TABLE payments ADD COLUMN acquirer TEXT NOT NULL DEFAULT '';
                ALTER TABLE payments ADD COLUMN acquirer_reference TEXT;
                ALTER TABLE payments ADD COLUMN failure_code TEXT;
                ALTER TABLE payments ADD COLUMN authorized_at BIGINT;
                ALTER TABLE payments ADD COLUMN captured_at BIGINT;
                ALTER TABLE payments ADD COLUMN voided_at BIGINT;
                ALTER TABLE payments ADD COLUMN authorization_sent_at BIGINT;
                ALTER TABLE payments ADD COLUMN pending_kind TEXT;
                ALTER TABLE payments ADD COLUMN pending_operation_id TEXT;
                ALTER TABLE payments ADD COLUMN pending_amount BIGINT;
                UPDATE payments SET
                    details = json_extract(body, '$.details'),
                    cardholder = COALESCE(json_type(body, '$.cardholder') = 'object', 0),
                    cardholder_name = json_extract(body, '$.cardholder.name'),
                    cardholder_email = json_extract(body, '$.cardholder.email'),
                    cardholder_phone_number = json_extract(body, '$.cardholder.phoneNumber'),
                    cardholder_zip_code = json_extract(body, '$.cardholder.zipCode'),
                    cardholder_address = json_extract(body, '$.cardholder.address'),
                    cardholder_national_id = json_extract(body, '$.cardholder.nationalID'),
                    metadata = CASE WHEN json_extract(body, '$.metadata') IS NULL
                        OR json_extract(body, '$.metadata') = '{}' THEN NULL
                        ELSE json_extract(body, '$.metadata') END,
                    card_bin_code = COALESCE(json_extract(body, '$.cardInfo.binCode'), ''),
                    card_last_four = COALESCE(json_extract(body, '$.cardInfo.lastFour'), ''),
                    card_type = COALESCE(json_extract(body, '$.cardInfo.type'), -1),
                    card_funding = COALESCE(json_extract(body, '$.cardInfo.funding'), -1),
                    card_network = json_extract(body, '$.cardInfo.network'),
                    card_issuer = json_extract(body, '$.cardInfo.issuer'),
                    card_bank_id = json_extract(body, '$.cardInfo.bankID'),
                    card_level = json_extract(body, '$.cardInfo.level'),
                    card_country = json_extract(body, '$.cardInfo.country'),
                    card_country_code = json_extract(body, '$.cardInfo.countryCode'),
                    card_issuer_zh_tw = json_extract(body, '$.cardInfo.issuerZhTW'),
                    capture_mode = CASE
                        WHEN json_type(body, '$.captureMode.manual') IS NOT NULL THEN 'manual'
                        WHEN json_type(body, '$.captureMode.afterDays') IS NOT NULL THEN 'after_days'
                        ELSE 'now' END,
                    capture_delay_days = json_extract(body, '$.captureMode.afterDays._0'),
                    scheduled_capture_at = CAST(ROUND(json_extract(body, '$.captureAt')) AS INTEGER),
                    auth_code = json_extract(body, '$.authCode'),
                    acquirer = COALESCE(json_extract(body, '$.acquirer'), ''),
                    acquirer_reference = json_extract(body, '$.acquirerReference'),
                    failure_code = json_extract(body, '$.failureCode'),
                    authorized_at = CAST(ROUND(json_extract(body, '$.authorizedAt')) AS INTEGER),
                    captured_at = CAST(ROUND(json_extract(body, '$.capturedAt')) AS INTEGER),
                    voided_at = CAST(ROUND(json_extract(body, '$.voidedAt')) AS INTEGER),
                    authorization_sent_at = CAST(ROUND(json_extract(body, '$.authorizationSentAt')) AS INTEGER),
                    pending_kind = json_extract(body, '$.pendingOperation.kind'),
                    pending_operation_id = json_extract(body, '$.pendingOperation.operationID'),
                    pending_amount = json_extract(body, '$.pendingOperation.amount');
                ALTER TABLE payments DROP COLUMN body;
                """),
        // A console session is bound to the secret key that opened it (its key id): it ends when that key stops
        // working. Sessions opened before have none, so they end: their users sign in again. The index serves
        // ending all of a merchant's sessions at once.
        Migration(
            version: 11, name: "console_session_key",
            sql: """
                ALTER TABLE console_sessions ADD COLUMN secret_key_id TEXT NOT NULL DEFAULT '';
                CREATE INDEX console_sessions_merchant ON console_sessions (merchant_id, ended_at);
                """),
        // Who holds a claimed webhook event: the dispatcher renews its lease before each send and sends nothing
        // another instance has taken over since (next_attempt_at is the lease's end while it is held).
        Migration(
            version: 12, name: "webhook_lease_owner",
            sql: """
                ALTER TABLE webhook_events ADD COLUMN lease_owner TEXT;
                """),
        // The merchant's own reference for a charge (TapPay's bank_transaction_id): one payment per value and
        // merchant, which the unique index guarantees even to two requests at once.
        Migration(
            version: 13, name: "payment_bank_transaction_id",
            sql: """
                ALTER TABLE payments ADD COLUMN bank_transaction_id TEXT;
                CREATE UNIQUE INDEX payments_bank_transaction_id ON payments (merchant_id, bank_transaction_id)
                    WHERE bank_transaction_id IS NOT NULL;
                """),
        // Payments through a merchant's own processor: the processor's code of a decline, the version of the
        // processor settings a payment was authorized under (its capture, void and refunds go to the same), the
        // processor's reference of an accepted refund, and the lookup of a payment by its processor reference
        // (processor notifications name payments so).
        Migration(
            version: 14, name: "processor_payment_columns",
            sql: """
                ALTER TABLE payments ADD COLUMN processor_code TEXT;
                ALTER TABLE payments ADD COLUMN processor_settings_version INTEGER;
                ALTER TABLE refunds ADD COLUMN processor_reference TEXT;
                CREATE INDEX payments_processor_reference ON payments (merchant_id, acquirer, acquirer_reference)
                    WHERE acquirer_reference IS NOT NULL;
                """),
        // A merchant's processor settings, one row per version (a change adds a version; a payment records the one
        // it was authorized under): the type, the environment, the fields that are not secret (a JSON object of
        // strings) and the secrets sealed with the master key.
        Migration(
            version: 15, name: "processor_settings",
            sql: """
                CREATE TABLE processor_settings (
                    merchant_id TEXT NOT NULL REFERENCES merchants (id),
                    version INTEGER NOT NULL CHECK (version > 0),
                    type TEXT NOT NULL,
                    environment TEXT,
                    fields TEXT NOT NULL,
                    secrets BLOB,
                    created_at BIGINT NOT NULL,
                    PRIMARY KEY (merchant_id, version)
                );
                """),
        // Every item of a processor's notifications, once per event key (a duplicate is refused by the key, in
        // the transaction that applies the item), with what the gateway made of it.
        Migration(
            version: 16, name: "processor_notifications",
            sql: """
                CREATE TABLE processor_notifications (
                    id TEXT PRIMARY KEY,
                    merchant_id TEXT NOT NULL REFERENCES merchants (id),
                    processor TEXT NOT NULL,
                    event_key TEXT NOT NULL,
                    event_code TEXT NOT NULL,
                    success INTEGER NOT NULL,
                    payment_id TEXT,
                    amount BIGINT,
                    currency TEXT,
                    outcome TEXT NOT NULL,
                    received_at BIGINT NOT NULL,
                    UNIQUE (merchant_id, processor, event_key)
                );
                CREATE INDEX processor_notifications_merchant ON processor_notifications (merchant_id, received_at, id);
                """),
        // TapPay's numeric app id of a merchant (PUT /v1/compat/tappay), which a client call may send as its app
        // id: one merchant per value, which the unique index guarantees even to two requests at once. Merchants
        // written before have none.
        Migration(
            version: 17, name: "merchant_tappay_app_id",
            sql: """
                ALTER TABLE merchants ADD COLUMN tappay_app_id INTEGER;
                CREATE UNIQUE INDEX merchants_tappay_app_id ON merchants (tappay_app_id)
                    WHERE tappay_app_id IS NOT NULL;
                """),
    ]
}

/// Runs a SQL script on a database file outside any store (upgrade tests build old-schema databases with it).
package enum SQLiteScript {
    /// Executes `sql` (several statements allowed) on the database at `path`, creating the file when needed.
    package static func run(_ sql: String, databasePath path: String) throws {
        try SQLiteConnection(path: path).execute(sql)
    }
}
