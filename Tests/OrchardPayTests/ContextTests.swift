import Foundation
import OrchardPay
import Testing

/// The session flow (`ApplePayContext`) through `SimulatedPaymentSheet` against a real gateway on loopback.
@Suite("ApplePayContext: the session flow")
struct ContextTests {
    /// Creates a session on the merchant's server and the payment request the app builds from it.
    func session(
        _ gateway: LiveGateway, amount: String, total: String? = nil
    ) async throws -> (
        orderToken: String, request: PaymentRequest
    ) {
        let created = try await gateway.createSession(
            amount: amount, outTradeNo: "trade-\(UUID().uuidString.prefix(8))")
        try #require(created.status == 200, "\(created.json)")
        let orderToken = try #require(created.json["order_token"] as? String)
        var request = ApplePayContext.paymentRequest(
            merchantIdentifier: try #require(created.json["merchant_identifier"] as? String),
            country: try #require(created.json["country"] as? String),
            currency: try #require(created.json["currency"] as? String))
        request.total = SummaryItem(label: "Orchard Tea", amount: try Money(total ?? amount, currency: .twd))
        return (orderToken, request)
    }

    func present(
        _ gateway: LiveGateway, _ request: PaymentRequest, orderToken: String, steps: [SimulatedPaymentSheet.Step],
        card: SandboxCard = .visaCredit, sdk: GatewayClient
    ) async -> (ContextRecorder, ApplePayContext, SimulatedPaymentSheet) {
        let recorder = ContextRecorder(orderToken: orderToken)
        let sheet = SimulatedPaymentSheet(steps: steps, card: card, wallet: client(gateway))
        let context = ApplePayContext(paymentRequest: request, delegate: recorder, sheet: sheet, gateway: sdk)
        await context.present()
        if !sheet.events.isEmpty { await sheet.waitUntilDone() }
        return (recorder, context, sheet)
    }

    @Test("the delegate's order token is paid with Idempotency-Key = the token's transactionIdentifier")
    func sessionPaid() async throws {
        let gateway = try LiveGateway()
        let (orderToken, request) = try await session(gateway, amount: "250.00")
        let transport = RecordingTransport()
        let (recorder, context, sheet) = await present(
            gateway, request, orderToken: orderToken, steps: [.authorize], sdk: client(gateway, transport: transport))
        #expect(recorder.outcomes.current.map(\.0) == [.success])
        #expect(recorder.outcomes.current.first?.1 == nil)
        #expect(recorder.methods.current.first?.network == .visa)
        let paid = try #require(context.sessionPayment)
        #expect(paid.status == "captured")
        #expect(paid.amount == dec("250.00"))
        #expect(paid.orderToken == orderToken)
        #expect(paid.cardInfo.bincode == "476112")
        let pays = transport.requests(endingIn: "/pay")
        #expect(pays.count == 1)
        let transaction = try #require(
            sheet.events.compactMap { event -> String? in
                if case .authorized(_, let identifier) = event { return identifier }
                return nil
            }.first)
        #expect(pays.first?.value(forHTTPHeaderField: "Idempotency-Key") == transaction)
        let read = try await gateway.client("GET", "/v1/sessions/\(orderToken)")
        #expect(read.json["status"] as? String == "completed")
        #expect(read.json["payment_id"] as? String == paid.paymentID)
    }

