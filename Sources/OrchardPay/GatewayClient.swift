import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Sends one HTTP request and returns the answer: URLSession in apps, a wrapper in tests.
public protocol HTTPTransport: Sendable {
    /// Sends `request`; throws when no answer arrived (no network, refused, timed out, connection lost).
    func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse)
}

/// ``HTTPTransport`` over `URLSession`.
public struct URLSessionTransport: HTTPTransport {
    /// The session used.
    public let session: URLSession

    /// A transport over `session` (default: an ephemeral session, no cookies, no cache).
    public init(session: URLSession = URLSession(configuration: .ephemeral)) { self.session = session }

    /// Sends the request with a data task.
    public func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        try await withCheckedThrowingContinuation { continuation in
            let task = session.dataTask(with: request) { data, response, error in
                if let error {
                    continuation.resume(throwing: error)
                } else if let response = response as? HTTPURLResponse {
                    continuation.resume(returning: (data ?? Data(), response))
                } else {
                    continuation.resume(throwing: URLError(.badServerResponse))
                }
            }
            task.resume()
        }
    }
}

/// What `POST /v1/tokens` answered: the one-time prime and what the gateway read from the token.
public struct PrimeResult: Hashable, Sendable {
    /// The prime (`prm_…`); the merchant's server pays it with `POST /v1/payments`.
    public var prime: String
    /// When the prime expires, Unix time in milliseconds (90 s after tokenization; 30 days when deferred).
    public var expiryMillis: Int64
    /// The card.
    public var cardInfo: CardInfo
    /// The co-brand codes.
    public var merchantReferenceInfo: MerchantReferenceInfo
    /// The amount inside the token.
    public var totalAmount: Decimal
    /// The currency inside the token.
    public var currency: String
}

/// What `POST /v1/sessions/{order_token}/pay` answered.
public struct SessionPayment: Hashable, Sendable {
    /// The payment (`pay_…`).
    public var paymentID: String
    /// The payment's status (`captured`, or `unknown` while the processor's answer is not known).
    public var status: String
    /// The order token paid.
    public var orderToken: String
    /// The merchant's order number of the session.
    public var outTradeNo: String
    /// The amount charged.
    public var amount: Decimal
    /// The currency.
    public var currency: String
    /// The card.
    public var cardInfo: CardInfo
    /// Whether the gateway answered from its idempotency store (a retry of a request already done).
    public var wasReplayed: Bool
}

/// An order session as the app reads it (`GET /v1/sessions/{order_token}`).
public struct OrderSession: Hashable, Sendable {
    /// The order token (`ot_…`).
    public var orderToken: String
    /// The merchant's order number.
    public var outTradeNo: String
    /// The amount the session charges.
    public var amount: Money
    /// The merchant's country (ISO 3166-1 alpha-2).
    public var country: String
    /// The Apple merchant identifier for the payment request.
    public var merchantIdentifier: String
    /// The merchant's name: the total's label.
    public var merchantName: String
    /// The networks for `supportedNetworks`.
    public var supportedNetworks: [PaymentNetwork]
    /// The capabilities for `merchantCapabilities`.
    public var merchantCapabilities: [MerchantCapability]
    /// `open`, `processing`, `completed` or `expired` (or a later value).
    public var status: String
    /// When the session expires (RFC 3339).
    public var expiresAt: String
}

/// The gateway's client routes, as an app calls them with its app id and app key: tokenize (prime flow), pay
/// an order session (session flow), and the sandbox wallet.
///
/// Every POST carries an `Idempotency-Key`; a request whose answer was lost (a transport error, or
/// `409 idempotency_in_flight`) is sent again with the same key up to
/// ``OrchardPaySDK/Configuration/retryLimit`` times, so the gateway does the work once and answers the retry
/// from its store.
public final class GatewayClient: Sendable {
    /// The set-up used.
    public let configuration: OrchardPaySDK.Configuration
    /// How requests are sent.
    public let transport: any HTTPTransport

    /// A client for `configuration` over `transport`.
    public init(configuration: OrchardPaySDK.Configuration, transport: any HTTPTransport = URLSessionTransport()) {
        self.configuration = configuration
        self.transport = transport
    }

