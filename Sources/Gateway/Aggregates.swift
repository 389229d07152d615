import Foundation

/// One aggregate's operations: a view of a ``GatewayService`` that holds the public operations on one kind of
/// record, over the machinery the gateway shares between them (the store, the processors, idempotency, the
/// payment lifecycle and the webhook outbox). Get one from the gateway: ``GatewayService/payments``,
/// ``GatewayService/refunds``, ``GatewayService/sessions``, ``GatewayService/webhooks`` and
/// ``GatewayService/keys``; the merchants are ``GatewayService/merchants``.
protocol GatewayAggregate: Sendable {
    var gateway: GatewayService { get }
}

extension GatewayAggregate {
    var configuration: GatewayConfiguration { gateway.configuration }
    var clock: any GatewayClock { gateway.clock }
    var cipher: EnvelopeCipher { gateway.cipher }
    var merchants: MerchantRegistry { gateway.merchants }
    var store: any Store { gateway.store }

    func read<T>(_ body: (any StoreTransaction) throws -> T) throws(GatewayError) -> T { try gateway.read(body) }
    func write<T>(_ body: (any StoreTransaction) throws -> T) throws(GatewayError) -> T { try gateway.write(body) }

    func idempotent<T: Codable>(
        _ merchant: Merchant, key: String?, operation: String, fingerprint: [String], claimInFirstWrite: Bool = false,
        requestScope: RequestScope, _ body: (IdempotencyScope) throws(GatewayError) -> T
    ) throws(GatewayError) -> T {
        try gateway.idempotent(
            merchant, key: key, operation: operation, fingerprint: fingerprint, claimInFirstWrite: claimInFirstWrite,
            requestScope: requestScope, body)
    }
}

/// Primes and payments: tokenize, pay by prime, capture, void, the payments' queries and reconciliation.
public struct Payments: GatewayAggregate {
    let gateway: GatewayService
}

/// Refunds of captured payments.
public struct Refunds: GatewayAggregate {
    let gateway: GatewayService
}

/// Order sessions: made by the merchant's server, paid by its client with an Apple Pay token.
public struct OrderSessions: GatewayAggregate {
    let gateway: GatewayService
}

/// The webhook events about a merchant's records, their deliveries and redelivery.
public struct Webhooks: GatewayAggregate {
    let gateway: GatewayService
}

/// A merchant's keys: processing keys and the Merchant Identity, their CSRs, certificates and retirement.
public struct MerchantKeys: GatewayAggregate {
    let gateway: GatewayService
}

extension GatewayService {
    /// Primes and payments.
    public var payments: Payments { Payments(gateway: self) }
    /// Refunds.
    public var refunds: Refunds { Refunds(gateway: self) }
    /// Order sessions.
    public var sessions: OrderSessions { OrderSessions(gateway: self) }
    /// Webhook events and their deliveries.
    public var webhooks: Webhooks { Webhooks(gateway: self) }
    /// The merchants' keys.
    public var keys: MerchantKeys { MerchantKeys(gateway: self) }
}