    @Test("the app builds the payment request from the order token alone (GET /v1/sessions/{order_token})")
    func requestFromOrderToken() async throws {
        let gateway = try LiveGateway()
        let created = try await gateway.createSession(amount: "75.50", outTradeNo: "trade-read")
        let orderToken = try #require(created.json["order_token"] as? String)
        let session = try await client(gateway).session(orderToken: orderToken)
        #expect(session.amount == (try Money("75.50", currency: .twd)))
        #expect(session.status == "open")
        #expect(session.outTradeNo == "trade-read")
        let request = ApplePayContext.paymentRequest(session: session)
        #expect(request.merchantIdentifier == gateway.merchantIdentifier)
        #expect(request.total.label == session.merchantName)
        #expect(!request.total.label.isEmpty)
        #expect(request.supportedNetworks.contains(.visa))
        let (recorder, context, _) = await present(
            gateway, request, orderToken: orderToken, steps: [.authorize], sdk: client(gateway))
        #expect(recorder.outcomes.current.map(\.0) == [.success])
        #expect(context.sessionPayment?.amount == dec("75.50"))
        let error = await #expect(throws: CheckoutError.self) {
            try await client(gateway).session(orderToken: "ot_doesNotExist")
        }
        #expect(error?.code == "session_not_found")
        #expect(error?.httpStatus == 404)
    }

    @Test("a retry after a lost answer is answered from the idempotency store: one charge")
    func lostAnswerChargesOnce() async throws {
        let gateway = try LiveGateway()
        let (orderToken, request) = try await session(gateway, amount: "180.00")
        let transport = RecordingTransport(dropFirstAnswer: { $0.hasSuffix("/pay") })
        let (recorder, context, _) = await present(
            gateway, request, orderToken: orderToken, steps: [.authorize], sdk: client(gateway, transport: transport))
        #expect(recorder.outcomes.current.map(\.0) == [.success])
        let pays = transport.requests(endingIn: "/pay")
        #expect(pays.count == 2)
        let keys = Set(pays.compactMap { $0.value(forHTTPHeaderField: "Idempotency-Key") })
        #expect(keys.count == 1)
        #expect(transport.replayed(endingIn: "/pay") == [false, true])
        #expect(context.sessionPayment?.wasReplayed == true)
        let session = try await gateway.client("GET", "/v1/sessions/\(orderToken)")
        let outTradeNo = try #require(session.json["out_trade_no"] as? String)
        let listed = try await gateway.merchantServer("GET", "/v1/payments?out_trade_no=\(outTradeNo)")
        let payments = try #require(listed.json["data"] as? [[String: Any]])
        #expect(payments.count == 1)
        #expect(payments.first?["captured_amount"] as? String == "180.00")
    }

    @Test(
        "gateway refusals complete with .error and the gateway's code",
        arguments: [
            ("card_declined", "300.00", "300.00", SandboxCard.declined),
            ("amount_mismatch", "300.00", "299.00", SandboxCard.visaCredit),
        ])
    func gatewayRefusals(code: String, sessionAmount: String, shownAmount: String, card: SandboxCard) async throws {
        let gateway = try LiveGateway()
        let (orderToken, request) = try await session(gateway, amount: sessionAmount, total: shownAmount)
        let (recorder, _, sheet) = await present(
            gateway, request, orderToken: orderToken, steps: [.authorize], card: card, sdk: client(gateway))
        let outcome = try #require(recorder.outcomes.current.first)
        #expect(recorder.outcomes.current.count == 1)
        #expect(outcome.0 == .error)
        #expect(outcome.1?.code == code)
        #expect(outcome.1?.httpStatus != nil)
        #expect(authorizationResults(sheet).map(\.status) == [.failure])
        // The session stays payable after a refused attempt.
        let read = try await gateway.client("GET", "/v1/sessions/\(orderToken)")
        #expect(read.json["status"] as? String == "open")
    }

    @Test("closing the sheet before authorizing completes with .userCancellation and no error")
    func userCancellation() async throws {
        let gateway = try LiveGateway()
        let (orderToken, request) = try await session(gateway, amount: "120.00")
        let (recorder, _, _) = await present(
            gateway, request, orderToken: orderToken, steps: [.selectPaymentMethod(.credit), .cancel],
            sdk: client(gateway))
        #expect(recorder.outcomes.current.map(\.0) == [.userCancellation])
        #expect(recorder.outcomes.current.first?.1 == nil)
        #expect(recorder.methods.current.isEmpty)
    }

    @Test("closing the sheet while the session is being paid reports the payment's outcome")
    func cancelWhilePaying() async throws {
        let gateway = try LiveGateway()
        let (orderToken, request) = try await session(gateway, amount: "130.00")
        let (recorder, context, sheet) = await present(
            gateway, request, orderToken: orderToken, steps: [.authorize, .cancelWhilePending], sdk: client(gateway))
        #expect(recorder.outcomes.current.map(\.0) == [.success])
        #expect(context.sessionPayment?.status == "captured")
        let finished = try #require(sheet.events.firstIndex(of: .finished))
        let result = try #require(sheet.events.firstIndex(of: .authorizationResult(.init(status: .success))))
        #expect(finished < result)
    }

    @Test("the network being down completes with .error network_error and a clear message")
    func networkDown() async throws {
        let gateway = try LiveGateway()
        let (orderToken, request) = try await session(gateway, amount: "140.00")
        let sdk = GatewayClient(configuration: configuration(gateway, url: URL(string: "http://127.0.0.1:1")!))
        let (recorder, _, _) = await present(gateway, request, orderToken: orderToken, steps: [.authorize], sdk: sdk)
        let outcome = try #require(recorder.outcomes.current.first)
        #expect(outcome.0 == .error)
        #expect(outcome.1?.code == "network_error")
        #expect(outcome.1?.message.contains("could not be reached") == true)
    }

    @Test("a request with an unknown currency completes with .error before any sheet")
    func invalidRequest() async throws {
        let gateway = try LiveGateway()
        let request = ApplePayContext.paymentRequest(
            merchantIdentifier: gateway.merchantIdentifier, country: "TW", currency: "XYZ")
        #expect(request.currency == nil)
        let (recorder, _, sheet) = await present(
            gateway, request, orderToken: "ot_x", steps: [.authorize], sdk: client(gateway))
        #expect(recorder.outcomes.current.map(\.0) == [.error])
        #expect(recorder.outcomes.current.first?.1?.code == "unknown_currency")
        #expect(sheet.events.isEmpty)
    }
}