    /// `POST /v1/tokens`: turns the token into a prime. `paymentRequest` is the payment request the sheet
    /// showed (its JSON), which makes the prime deferred (30 days) and binds the amount. The idempotency key
    /// is the token's transaction identifier.
    public func createPrime(token: PaymentToken, paymentRequest: Data?) async throws(CheckoutError) -> PrimeResult {
        var body: [String: Any] = ["token": try tokenObject(token)]
        if let paymentRequest { body["payment_request"] = try jsonObject(paymentRequest, what: "payment request") }
        let answer = try await post("/v1/tokens", body: body, idempotencyKey: token.transactionIdentifier)
        let json = answer.json
        guard let prime = json["prime"] as? String, let expiry = (json["prime_expiry_millis"] as? NSNumber)?.int64Value,
            let card = json["card_info"] as? [String: Any], let total = json["total_amount"] as? String,
            let amount = Decimal(string: total, locale: Locale(identifier: "en_US_POSIX")),
            let currency = json["currency"] as? String
        else { throw Self.unreadable("/v1/tokens") }
        let reference = json["merchant_reference_info"] as? [String: Any]
        return PrimeResult(
            prime: prime, expiryMillis: expiry, cardInfo: try Self.cardInfo(card),
            merchantReferenceInfo: MerchantReferenceInfo(
                affiliateCodes: reference?["affiliate_codes"] as? [String] ?? []),
            totalAmount: amount, currency: currency)
    }

    /// `POST /v1/sessions/{order_token}/pay` with `Idempotency-Key` = the token's transaction identifier.
    public func paySession(orderToken: String, token: PaymentToken) async throws(CheckoutError) -> SessionPayment {
        try Self.checkOrderToken(orderToken)
        let path = "/v1/sessions/\(orderToken)/pay"
        let answer = try await post(
            path, body: ["token": try tokenObject(token)], idempotencyKey: token.transactionIdentifier)
        let json = answer.json
        guard let id = json["payment_id"] as? String, let status = json["status"] as? String,
            let amountText = json["amount"] as? String,
            let amount = Decimal(string: amountText, locale: Locale(identifier: "en_US_POSIX")),
            let currency = json["currency"] as? String, let card = json["card_info"] as? [String: Any]
        else { throw Self.unreadable(path) }
        return SessionPayment(
            paymentID: id, status: status, orderToken: json["order_token"] as? String ?? orderToken,
            outTradeNo: json["out_trade_no"] as? String ?? "", amount: amount, currency: currency,
            cardInfo: try Self.cardInfo(card), wasReplayed: answer.replayed)
    }

    /// `GET /v1/sessions/{order_token}`: what the app needs to build the session's payment request
    /// (``ApplePayContext/paymentRequest(session:)``).
    public func session(orderToken: String) async throws(CheckoutError) -> OrderSession {
        try Self.checkOrderToken(orderToken)
        let path = "/v1/sessions/\(orderToken)"
        let json = try await send("GET", path, body: nil, idempotencyKey: nil).json
        let total = json["total"] as? [String: Any]
        guard let token = json["order_token"] as? String, let code = json["currency"] as? String,
            let currency = try? Currency(code: code), let amountText = json["amount"] as? String,
            let amount = try? Money(amountText, currency: currency), let country = json["country"] as? String,
            let merchantIdentifier = json["merchant_identifier"] as? String,
            let status = json["status"] as? String
        else { throw Self.unreadable(path, method: "GET") }
        return OrderSession(
            orderToken: token, outTradeNo: json["out_trade_no"] as? String ?? "", amount: amount, country: country,
            merchantIdentifier: merchantIdentifier,
            merchantName: total?["label"] as? String ?? json["merchant_name"] as? String ?? "",
            supportedNetworks: (json["supported_networks"] as? [String] ?? []).map(PaymentNetwork.init(rawValue:)),
            merchantCapabilities: (json["merchant_capabilities"] as? [String] ?? []).map(
                MerchantCapability.init(rawValue:)),
            status: status, expiresAt: json["expires_at"] as? String ?? "")
    }

