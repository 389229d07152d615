import Foundation

/// Stands in for the merchant's own backend, which holds the secret key and calls the gateway's server
/// routes. SANDBOX DEMO ONLY: a real app never contains a secret key; it asks its backend instead.
struct MerchantServer {
    var gatewayURL = DemoSettings.gatewayURL
    var secretKey = "sk_sandbox_REPLACE_ME"

    struct Session {
        var orderToken, merchantIdentifier, country, currency, amount: String
    }

    /// `POST /v1/sessions`.
    func createSession(amount: String, outTradeNo: String) async throws -> Session {
        let json = try await post(
            "/v1/sessions",
            [
                "out_trade_no": outTradeNo, "amount": amount, "currency": "TWD", "country": "TW", "subject": "Tea",
                "user_id": "demo-user",
            ])
        guard let token = json["order_token"] as? String, let merchant = json["merchant_identifier"] as? String,
            let country = json["country"] as? String, let currency = json["currency"] as? String,
            let amount = json["amount"] as? String
        else { throw URLError(.badServerResponse) }
        return Session(
            orderToken: token, merchantIdentifier: merchant, country: country, currency: currency, amount: amount)
    }

    /// `POST /v1/payments` (pay by prime); true when captured.
    func payPrime(_ prime: String, amount: String) async throws -> Bool {
        let json = try await post("/v1/payments", ["prime": prime, "amount": amount, "currency": "TWD"])
        return json["status"] as? String == "captured"
    }

    private func post(_ path: String, _ body: [String: Any]) async throws -> [String: Any] {
        var request = URLRequest(url: gatewayURL.appendingPathComponent(String(path.dropFirst())))
        request.httpMethod = "POST"
        request.setValue("Bearer \(secretKey)", forHTTPHeaderField: "Authorization")
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = try JSONSerialization.data(withJSONObject: body)
        let (data, _) = try await URLSession.shared.data(for: request)
        return (try JSONSerialization.jsonObject(with: data) as? [String: Any]) ?? [:]
    }
}