/// Coupon codes and shipping contacts in the session flow.
@Suite("ApplePayContext: coupon codes and shipping contacts")
struct ContextHookTests {
    @Test("a coupon changes the summary; the session created for the discounted total is paid")
    func couponInSessionFlow() async throws {
        let gateway = try LiveGateway()
        let created = try await gateway.createSession(amount: "225.00", outTradeNo: "coupon-1")
        let orderToken = try #require(created.json["order_token"] as? String)
        let twd: @Sendable (String) -> Money = { try! Money($0, currency: .twd) }
        var request = ApplePayContext.paymentRequest(
            merchantIdentifier: gateway.merchantIdentifier, country: "TW", currency: "TWD")
        request.lineItems = [SummaryItem(label: "Tea", amount: twd("250.00"))]
        request.total = SummaryItem(label: "Orchard Tea", amount: twd("250.00"))
        request.supportsCouponCode = true
        let recorder = ContextRecorder(orderToken: orderToken)
        recorder.summaryForCoupon = { code, shown in
            guard code == "TEA10" else {
                var update = PaymentRequestUpdate.unchanged(shown)
                update.status = .failure
                update.errors = [PaymentSheetError(.couponCodeInvalid, message: "Unknown code")]
                return update
            }
            return PaymentRequestUpdate(
                lineItems: shown.lineItems + [SummaryItem(label: "Coupon TEA10", amount: twd("-25.00"))],
                total: SummaryItem(label: shown.total.label, amount: twd("225.00")))
        }
        let sheet = SimulatedPaymentSheet(
            steps: [.enterCouponCode("NOPE"), .enterCouponCode("TEA10"), .authorize], wallet: client(gateway))
        let context = ApplePayContext(paymentRequest: request, delegate: recorder, sheet: sheet, gateway: client(gateway))
        await context.present()
        await sheet.waitUntilDone()
        #expect(shownTotals(sheet) == ["250.00", "250.00", "225.00"])
        #expect(authorizedAmounts(sheet) == ["225.00"])
        #expect(recorder.shownTotalAtAuthorization.current == "225.00")
        #expect(context.shownPaymentRequest.couponCode == "TEA10")
        #expect(context.shownPaymentRequest.lineItems.map(\.label) == ["Tea", "Coupon TEA10"])
        #expect(recorder.outcomes.current.map(\.0) == [.success])
        #expect(context.sessionPayment?.amount == dec("225.00"))
    }