    /// `POST /v1/sandbox/wallet/tokens`: a real-format token from the sandbox wallet for `amount`, paid with
    /// `card`. Sandbox only (`sandbox_only` with a production set-up; the gateway answers 404 there).
    public func sandboxWalletToken(amount: Money, card: SandboxCard) async throws(CheckoutError) -> PaymentToken {
        guard configuration.environment == .sandbox else {
            throw CheckoutError(
                code: CheckoutError.sandboxOnly, message: "the sandbox wallet exists only with sandbox credentials")
        }
        let body: [String: Any] = [
            "amount": amount.decimalString, "currency": amount.currency.code, "card": card.walletName,
        ]
        let answer = try await post(
            "/v1/sandbox/wallet/tokens", body: body, idempotencyKey: "wallet_" + UUID().uuidString)
        guard let token = answer.json["token"] as? [String: Any], let data = token["paymentData"] as? [String: Any],
            let method = token["paymentMethod"] as? [String: Any],
            let identifier = token["transactionIdentifier"] as? String,
            // The client SDK reads the gateway's answers with Foundation, as an app does.
            let paymentData = try? JSONSerialization.data(withJSONObject: data, options: [.sortedKeys])
        else { throw Self.unreadable("/v1/sandbox/wallet/tokens") }
        return PaymentToken(
            paymentData: paymentData,
            paymentMethod: PaymentMethod(
                type: PaymentMethodType(name: method["type"] as? String ?? ""),
                network: (method["network"] as? String).map(PaymentNetwork.init(rawValue:)),
                displayName: method["displayName"] as? String),
            transactionIdentifier: identifier)
    }

    // MARK: Requests

    struct Answer {
        var status: Int
        var json: [String: Any]
        var replayed: Bool
    }

    /// Sends a POST with its idempotency key.
    func post(_ path: String, body: [String: Any], idempotencyKey: String) async throws(CheckoutError) -> Answer {
        try await send("POST", path, body: body, idempotencyKey: idempotencyKey)
    }

