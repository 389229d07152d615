import Foundation
import Gateway
import GatewayCurl
import OrchardTestSupport
import Synchronization
import Testing

/// The outbox's leases with a slow receiver: a claim never outlives a batch unnoticed, an event is sent only by
/// the instance whose lease it is, and every attempt carries its true number.
@Suite("Webhooks: leases under a slow receiver", .serialized)
struct WebhookLeaseTests {
    /// How long the receiver takes per request, on the injected clock: four requests outlast a lease.
    static let receiverSeconds: TimeInterval = WebhookLease.defaultSeconds / 4

    /// `payments` payments (two events each) for a merchant whose endpoint is `receiver`.
    static func events(_ h: Harness, receiver: LoopbackHTTPReceiver, payments: Int) throws -> Int {
        _ = try h.gateway.merchants.setWebhookEndpoint(merchantID: h.merchant.id, url: receiver.url())
        for _ in 0..<payments { _ = try h.pay() }
        return try h.store.read { try $0.pendingWebhookCount() }
    }

    /// The requests received for each event, in order, as their `Orchard-Delivery-Attempt` numbers.
    static func attemptsByEvent(_ receiver: LoopbackHTTPReceiver) -> [String: [Int]] {
        var byEvent: [String: [Int]] = [:]
        for request in receiver.requests {
            guard let id = request.header("Orchard-Event-Id") else { continue }
            byEvent[id, default: []].append(Int(request.header("Orchard-Delivery-Attempt") ?? "") ?? 0)
        }
        return byEvent
    }

    @Test(
        "two instances, a receiver slower than a lease per batch: every event delivered once, as attempt 1",
        .enabled(if: TestPostgres.serverURL != nil, "ORCHARD_TEST_POSTGRES_URL is not set"),
        .timeLimit(.minutes(3)))
    func twoInstancesSlowReceiver() throws {
        let h = try Harness(.postgres)
        let receiver = try LoopbackHTTPReceiver()
        defer { receiver.stop() }
        let clock = h.clock
        receiver.beforeAnswering {
            clock.advance(by: Self.receiverSeconds)
            usleep(2_000)
        }
        let total = try Self.events(h, receiver: receiver, payments: 20)
        #expect(total == 40)
        let stores: [any Store] = [h.store, try h.reopenedStore()]
        let dispatchers = stores.map {
            WebhookDispatcher(
                outbox: StoreWebhookOutbox(store: $0, cipher: h.cipher), sender: CurlWebhookSender(), clock: clock)
        }
        let summaries = Mutex([WebhookDispatchSummary]())
        let failures = Mutex([String]())
        let group = DispatchGroup()
        for dispatcher in dispatchers {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                var summary = WebhookDispatchSummary()
                for _ in 0..<20_000 {
                    do {
                        let pass = try dispatcher.runOnce()
                        summary.attempted += pass.attempted
                        summary.skipped += pass.skipped
                        if pass.attempted == 0 {
                            if try h.store.read({ try $0.pendingWebhookCount() }) == 0 { break }
                            usleep(1_000)
                        }
                    } catch {
                        failures.withLock { $0.append("\(error)") }
                        break
                    }
                }
                summaries.withLock { $0.append(summary) }
            }
        }
        group.wait()
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 })")
        let byEvent = Self.attemptsByEvent(receiver)
        let doubled = byEvent.filter { $0.value.count > 1 }
        #expect(byEvent.count == total, "\(byEvent.count) of \(total) events delivered")
        #expect(doubled.isEmpty, "\(doubled.count) of \(total) events delivered more than once: \(doubled.prefix(3))")
        #expect(byEvent.values.allSatisfy { $0 == [1] })
        #expect(try h.store.read { try $0.pendingWebhookCount() } == 0)
        for id in byEvent.keys {
            #expect(try h.store.read { try $0.webhookState(eventID: id) }.map { [$0.state.rawValue, "\($0.attempts)"] }
                == ["delivered", "1"])
        }
        let passes = summaries.withLock { $0 }
        print(
            "webhook leases: \(total) events, \(receiver.requests.count) requests, attempted per instance "
                + "\(passes.map(\.attempted)), taken over and not sent \(passes.map(\.skipped).reduce(0, +))")
    }

    @Test(
        "an instance dies after sending and before recording: the next instance sends it as attempt 2",
        arguments: StoreBackend.all)
    func takeoverNumbersTheAttempt(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        let receiver = try LoopbackHTTPReceiver()
        defer { receiver.stop() }
        #expect(try Self.events(h, receiver: receiver, payments: 1) == 2)
        let dying = StoreWebhookOutbox(store: h.store, cipher: h.cipher)
        let claimed = try dying.dueWebhooks(now: h.clock.now(), limit: 1)
        let event = try #require(claimed.first).event
        // Counted, (maybe) sent, never recorded: the instance is gone.
        #expect(try dying.beginWebhookAttempt(eventID: event.id, now: h.clock.now()) == 1)

        let survivor = WebhookDispatcher(
            outbox: StoreWebhookOutbox(store: try h.reopenedStore(), cipher: h.cipher), sender: CurlWebhookSender(),
            clock: h.clock)
        // Within the lease only the other event is due.
        #expect(try survivor.runOnce().delivered == 1)
        #expect(Self.attemptsByEvent(receiver)[event.id] == nil)
        h.clock.advance(by: WebhookLease.defaultSeconds + 1)
        #expect(try survivor.runOnce().delivered == 1)
        #expect(Self.attemptsByEvent(receiver)[event.id] == [2])
        #expect(try h.store.read { try $0.webhookState(eventID: event.id) }?.attempts == 2)
        // The dead instance's lease is gone: it may not send the event now, nor move its state.
        #expect(try dying.beginWebhookAttempt(eventID: event.id, now: h.clock.now()) == nil)
        try dying.recordWebhookAttempt(
            WebhookAttempt(
                eventID: event.id, attemptedAt: h.clock.now(), httpStatus: 500, error: nil, state: .pending,
                nextAttemptAt: h.clock.now()))
        #expect(try h.store.read { try $0.webhookState(eventID: event.id) }?.state == .delivered)
    }

    @Test("a claimed event taken over after its lease ended is not sent by the first holder", arguments: StoreBackend.all)
    func staleClaimIsNotSent(_ backend: StoreBackend) throws {
        let h = try Harness(backend)
        let receiver = try LoopbackHTTPReceiver()
        defer { receiver.stop() }
        _ = try Self.events(h, receiver: receiver, payments: 1)
        let slowOutbox = StoreWebhookOutbox(store: h.store, cipher: h.cipher)
        let slow = WebhookDispatcher(outbox: slowOutbox, sender: CurlWebhookSender(), clock: h.clock)
        let stale = try slowOutbox.dueWebhooks(now: h.clock.now(), limit: 10)
        #expect(stale.count == 2)
        h.clock.advance(by: WebhookLease.defaultSeconds)
        let other = WebhookDispatcher(
            outbox: StoreWebhookOutbox(store: try h.reopenedStore(), cipher: h.cipher), sender: CurlWebhookSender(),
            clock: h.clock)
        #expect(try other.runOnce().delivered == 2)
        // The first holder comes back to its stale claim: nothing is sent again.
        for due in stale { #expect(try slow.deliver(due, at: h.clock.now()) == nil) }
        #expect(receiver.requests.count == 2)
        #expect(Self.attemptsByEvent(receiver).values.allSatisfy { $0 == [1] })
    }
}