    @Test("a shipping contact the merchant cannot serve: the sheet gets the error; a summary the rules refuse is ignored")
    func contactInSessionFlow() async throws {
        let gateway = try LiveGateway()
        let created = try await gateway.createSession(amount: "80.00", outTradeNo: "contact-1")
        let orderToken = try #require(created.json["order_token"] as? String)
        var request = ApplePayContext.paymentRequest(
            merchantIdentifier: gateway.merchantIdentifier, country: "TW", currency: "TWD")
        request.total = SummaryItem(label: "Orchard Tea", amount: try Money("80.00", currency: .twd))
        let recorder = ContextRecorder(orderToken: orderToken)
        recorder.summaryForContact = { contact, shown in
            var update = PaymentRequestUpdate.unchanged(shown)
            if contact.countryCode == "KP" {
                update.status = .failure
                update.errors = [PaymentSheetError(.shippingAddressUnserviceable, message: "No delivery there")]
            } else if contact.countryCode == "JP" {
                // A total that is not the sum of its items: refused by the rules, the sheet keeps its summary.
                update.lineItems = [SummaryItem(label: "Tea", amount: try! Money("1.00", currency: .twd))]
            }
            return update
        }
        var north = Contact()
        north.countryCode = "KP"
        var japan = Contact()
        japan.countryCode = "JP"
        let sheet = SimulatedPaymentSheet(
            steps: [.selectShippingContact(north), .selectShippingContact(japan), .authorize], wallet: client(gateway))
        let context = ApplePayContext(paymentRequest: request, delegate: recorder, sheet: sheet, gateway: client(gateway))
        await context.present()
        await sheet.waitUntilDone()
        let updates = sheet.events.compactMap { event -> PaymentRequestUpdate? in
            if case .updated(let update, _) = event { return update }
            return nil
        }
        #expect(updates.first?.errors.map(\.code) == [.shippingAddressUnserviceable])
        #expect(updates.last?.lineItems == [])
        #expect(context.shownPaymentRequest.lineItems == [])
        #expect(recorder.outcomes.current.map(\.0) == [.success])
    }
}

/// `abort()` in the session flow.
@Suite("ApplePayContext: abort")
struct ContextAbortTests {
    func request(_ gateway: LiveGateway, amount: String) throws -> PaymentRequest {
        var request = ApplePayContext.paymentRequest(
            merchantIdentifier: gateway.merchantIdentifier, country: "TW", currency: "TWD")
        request.total = SummaryItem(label: "Orchard Tea", amount: try Money(amount, currency: .twd))
        return request
    }

    @Test("before the customer authorizes: .error with aborted, not .userCancellation")
    func abortBeforeAuthorizing() async throws {
        let gateway = try LiveGateway()
        let recorder = ContextRecorder(orderToken: "ot_unused")
        let sheet = SimulatedPaymentSheet(steps: [.idle], wallet: client(gateway))
        let context = ApplePayContext(
            paymentRequest: try request(gateway, amount: "80.00"), delegate: recorder, sheet: sheet, gateway: client(gateway))
        let presenting = Task { await context.present() }
        while sheet.events.isEmpty { try await Task.sleep(nanoseconds: 5_000_000) }
        context.abort()
        await presenting.value
        #expect(recorder.outcomes.current.map(\.0) == [.error])
        #expect(recorder.outcomes.current.first?.1?.code == CheckoutError.aborted)
        #expect(sheet.events.suffix(2) == [.dismissed, .finished])
    }

    @Test("while the session is being paid: the sheet closes and the payment's real outcome is reported")
    func abortWhilePaying() async throws {
        let gateway = try LiveGateway()
        let created = try await gateway.createSession(amount: "120.00", outTradeNo: "abort-1")
        let orderToken = try #require(created.json["order_token"] as? String)
        let recorder = ContextRecorder(orderToken: orderToken)
        let transport = GatedTransport(holding: "/pay")
        let sheet = SimulatedPaymentSheet(steps: [.authorize], wallet: client(gateway))
        let context = ApplePayContext(
            paymentRequest: try request(gateway, amount: "120.00"), delegate: recorder, sheet: sheet,
            gateway: GatewayClient(configuration: configuration(gateway), transport: transport))
        let presenting = Task { await context.present() }
        await transport.reached.wait()
        context.abort()
        while !sheet.events.contains(.finished) { try await Task.sleep(nanoseconds: 5_000_000) }
        #expect(recorder.outcomes.current.isEmpty)
        transport.release.fire()
        await presenting.value
        await sheet.waitUntilDone()
        #expect(recorder.outcomes.current.map(\.0) == [.success])
        #expect(context.sessionPayment?.status == "captured")
    }
}
