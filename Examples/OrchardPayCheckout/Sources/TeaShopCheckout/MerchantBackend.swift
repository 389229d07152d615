import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The app's client of its merchant backend (Examples/merchant-backend/backend.py): the backend holds the
/// gateway's secret key, so the app never does; it pays primes and creates order sessions.
public struct MerchantBackend: Sendable {
    /// The backend's base URL.
    public var url: URL

    /// A client of the backend at `url`.
    public init(url: URL) { self.url = url }

    /// What `POST /orders/pay` answered.
    public struct PaidOrder: Sendable {
        /// Whether the gateway charged the prime.
        public var paid: Bool
        /// The payment (`pay_…`), when there is one.
        public var paymentID: String?
        /// The gateway's code when it refused (`card_declined` …).
        public var code: String?
    }

    /// An order session for the session flow (`POST /orders/session`).
    public struct OrderSession: Sendable {
        /// The order token the app pays.
        public var orderToken: String
        /// The merchant identifier for the payment request.
        public var merchantIdentifier: String
        /// The session's country and currency.
        public var country: String, currency: String
        /// The amount the session charges.
        public var amount: String
    }

    /// Has the backend pay `prime` for the order (`POST /orders/pay`).
    public func pay(prime: String, amount: Decimal, currency: String, orderNumber: String) async throws -> PaidOrder {
        let json = try await post(
            "orders/pay",
            ["prime": prime, "amount": "\(amount)", "currency": currency, "order_number": orderNumber])
        return PaidOrder(
            paid: json["paid"] as? Bool ?? false, paymentID: json["payment_id"] as? String, code: json["code"] as? String)
    }

    /// Has the backend create an order session for `amount` (`POST /orders/session`).
    public func session(amount: String, currency: String, outTradeNo: String) async throws -> OrderSession {
        let json = try await post("orders/session", ["amount": amount, "currency": currency, "out_trade_no": outTradeNo])
        guard let token = json["order_token"] as? String, let merchant = json["merchant_identifier"] as? String,
            let country = json["country"] as? String, let currency = json["currency"] as? String,
            let amount = json["amount"] as? String
        else { throw URLError(.badServerResponse) }
        return OrderSession(
            orderToken: token, merchantIdentifier: merchant, country: country, currency: currency, amount: amount)
    }

    private func post(_ path: String, _ body: [String: String]) async throws -> [String: Any] {
        var request = URLRequest(url: url.appendingPathComponent(path))
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = try JSONSerialization.data(withJSONObject: body)
        let data: Data = try await withCheckedThrowingContinuation { continuation in
            URLSession.shared.dataTask(with: request) { data, _, error in
                if let error { continuation.resume(throwing: error) } else { continuation.resume(returning: data ?? Data()) }
            }.resume()
        }
        return (try JSONSerialization.jsonObject(with: data) as? [String: Any]) ?? [:]
    }
}