    /// Sends a request, retrying a lost answer (with the same key); throws the gateway's error for a non-2xx
    /// answer.
    func send(
        _ method: String, _ path: String, body: [String: Any]?, idempotencyKey: String?
    ) async throws(CheckoutError) -> Answer {
        var request = URLRequest(url: configuration.gatewayURL.appendingPathComponent(String(path.dropFirst())))
        request.httpMethod = method
        if let body {
            // The client SDK writes the bodies it sends with Foundation, as an app does.
            guard let payload = try? JSONSerialization.data(withJSONObject: body, options: [.sortedKeys]) else {
                throw CheckoutError(code: "invalid_token", message: "the request body cannot be written as JSON")
            }
            request.httpBody = payload
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        request.timeoutInterval = configuration.requestTimeout
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        request.setValue(configuration.appID, forHTTPHeaderField: "X-Orchard-App-Id")
        request.setValue(configuration.appKey, forHTTPHeaderField: "X-Orchard-App-Key")
        if let idempotencyKey { request.setValue(idempotencyKey, forHTTPHeaderField: "Idempotency-Key") }
        var attempt = 0
        while true {
            attempt += 1
            let started = DispatchTime.now().uptimeNanoseconds
            do {
                let (data, response) = try await transport.send(request)
                let elapsed = DispatchTime.now().uptimeNanoseconds - started
                OrchardPaySDK.log(
                    "\(method) \(Self.redactedPath(path)) → \(response.statusCode) in \(Self.milliseconds(elapsed)) ms")
                // The client SDK reads the gateway's answers with Foundation, as an app does.
                let json = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
                if response.statusCode == 409, let error = json?["error"] as? [String: Any],
                    error["code"] as? String == "idempotency_in_flight", attempt <= configuration.retryLimit
                {
                    await sleep(seconds: configuration.retryDelay)
                    continue
                }
                guard (200..<300).contains(response.statusCode) else {
                    throw Self.gatewayError(status: response.statusCode, json: json, method: method, path: path)
                }
                guard let json else { throw Self.unreadable(path, method: method) }
                let replayed = response.value(forHTTPHeaderField: "Idempotent-Replayed") == "true"
                return Answer(status: response.statusCode, json: json, replayed: replayed)
            } catch let error as CheckoutError {
                throw error
            } catch {
                OrchardPaySDK.log(
                    "\(method) \(Self.redactedPath(path)) got no answer (attempt \(attempt) of \(configuration.retryLimit + 1)): \(Self.transportReason(error))"
                )
                guard attempt <= configuration.retryLimit else {
                    throw CheckoutError(
                        code: CheckoutError.networkError,
                        message:
                            "the gateway at \(configuration.gatewayURL.absoluteString) could not be reached: \(Self.transportReason(error))"
                    )
                }
                await sleep(seconds: configuration.retryDelay)
            }
        }
    }

    private func tokenObject(_ token: PaymentToken) throws(CheckoutError) -> [String: Any] {
        [
            "paymentData": try jsonObject(token.paymentData, what: "payment data"),
            "paymentMethod": [
                "displayName": token.paymentMethod.displayName ?? "",
                "network": token.paymentMethod.network?.rawValue ?? "",
                "type": token.paymentMethod.type.rawValue,
            ],
            "transactionIdentifier": token.transactionIdentifier,
        ]
    }

    private func jsonObject(_ data: Data, what: String) throws(CheckoutError) -> Any {
        // The client SDK reads the gateway's answers with Foundation, as an app does.
        guard let object = try? JSONSerialization.jsonObject(with: data) else {
            throw CheckoutError(code: "invalid_token", message: "the \(what) is not JSON")
        }
        return object
    }

    static func cardInfo(_ json: [String: Any]) throws(CheckoutError) -> CardInfo {
        func text(_ key: String) -> String { json[key] as? String ?? "" }
        func number(_ key: String) -> Int { (json[key] as? NSNumber)?.intValue ?? -1 }
        return CardInfo(
            bincode: text("bin_code"), lastFour: text("last_four"), issuer: text("issuer"),
            issuerZhTW: text("issuer_zh_tw"), bankID: text("bank_id"), funding: number("funding"),
            type: number("type"), level: text("level"), country: text("country"), countryCode: text("country_code"))
    }

    static func gatewayError(status: Int, json: [String: Any]?, method: String, path: String) -> CheckoutError {
        guard let error = json?["error"] as? [String: Any], let code = error["code"] as? String else {
            return CheckoutError(
                code: CheckoutError.invalidResponse,
                message: "the gateway answered \(status) to \(method) \(redactedPath(path)) without an error body",
                httpStatus: status)
        }
        return CheckoutError(
            code: code, message: error["message"] as? String ?? code, param: error["param"] as? String,
            httpStatus: status, requestID: error["request_id"] as? String)
    }

    static func unreadable(_ path: String, method: String = "POST") -> CheckoutError {
        CheckoutError(
            code: CheckoutError.invalidResponse,
            message: "the gateway's answer to \(method) \(redactedPath(path)) is not the documented JSON")
    }

    static func checkOrderToken(_ orderToken: String) throws(CheckoutError) {
        guard !orderToken.isEmpty, orderToken.count <= 64,
            orderToken.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") })
        else {
            throw CheckoutError(
                code: "invalid_order_token", message: "an order token is 1–64 letters, digits and _ (ot_…)",
                param: "order_token")
        }
    }

    /// The path with an order token shortened (`/v1/sessions/ot_9aK3…/pay`).
    static func redactedPath(_ path: String) -> String {
        path.split(separator: "/", omittingEmptySubsequences: false).map {
            $0.hasPrefix("ot_") && $0.count > 7 ? String($0.prefix(7)) + "…" : String($0)
        }.joined(separator: "/")
    }

    static func transportReason(_ error: any Error) -> String {
        if let error = error as? URLError {
            switch error.code {
            case .cannotConnectToHost: return "connection refused"
            case .timedOut: return "timed out"
            case .notConnectedToInternet: return "no network connection"
            case .networkConnectionLost: return "the connection was lost before the answer"
            case .cannotFindHost, .dnsLookupFailed: return "the host name does not resolve"
            default: return "URL error \(error.code.rawValue)"
            }
        }
        return String(describing: type(of: error))
    }

    static func milliseconds(_ nanoseconds: UInt64) -> UInt64 { nanoseconds / 1_000_000 }
}
